"""Session state: cwd, mode, config values, title and recorded history, and where it is kept.

History is what session/load replays: each prompt as a ``user_message_chunk``, then every update
the turn sent. A ``stream`` is recorded as one :class:`StreamRecord` (its chunks are
deterministic, so replay regenerates them) and history is capped at
:data:`MAX_HISTORY_ENTRIES`, so a flood cannot grow a session's memory without bound.

With a state directory (by default one under the user's cache directory, see
:func:`~baton.agents.scripted.flags.default_state_dir`) every session is also a JSON file there (written atomically after each
change), so a new agent process can load or resume it. Session ids from the client are checked
against :data:`SESSION_ID_PATTERN` before they name a file.
"""

from __future__ import annotations

import contextlib
import os
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import orjson

from baton.agents.scripted.options import AgentOptions, Catalog, Choice, SelectSpec

#: History entries kept per session; later updates are sent but not recorded.
MAX_HISTORY_ENTRIES: Final = 10_000

#: Session ids that may name a file in the state directory.
SESSION_ID_PATTERN: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")

#: Session files session/list reads from the state directory (in name order; later ones are
#: not listed): bounds the work one list request can cause.
MAX_LISTED_FILES: Final = 10_000

#: Session files a state directory keeps: creating a session beyond it deletes the least
#: recently written ones, so the default directory (shared by every run of the agent) cannot
#: grow without bound. Each file is one session's state, history capped as above.
MAX_KEPT_SESSION_FILES: Final = 1_000

ConfigValue = str | bool


@dataclass(frozen=True, slots=True)
class StreamRecord:
    """A ``stream`` in history: chunks 1 to ``count``."""

    count: int


HistoryEntry = dict[str, Any] | StreamRecord


@dataclass
class Session:
    """One session's state."""

    session_id: str
    cwd: str
    mode: str
    config: dict[str, ConfigValue]
    model: str
    title: str | None = None
    history: list[HistoryEntry] = field(default_factory=list)
    tool_calls: int = 0
    #: True once history reached :data:`MAX_HISTORY_ENTRIES` and stopped recording.
    history_full: bool = False
    #: What the client's last session/new, load or resume set up beyond cwd and MCP servers
    #: (see :mod:`~baton.agents.scripted.setup_params`).
    setup: dict[str, Any] = field(default_factory=dict)

    def next_tool_call_id(self) -> str:
        """A fresh tool call id, unique within the session (``call_1``, ``call_2``...)."""
        self.tool_calls += 1
        return f"call_{self.tool_calls}"

    def record(self, entry: HistoryEntry) -> None:
        """Append to history unless it is full."""
        if len(self.history) >= MAX_HISTORY_ENTRIES:
            self.history_full = True
            return
        self.history.append(entry)

    def to_json(self) -> dict[str, Any]:
        """The session as a JSON-ready dict (the state file's content)."""
        return {
            "sessionId": self.session_id,
            "cwd": self.cwd,
            "mode": self.mode,
            "model": self.model,
            "config": self.config,
            "title": self.title,
            "toolCalls": self.tool_calls,
            "history": [
                {"stream": entry.count} if isinstance(entry, StreamRecord) else entry
                for entry in self.history
            ],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Session:
        """Inverse of :meth:`to_json`. Raises ValueError on a malformed file."""
        try:
            history: list[HistoryEntry] = [
                StreamRecord(int(entry["stream"])) if "stream" in entry else dict(entry)
                for entry in data["history"]
            ]
            return cls(
                session_id=str(data["sessionId"]),
                cwd=str(data["cwd"]),
                mode=str(data["mode"]),
                model=str(data["model"]),
                config=dict(data["config"]),
                title=data["title"] if isinstance(data["title"], str) else None,
                history=history,
                tool_calls=int(data["toolCalls"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"malformed session file: {exc}") from exc

    def turns(self) -> int:
        """How many prompts history holds (each starts with its ``user_message_chunk``)."""
        return sum(1 for entry in self.history if _starts_turn(entry))

    def keep_turns(self, count: int) -> None:
        """Cut history after its first ``count`` turns (a fork at an earlier turn)."""
        seen = 0
        for index, entry in enumerate(self.history):
            if _starts_turn(entry):
                seen += 1
                if seen > count:
                    del self.history[index:]
                    return

    def copy_as(self, session_id: str, cwd: str) -> Session:
        """A fork: same state and history under a new id."""
        return Session(
            session_id=session_id,
            cwd=cwd,
            mode=self.mode,
            config=dict(self.config),
            model=self.model,
            title=self.title,
            history=list(self.history),
            tool_calls=self.tool_calls,
        )


def _starts_turn(entry: HistoryEntry) -> bool:
    return isinstance(entry, dict) and entry.get("sessionUpdate") == "user_message_chunk"


class ConfigError(Exception):
    """A set_mode or set_config_option the catalog does not allow; the message says why."""


class SessionShape:
    """Turns a session's state into the modes / models / configOptions objects of the options."""

    def __init__(self, options: AgentOptions) -> None:
        self._options = options
        self._catalog: Catalog = options.catalog
        #: The models on offer: the catalog's, until a Grok ``models_update`` replaces them.
        self._models: tuple[Choice, ...] = options.catalog.models
        #: The process default model (Grok's ``currentModelId``), moved by ``models_update``.
        self.default_model: str = options.catalog.current_model

    @property
    def models(self) -> tuple[Choice, ...]:
        """The models currently on offer."""
        return self._models

    def initial(self, session_id: str, cwd: str) -> Session:
        """A new session in the catalog's default state."""
        catalog = self._catalog
        config: dict[str, ConfigValue] = {}
        if catalog.effort is not None:
            config[catalog.effort.option_id] = catalog.effort.current
        if catalog.toggle is not None:
            config[catalog.toggle.option_id] = catalog.toggle.current
        spec = catalog.effort_for(self.default_model)
        if spec is not None:
            config[spec.option_id] = spec.current
        mode = catalog.modes[0].value if catalog.modes else ""
        return Session(session_id, cwd, mode, config, self.default_model)

    def model_effort(self, session: Session) -> tuple[SelectSpec, str] | None:
        """The session's current model's per-model reasoning selector and its value."""
        spec = self._catalog.effort_for(session.model)
        if spec is None:
            return None
        return spec, str(session.config.get(spec.option_id, spec.current))

    def grok_model_state(self, session: Session | None = None) -> dict[str, Any]:
        """The Grok catalog object (``modelState``, ``models`` and update params): the process
        default (or the session's model) and every model, each with its efforts in ``_meta``."""
        current = self.default_model if session is None else session.model
        models: list[dict[str, Any]] = []
        for model in self._models:
            entry = _without_none(
                {"modelId": model.value, "name": model.name, "description": model.description}
            )
            spec = self._catalog.effort_for(model.value)
            if spec is not None:
                effort = spec.current
                if session is not None and model.value == session.model:
                    effort = str(session.config.get(spec.option_id, spec.current))
                entry["_meta"] = {
                    "reasoningEfforts": [{"value": c.value, "name": c.name} for c in spec.values],
                    "reasoningEffort": effort,
                }
            models.append(entry)
        return {"currentModelId": current, "availableModels": models}

    def replace_models(self, model_ids: tuple[str, ...]) -> None:
        """Grok ``models_update``: offer exactly ``model_ids`` from now on (known ids keep their
        names and efforts, new ones are named by their id). The process default stays if still
        listed, else becomes the first id."""
        known = {model.value: model for model in self._models + self._catalog.models}
        self._models = tuple(known.get(value, Choice(value, value)) for value in model_ids)
        if self.default_model not in model_ids:
            self.default_model = model_ids[0]

    def offers_model(self, model_id: str) -> bool:
        """True when ``model_id`` is on offer."""
        return any(model.value == model_id for model in self._models)

    def catalog_model_entries(self) -> list[dict[str, Any]]:
        """The Cursor ``cursor/list_available_models`` entries: value, name and each model's
        own config options (its reasoning selector at its default)."""
        entries: list[dict[str, Any]] = []
        for model in self._models:
            entry: dict[str, Any] = {"value": model.value, "name": model.name}
            spec = self._catalog.effort_for(model.value)
            if spec is not None:
                entry["configOptions"] = [self._effort_option(spec, spec.current)]
            entries.append(entry)
        return entries

    def describe(self, session: Session) -> dict[str, Any]:
        """The fields of a session/new (or load, resume, fork) result, sessionId excluded."""
        options = self._options
        result: dict[str, Any] = {}
        if options.models_form in ("legacy", "both") and self._models:
            if options.model_extension == "grok":
                result["models"] = self.grok_model_state(session)
            else:
                result["models"] = {
                    "availableModels": [
                        _without_none(
                            {"modelId": m.value, "name": m.name, "description": m.description}
                        )
                        for m in self._models
                    ],
                    "currentModelId": session.model,
                }
        if options.modes and self._catalog.modes:
            result["modes"] = {
                "currentModeId": session.mode,
                "availableModes": [
                    _without_none({"id": m.value, "name": m.name, "description": m.description})
                    for m in self._catalog.modes
                ],
            }
        if options.config_options:
            result["configOptions"] = self.config_options(session)
        return result

    def config_options(self, session: Session) -> list[dict[str, Any]]:
        """The complete configOptions list, in catalog order."""
        catalog = self._catalog
        options: list[dict[str, Any]] = []
        if catalog.mode_option and catalog.modes and self._options.modes:
            options.append(
                self._select(
                    "mode",
                    catalog.mode_option_name,
                    catalog.mode_option_description,
                    "mode",
                    session.mode,
                    catalog.modes,
                )
            )
        if self._model_option_enabled():
            options.append(
                self._select(
                    "model",
                    "Model",
                    catalog.model_option_description,
                    "model",
                    session.model,
                    self._models,
                )
            )
            per_model = self.model_effort(session)
            if per_model is not None and self._options.model_extension == "cursor":
                options.append(self._effort_option(*per_model))
        if catalog.effort is not None:
            effort = catalog.effort
            options.append(
                self._select(
                    effort.option_id,
                    effort.name,
                    effort.description,
                    effort.category,
                    str(session.config[effort.option_id]),
                    effort.values,
                )
            )
        if catalog.toggle is not None:
            toggle = catalog.toggle
            option = self._head(toggle.option_id, toggle.name, toggle.description, toggle.category)
            option["type"] = "boolean"
            option["currentValue"] = bool(session.config[toggle.option_id])
            options.append(option)
        return options

    def set_mode(self, session: Session, mode_id: str) -> None:
        """Switch mode; raise ConfigError for a mode the catalog does not offer."""
        if mode_id not in {mode.value for mode in self._catalog.modes}:
            raise ConfigError(f"unknown mode {mode_id!r}")
        session.mode = mode_id

    def set_model(self, session: Session, model_id: str, effort: object = None) -> None:
        """Switch model (to another one: its per-model reasoning selector replaces the old one,
        at its default), then apply ``effort`` when given (Grok's ``_meta.reasoningEffort``).
        Raise ConfigError, changing nothing, for a model not on offer or an effort the model
        does not advertise."""
        if not self.offers_model(model_id):
            raise ConfigError(f"unknown model {model_id!r}")
        spec = self._catalog.effort_for(model_id)
        if effort is not None:
            if spec is None:
                raise ConfigError(f"model {model_id!r} has no reasoning efforts")
            if effort not in {choice.value for choice in spec.values}:
                raise ConfigError(f"{effort!r} is not a reasoning effort of {model_id!r}")
        if model_id != session.model:
            old = self._catalog.effort_for(session.model)
            if old is not None:
                session.config.pop(old.option_id, None)
            if spec is not None:
                session.config[spec.option_id] = spec.current
            session.model = model_id
        if spec is not None and isinstance(effort, str):
            session.config[spec.option_id] = effort

    def set_option(self, session: Session, config_id: str, value: object, kind: object) -> None:
        """Apply set_config_option; raise ConfigError when the id, type or value is wrong."""
        catalog = self._catalog
        if catalog.toggle is not None and config_id == catalog.toggle.option_id:
            if kind != "boolean" or not isinstance(value, bool):
                raise ConfigError(
                    f"{config_id!r} is a boolean option: send type 'boolean' and a boolean value"
                )
            session.config[config_id] = value
            return
        if kind is not None and kind == "boolean":
            raise ConfigError(f"{config_id!r} is not a boolean option")
        if not isinstance(value, str):
            raise ConfigError(f"{config_id!r} takes a string value id")
        if config_id == "mode" and catalog.mode_option and self._options.modes:
            self.set_mode(session, value)
        elif config_id == "model" and self._model_option_enabled():
            self.set_model(session, value)
        elif (per_model := self._cursor_effort(session)) is not None and (
            config_id == per_model.option_id
        ):
            if value not in {choice.value for choice in per_model.values}:
                raise ConfigError(f"{value!r} is not a value of {config_id!r}")
            session.config[config_id] = value
        elif catalog.effort is not None and config_id == catalog.effort.option_id:
            if value not in {choice.value for choice in catalog.effort.values}:
                raise ConfigError(f"{value!r} is not a value of {config_id!r}")
            session.config[config_id] = value
        else:
            raise ConfigError(f"unknown config option {config_id!r}")

    def legacy_models(self) -> bool:
        """True when the legacy models object (and session/set_model) is offered."""
        return self._options.models_form in ("legacy", "both") and bool(self._models)

    def _model_option_enabled(self) -> bool:
        return self._options.models_form in ("config", "both") and bool(self._models)

    def _cursor_effort(self, session: Session) -> SelectSpec | None:
        if self._options.model_extension != "cursor":
            return None
        per_model = self.model_effort(session)
        return per_model[0] if per_model is not None else None

    def _effort_option(self, spec: SelectSpec, current: str) -> dict[str, Any]:
        return self._select(
            spec.option_id, spec.name, spec.description, spec.category, current, spec.values
        )

    def _head(
        self, option_id: str, name: str, description: str | None, category: str
    ) -> dict[str, Any]:
        option: dict[str, Any] = {self._options.config_key: option_id, "name": name}
        if description is not None:
            option["description"] = description
        option["category"] = category
        return option

    def _select(
        self,
        option_id: str,
        name: str,
        description: str | None,
        category: str,
        current: str,
        choices: tuple[Choice, ...],
    ) -> dict[str, Any]:
        option = self._head(option_id, name, description, category)
        option["type"] = "select"
        option["currentValue"] = current
        option["options"] = [
            _without_none({"value": c.value, "name": c.name, "description": c.description})
            for c in choices
        ]
        return option


def _without_none(data: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in data.items() if value is not None}


class SessionStore:
    """Sessions by id: in memory, and in the state directory when one is configured."""

    def __init__(self, state_dir: Path | None) -> None:
        self._dir = state_dir
        self._sessions: dict[str, Session] = {}
        self._counter = 0

    def new_id(self) -> str:
        """A fresh id: ``session-1``, ``session-2``... in memory; a UUID with a state directory
        (unique across processes)."""
        if self._dir is not None:
            self._prune(self._dir)
            return str(uuid.uuid4())
        self._counter += 1
        return f"session-{self._counter}"

    def get(self, session_id: str) -> Session | None:
        """The session, from memory or the state directory."""
        session = self._sessions.get(session_id)
        if session is not None or self._dir is None:
            return session
        path = self._path(session_id)
        if path is None or not path.is_file():
            return None
        try:
            session = Session.from_json(orjson.loads(path.read_bytes()))
        except (OSError, ValueError):
            return None
        self._sessions[session_id] = session
        return session

    def put(self, session: Session) -> None:
        """Keep (and persist) the session."""
        self._sessions[session.session_id] = session
        self.save(session)

    def save(self, session: Session) -> None:
        """Persist the session's current state (no-op without a state directory)."""
        path = self._path(session.session_id)
        if path is None:
            return
        temporary = path.with_name(path.name + ".tmp")
        temporary.write_bytes(orjson.dumps(session.to_json()))
        os.replace(temporary, path)

    def loaded(self) -> list[Session]:
        """The sessions held in memory, in creation order."""
        return list(self._sessions.values())

    def forget(self, session_id: str) -> None:
        """Drop the session from memory (session/close); its file stays."""
        self._sessions.pop(session_id, None)

    def delete(self, session_id: str) -> None:
        """Drop the session everywhere (session/delete)."""
        self._sessions.pop(session_id, None)
        path = self._path(session_id)
        if path is not None:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()

    def all(self) -> list[Session]:
        """Every known session: memory first (in creation order), then the state directory."""
        sessions = dict(self._sessions)
        for session in self._stored():
            sessions.setdefault(session.session_id, session)
        return list(sessions.values())

    def _stored(self) -> Iterator[Session]:
        if self._dir is None:
            return
        paths = sorted(self._dir.glob("*.json"))[:MAX_LISTED_FILES]
        for path in paths:
            try:
                yield Session.from_json(orjson.loads(path.read_bytes()))
            except (OSError, ValueError):
                continue

    @staticmethod
    def _prune(directory: Path) -> None:
        """Delete the least recently written session files beyond one less than
        :data:`MAX_KEPT_SESSION_FILES` (room for the session about to be made)."""
        try:
            paths = list(directory.glob("*.json"))
        except OSError:
            return
        excess = len(paths) - (MAX_KEPT_SESSION_FILES - 1)
        if excess <= 0:
            return

        def written(path: Path) -> float:
            try:
                return path.stat().st_mtime
            except OSError:
                return 0.0

        for path in sorted(paths, key=written)[:excess]:
            with contextlib.suppress(OSError):
                path.unlink()

    def _path(self, session_id: str) -> Path | None:
        if self._dir is None or not SESSION_ID_PATTERN.match(session_id):
            return None
        return self._dir / f"{session_id}.json"
