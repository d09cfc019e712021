"""A session's native state: modes, config options and the legacy models object.

Everything keeps the provider's exact ids and values: Baton never renames a mode, a config
option or a model. Parsing is driven by what the session actually sent, never by an expected
shape (the real adapters disagree: Claude sends ``models``, ``modes`` and ``configOptions``,
Codex ``modes`` and ``configOptions`` with a ``thought_level`` option, fast-agent ``modes`` only).

Tolerance follows the schema's rules: an invalid entry is skipped (and, for config options,
its id is listed in :attr:`SessionState.ignored_config_options` when it has one), an invalid
container is absent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final, Literal, cast

from baton.errors import CapabilityNotAdvertised, ChoiceNotAdvertised, MalformedResult

if TYPE_CHECKING:
    from baton.wire.acp_types import LoadSessionResponse, NewSessionResponse, ResumeSessionResponse

    #: What session/new, load and resume answer (the fields the state is read from).
    SetupResponse = NewSessionResponse | LoadSessionResponse | ResumeSessionResponse

#: Select option type and boolean option type, as the wire spells them.
SELECT: Final = "select"
BOOLEAN: Final = "boolean"

#: Categories the schema names. Others (``thinking``...) are kept as strings too.
STANDARD_CATEGORIES: Final = ("mode", "model", "model_config", "thought_level")

ConfigType = Literal["select", "boolean"]
ConfigValue = str | bool


@dataclass(frozen=True, slots=True)
class SessionMode:
    """One advertised mode, with its exact provider id."""

    id: str
    name: str
    description: str | None = None


@dataclass(frozen=True, slots=True)
class ModeState:
    """``modes``: the current mode and the ones the session offers."""

    current_mode_id: str
    available: tuple[SessionMode, ...]

    def ids(self) -> tuple[str, ...]:
        """The advertised mode ids, in the agent's order."""
        return tuple(mode.id for mode in self.available)


@dataclass(frozen=True, slots=True)
class SelectChoice:
    """One value of a select option. ``group``/``group_name`` are set for grouped options."""

    value: str
    name: str
    description: str | None = None
    group: str | None = None
    group_name: str | None = None


@dataclass(frozen=True, slots=True)
class ConfigOption:
    """One config option. ``type`` is ``select`` (``current_value`` a value id, ``choices`` set)
    or ``boolean`` (``current_value`` a bool, no choices). ``category`` is verbatim."""

    id: str
    name: str
    type: ConfigType
    current_value: ConfigValue
    choices: tuple[SelectChoice, ...] = ()
    category: str | None = None
    description: str | None = None
    grouped: bool = False

    def values(self) -> tuple[str, ...]:
        """The advertised value ids of a select option (empty for a boolean one)."""
        return tuple(choice.value for choice in self.choices)

    def accepts(self, value: object) -> bool:
        """Whether ``value`` is a value this option advertised (type-exact)."""
        if self.type == BOOLEAN:
            return isinstance(value, bool)
        return isinstance(value, str) and value in self.values()


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """One model of the legacy ``models`` object."""

    model_id: str
    name: str
    description: str | None = None


@dataclass(frozen=True, slots=True)
class ModelState:
    """The legacy ``models`` object (``availableModels``, ``currentModelId``)."""

    current_model_id: str | None
    available: tuple[ModelInfo, ...]

    def ids(self) -> tuple[str, ...]:
        """The advertised model ids, in the agent's order."""
        return tuple(model.model_id for model in self.available)


@dataclass(frozen=True, slots=True)
class SessionState:
    """What a session advertised about itself."""

    modes: ModeState | None = None
    config_options: tuple[ConfigOption, ...] = ()
    models: ModelState | None = None
    #: Ids of config options skipped because their shape is not one Baton models (an unknown
    #: ``type``, a select without valid choices, a repeated id).
    ignored_config_options: tuple[str, ...] = ()

    def config_option(self, config_id: str) -> ConfigOption | None:
        """The option with exactly this id, if advertised."""
        for option in self.config_options:
            if option.id == config_id:
                return option
        return None

    def options_in_category(self, category: str) -> tuple[ConfigOption, ...]:
        """Options whose category is exactly ``category``, in the agent's order."""
        return tuple(option for option in self.config_options if option.category == category)

    def with_config_options(self, options: tuple[ConfigOption, ...]) -> SessionState:
        """A copy with ``options`` as the complete config option list."""
        return replace(self, config_options=options)

    def with_current_mode(self, mode_id: str) -> SessionState:
        """A copy whose current mode is ``mode_id`` (after a confirmed set_mode)."""
        if self.modes is None:
            return self
        return replace(self, modes=replace(self.modes, current_mode_id=mode_id))

    def with_current_model(self, model_id: str) -> SessionState:
        """A copy whose legacy current model is ``model_id`` (after a confirmed set_model)."""
        if self.models is None:
            return self
        return replace(self, models=replace(self.models, current_model_id=model_id))


def _opt_text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def parse_modes(raw: object) -> ModeState | None:
    """Read ``modes``; None when absent or without a string ``currentModeId``."""
    if not isinstance(raw, Mapping) or not isinstance(raw.get("currentModeId"), str):
        return None
    modes: list[SessionMode] = []
    entries = raw.get("availableModes")
    for entry in entries if isinstance(entries, list) else ():
        if isinstance(entry, Mapping) and isinstance(entry.get("id"), str):
            name = entry.get("name")
            modes.append(
                SessionMode(
                    id=entry["id"],
                    name=name if isinstance(name, str) else entry["id"],
                    description=_opt_text(entry.get("description")),
                )
            )
    return ModeState(current_mode_id=raw["currentModeId"], available=tuple(modes))


def _choice(raw: object, group: str | None, group_name: str | None) -> SelectChoice | None:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("value"), str):
        return None
    name = raw.get("name")
    return SelectChoice(
        value=raw["value"],
        name=name if isinstance(name, str) else raw["value"],
        description=_opt_text(raw.get("description")),
        group=group,
        group_name=group_name,
    )


def _select_choices(raw: object) -> tuple[tuple[SelectChoice, ...], bool]:
    choices: list[SelectChoice] = []
    grouped = False
    for entry in raw if isinstance(raw, list) else ():
        if isinstance(entry, Mapping) and isinstance(entry.get("options"), list):
            group = entry.get("group")
            if not isinstance(group, str):
                group = entry.get("groupId")  # the v2 draft's name
            if not isinstance(group, str):
                continue
            grouped = True
            for inner in entry["options"]:
                choice = _choice(inner, group, _opt_text(entry.get("name")))
                if choice is not None:
                    choices.append(choice)
        else:
            choice = _choice(entry, None, None)
            if choice is not None:
                choices.append(choice)
    return tuple(choices), grouped


def config_option_id(raw: Mapping[str, Any]) -> str | None:
    """A config option's id: ``id`` (the schema's and the adapters' name), else ``configId``."""
    for key in ("id", "configId"):
        value = raw.get(key)
        if isinstance(value, str):
            return value
    return None


def parse_config_option(raw: object) -> ConfigOption | None:
    """Read one config option; None when its shape is not a select or boolean option."""
    if not isinstance(raw, Mapping):
        return None
    option_id = config_option_id(raw)
    if option_id is None:
        return None
    name = raw.get("name")
    common: dict[str, Any] = {
        "id": option_id,
        "name": name if isinstance(name, str) else option_id,
        "category": _opt_text(raw.get("category")),
        "description": _opt_text(raw.get("description")),
    }
    kind = raw.get("type")
    current = raw.get("currentValue")
    if kind == BOOLEAN:
        if not isinstance(current, bool):
            return None
        return ConfigOption(type=BOOLEAN, current_value=current, **common)
    if kind == SELECT:
        if not isinstance(current, str):
            return None
        choices, grouped = _select_choices(raw.get("options"))
        if not choices:
            return None
        return ConfigOption(
            type=SELECT, current_value=current, choices=choices, grouped=grouped, **common
        )
    return None


def parse_config_options(raw: object) -> tuple[tuple[ConfigOption, ...], tuple[str, ...]]:
    """Read a ``configOptions`` list: (options kept, ids of entries skipped)."""
    options: list[ConfigOption] = []
    ignored: list[str] = []
    seen: set[str] = set()
    for entry in raw if isinstance(raw, list) else ():
        option = parse_config_option(entry)
        if option is None or option.id in seen:
            skipped = config_option_id(entry) if isinstance(entry, Mapping) else None
            if skipped is not None:
                ignored.append(skipped)
            continue
        seen.add(option.id)
        options.append(option)
    return tuple(options), tuple(ignored)


def parse_models(raw: object) -> ModelState | None:
    """Read the legacy ``models`` object; None when absent or without a list of models."""
    if not isinstance(raw, Mapping) or not isinstance(raw.get("availableModels"), list):
        return None
    models: list[ModelInfo] = []
    for entry in raw["availableModels"]:
        if isinstance(entry, Mapping) and isinstance(entry.get("modelId"), str):
            name = entry.get("name")
            models.append(
                ModelInfo(
                    model_id=entry["modelId"],
                    name=name if isinstance(name, str) else entry["modelId"],
                    description=_opt_text(entry.get("description")),
                )
            )
    return ModelState(
        current_model_id=_opt_text(raw.get("currentModelId")), available=tuple(models)
    )


def parse_session_state(result: Mapping[str, Any]) -> SessionState:
    """Read modes, config options and legacy models from a session/new|load|resume result.
    Every field is checked as it is parsed; the typed view lets mypy check the names."""
    answer = cast("SetupResponse", result)
    # Indexed, not .get: mypy checks an indexed name.
    options, ignored = parse_config_options(
        answer["configOptions"] if "configOptions" in answer else None  # noqa: SIM401
    )
    return SessionState(
        modes=parse_modes(answer["modes"] if "modes" in answer else None),  # noqa: SIM401
        config_options=options,
        models=parse_models(result.get("models")),  # unstable (not in the pinned schema)
        ignored_config_options=ignored,
    )


@dataclass(frozen=True, slots=True)
class NewSessionResult:
    """A parsed ``session/new`` answer."""

    session_id: str
    state: SessionState


def parse_new_session_result(result: object) -> NewSessionResult:
    """Parse ``session/new``. Raises :class:`MalformedResult` without a string sessionId."""
    if not isinstance(result, Mapping) or not isinstance(result.get("sessionId"), str):
        raise MalformedResult("the session/new result carries no string sessionId")
    answer = cast("NewSessionResponse", result)
    return NewSessionResult(session_id=answer["sessionId"], state=parse_session_state(result))


def parse_attached_session_result(result: object, method: str) -> SessionState:
    """Parse a ``session/load`` or ``session/resume`` answer (both carry no sessionId). A null
    result is an empty state; anything else that is not an object is malformed."""
    if result is None:
        return SessionState()
    if not isinstance(result, Mapping):
        raise MalformedResult(f"the {method} result is not an object")
    return parse_session_state(result)


@dataclass(frozen=True, slots=True)
class ConfigConfirmation:
    """What a ``session/set_config_option`` answer says about the requested value.

    ``confirmed`` is true only when the answer carries a complete ``configOptions`` list in
    which the option reports exactly the requested value; anything else is ambiguous.
    """

    config_id: str
    requested: ConfigValue
    confirmed: bool
    complete: bool
    reported: ConfigValue | None
    options: tuple[ConfigOption, ...]
    reason: str


def parse_set_config_option_response(
    result: object, config_id: str, value: ConfigValue
) -> ConfigConfirmation:
    """Say whether a set_config_option answer confirms ``value`` for ``config_id``."""

    def verdict(
        confirmed: bool,
        complete: bool,
        reported: ConfigValue | None,
        options: tuple[ConfigOption, ...],
        reason: str,
    ) -> ConfigConfirmation:
        return ConfigConfirmation(config_id, value, confirmed, complete, reported, options, reason)

    raw = result.get("configOptions") if isinstance(result, Mapping) else None
    if not isinstance(raw, list):
        return verdict(False, False, None, (), "the answer carries no configOptions list")
    options, _ignored = parse_config_options(raw)
    option = next((o for o in options if o.id == config_id), None)
    if option is None:
        return verdict(False, True, None, options, "the answer does not list the option")
    reported = option.current_value
    if type(reported) is type(value) and reported == value:
        return verdict(True, True, reported, options, "the answer reports the requested value")
    return verdict(False, True, reported, options, "the answer reports a different value")


def require_mode(state: SessionState, mode_id: str) -> None:
    """Raise unless the session advertised modes and ``mode_id`` is one of them exactly."""
    if state.modes is None:
        raise CapabilityNotAdvertised("modes", "session/set_mode")
    if mode_id not in state.modes.ids():
        raise ChoiceNotAdvertised("mode", mode_id, state.modes.ids())


def require_config_value(state: SessionState, config_id: str, value: ConfigValue) -> ConfigOption:
    """Return the option ``config_id`` after checking ``value`` is advertised for it (a bool
    for a boolean option, one of the exact value ids for a select option)."""
    option = state.config_option(config_id)
    if option is None:
        ids = tuple(o.id for o in state.config_options)
        raise ChoiceNotAdvertised("config option", config_id, ids)
    if not option.accepts(value):
        advertised = ("true", "false") if option.type == BOOLEAN else option.values()
        raise ChoiceNotAdvertised(f"value for config option {config_id!r}", value, advertised)
    return option


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """One entry of ``session/list``."""

    session_id: str
    cwd: str
    title: str | None = None
    updated_at: str | None = None
    additional_directories: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SessionList:
    """One page of ``session/list``; ``next_cursor`` is None on the last page."""

    sessions: tuple[SessionInfo, ...]
    next_cursor: str | None = None


def parse_list_sessions_result(result: object) -> SessionList:
    """Parse ``session/list``; entries without a string sessionId and cwd are skipped."""
    if not isinstance(result, Mapping) or not isinstance(result.get("sessions"), list):
        raise MalformedResult("the session/list result carries no sessions list")
    sessions: list[SessionInfo] = []
    for entry in result["sessions"]:
        if not isinstance(entry, Mapping):
            continue
        session_id, cwd = entry.get("sessionId"), entry.get("cwd")
        if not isinstance(session_id, str) or not isinstance(cwd, str):
            continue
        dirs = entry.get("additionalDirectories")
        sessions.append(
            SessionInfo(
                session_id=session_id,
                cwd=cwd,
                title=_opt_text(entry.get("title")),
                updated_at=_opt_text(entry.get("updatedAt")),
                additional_directories=tuple(
                    d for d in (dirs if isinstance(dirs, list) else ()) if isinstance(d, str)
                ),
            )
        )
    return SessionList(tuple(sessions), _opt_text(result.get("nextCursor")))
