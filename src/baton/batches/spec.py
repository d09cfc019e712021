"""A batch spec: tasks, agents, their matrix and the per-run settings, read from TOML or JSONL.

The format is documented in docs/batches.md, with its JSON schema in
docs/batch-spec.schema.json (a test keeps the two in step with this parser). A spec is read
into frozen dataclasses whose :meth:`BatchSpec.to_json` is its canonical form: the form the
store keeps and :attr:`BatchSpec.digest` (the ``spec hash`` of the batch record) is taken of.

Every refusal is a :class:`~baton.errors.BatchSpecInvalid` naming the file, the JSONL line
and the field (``tasks[2].prompt``), never a traceback. Relative paths (``repo``, ``cwd``,
``attachments``) are resolved against the spec file's directory, once, when it is read.
"""

from __future__ import annotations

import hashlib
import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TypeVar

import orjson

from baton.errors import BatchSpecInvalid
from baton.runtime.permissions.policies import POLICIES, PolicyName
from baton.wire.version import PROTOCOL_CHOICES

#: The largest spec file read (bytes): a spec lists prompts and settings, not data; protects
#: the reader's memory from a wrong file (a log, a dataset) passed by mistake.
MAX_SPEC_BYTES: Final = 16 * 1024 * 1024
#: The most cells (tasks x agents x repeats) one batch may have: each is a row in the store
#: and a line of the table; protects the store and every listing from a typo'd ``repeats``.
MAX_BATCH_CELLS: Final = 100_000
#: The most repeats of each (task, agent) pair.
MAX_REPEATS: Final = 10_000
#: The longest prompt of one task (characters), as ``baton run -`` reads from stdin.
MAX_PROMPT_CHARS: Final = 4 * 1024 * 1024
#: Task and agent ids: short names that show in the table, the export and branch names.
ID_PATTERN: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
#: Workspaces a task may ask for: ``worktree`` (the default for a ``repo``), ``none`` (the
#: directory as it is; the default for a ``cwd``).
WORKSPACES: Final = ("worktree", "none")

_BATCH_KEYS: Final = ("name", "max_cost")
_RUN_KEYS: Final = (
    "policy",
    "allow_unattended",
    "idle_timeout",
    "timeout",
    "require_clean",
)
_MATRIX_KEYS: Final = ("tasks", "agents", "repeats")
_TASK_KEYS: Final = ("id", "prompt", "repo", "cwd", "base", "attachments", "workspace")
_AGENT_KEYS: Final = (
    "id",
    "profile",
    "command",
    "env",
    "mode",
    "model",
    "effort",
    "options",
    "protocol",
    "policy",
)
#: The sections of a spec and the keys each takes (the JSON schema lists the same).
SECTIONS: Final[Mapping[str, tuple[str, ...]]] = {
    "batch": _BATCH_KEYS,
    "run": _RUN_KEYS,
    "matrix": _MATRIX_KEYS,
    "tasks": _TASK_KEYS,
    "agents": _AGENT_KEYS,
}
#: JSONL lines name their section in the singular for tasks and agents (one per line).
_JSONL_SECTIONS: Final = {"batch": "batch", "run": "run", "matrix": "matrix", "task": "tasks"}
_JSONL_SECTIONS_ALL: Final = {**_JSONL_SECTIONS, "agent": "agents"}

_Item = TypeVar("_Item", "TaskSpec", "AgentSpec")


@dataclass(frozen=True, slots=True)
class TaskSpec:
    """One task: a prompt and where it runs."""

    id: str
    prompt: str
    #: A git repository: each cell gets a worktree of it (``workspace = "worktree"``).
    repo: str | None = None
    #: A directory used as it is (``workspace = "none"``), when there is no ``repo``.
    cwd: str | None = None
    #: The commit a worktree starts from (default ``HEAD``).
    base: str | None = None
    attachments: tuple[str, ...] = ()
    workspace: str = "none"

    def to_json(self) -> dict[str, Any]:
        """The canonical form."""
        return {
            "id": self.id,
            "prompt": self.prompt,
            "repo": self.repo,
            "cwd": self.cwd,
            "base": self.base,
            "attachments": list(self.attachments),
            "workspace": self.workspace,
        }


@dataclass(frozen=True, slots=True)
class AgentSpec:
    """One agent: a profile or a command, and its settings."""

    id: str
    profile: str | None = None
    command: str | None = None
    env: tuple[str, ...] = ()
    mode: str | None = None
    model: str | None = None
    effort: str | None = None
    options: Mapping[str, str] = field(default_factory=dict)
    protocol: str | None = None
    #: This agent's permission policy, over the spec's ``[run] policy``.
    policy: PolicyName | None = None

    def to_json(self) -> dict[str, Any]:
        """The canonical form."""
        return {
            "id": self.id,
            "profile": self.profile,
            "command": self.command,
            "env": list(self.env),
            "mode": self.mode,
            "model": self.model,
            "effort": self.effort,
            "options": dict(sorted(self.options.items())),
            "protocol": self.protocol,
            "policy": self.policy,
        }


@dataclass(frozen=True, slots=True)
class RunSettings:
    """What every run of the batch gets: its policy and budget."""

    policy: PolicyName = "ask"
    allow_unattended: bool = False
    #: The idle bound (seconds); None: the profile's, else Baton's default.
    idle_timeout: float | None = None
    #: The absolute bound of each run (seconds); None: none.
    timeout: float | None = None
    require_clean: bool = False

    def to_json(self) -> dict[str, Any]:
        """The canonical form."""
        return {
            "policy": self.policy,
            "allow_unattended": self.allow_unattended,
            "idle_timeout": self.idle_timeout,
            "timeout": self.timeout,
            "require_clean": self.require_clean,
        }


@dataclass(frozen=True, slots=True)
class Cell:
    """One cell of the matrix: a task, an agent and a repeat number (from 1)."""

    index: int
    task: str
    agent: str
    repeat: int


@dataclass(frozen=True, slots=True)
class BatchSpec:
    """A whole spec, read and checked (see the module docstring)."""

    tasks: tuple[TaskSpec, ...]
    agents: tuple[AgentSpec, ...]
    repeats: int = 1
    run: RunSettings = field(default_factory=RunSettings)
    name: str | None = None
    #: Stop starting cells once the reported cost reaches this (the agents' currency).
    max_cost: float | None = None

    def cells(self) -> list[Cell]:
        """The matrix, in order: each task, each agent, each repeat."""
        cells: list[Cell] = []
        for task in self.tasks:
            for agent in self.agents:
                for repeat in range(1, self.repeats + 1):
                    cells.append(Cell(len(cells), task.id, agent.id, repeat))
        return cells

    def task(self, task_id: str) -> TaskSpec:
        """The task ``task_id``."""
        return next(task for task in self.tasks if task.id == task_id)

    def agent(self, agent_id: str) -> AgentSpec:
        """The agent ``agent_id``."""
        return next(agent for agent in self.agents if agent.id == agent_id)

    def to_json(self) -> dict[str, Any]:
        """The canonical form (what the store keeps; :meth:`from_json` reads it back)."""
        return {
            "batch": {"name": self.name, "max_cost": self.max_cost},
            "run": self.run.to_json(),
            "matrix": {"repeats": self.repeats},
            "tasks": [task.to_json() for task in self.tasks],
            "agents": [agent.to_json() for agent in self.agents],
        }

    @property
    def digest(self) -> str:
        """``sha256:`` of the canonical form: two specs with the same digest run the same."""
        canonical = orjson.dumps(self.to_json(), option=orjson.OPT_SORT_KEYS)
        return "sha256:" + hashlib.sha256(canonical).hexdigest()

    @classmethod
    def from_json(cls, value: Mapping[str, Any], *, source: str = "spec") -> BatchSpec:
        """The spec a canonical form (or any spec document as a mapping) describes."""
        return parse_document(value, source=source, base_dir=None)


def load_spec(path: str | os.PathLike[str]) -> BatchSpec:
    """Read and check the spec file at ``path`` (``.jsonl``/``.ndjson``: JSONL; else TOML)."""
    where = Path(path)
    try:
        with where.open("rb") as handle:
            data = handle.read(MAX_SPEC_BYTES + 1)
    except OSError as exc:
        raise BatchSpecInvalid(f"cannot read the batch spec {where}: {exc.strerror}") from exc
    if len(data) > MAX_SPEC_BYTES:
        raise BatchSpecInvalid(f"{where}: larger than {MAX_SPEC_BYTES} bytes")
    base_dir = where.resolve().parent
    if where.suffix in (".jsonl", ".ndjson"):
        return parse_jsonl(data, source=str(where), base_dir=base_dir)
    return parse_toml(data, source=str(where), base_dir=base_dir)


def parse_toml(data: bytes, *, source: str, base_dir: Path | None) -> BatchSpec:
    """A TOML spec (see docs/batches.md)."""
    try:
        document = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise BatchSpecInvalid(f"{source}: not UTF-8 text") from exc
    except tomllib.TOMLDecodeError as exc:
        raise BatchSpecInvalid(f"{source}: not valid TOML: {exc}") from exc
    return parse_document(document, source=source, base_dir=base_dir)


def parse_jsonl(data: bytes, *, source: str, base_dir: Path | None) -> BatchSpec:
    """A JSONL spec: one object per line, each ``{"SECTION": {...}}`` with SECTION one of
    ``batch``, ``run``, ``matrix`` (at most once each), ``task`` or ``agent``."""
    document: dict[str, Any] = {"tasks": [], "agents": []}
    lines: dict[str, int] = {}
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        where = f"{source}:{number}"
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise BatchSpecInvalid(f"{where}: not a JSON object: {exc}") from exc
        if not isinstance(value, dict) or len(value) != 1:
            raise BatchSpecInvalid(
                f"{where}: each line is one object with one key: {', '.join(_JSONL_SECTIONS_ALL)}"
            )
        [(key, body)] = value.items()
        section = _JSONL_SECTIONS_ALL.get(key)
        if section is None:
            raise BatchSpecInvalid(
                f"{where}: unknown section {key!r}; one of {', '.join(_JSONL_SECTIONS_ALL)}"
            )
        if section in ("tasks", "agents"):
            lines[f"{section}[{len(document[section])}]"] = number
            document[section].append(body)
        else:
            if section in document:
                raise BatchSpecInvalid(f"{where}: a second {key!r} line")
            lines[section] = number
            document[section] = body
    try:
        return parse_document(document, source=source, base_dir=base_dir)
    except BatchSpecInvalid as exc:
        # Name the line of the section the error is about.
        field_path = exc.message.removeprefix(f"{source}: ").split(":", 1)[0]
        head = field_path.split(".", 1)[0]
        if head in lines:
            detail = exc.message.split(": ", 1)[1]
            raise BatchSpecInvalid(f"{source}:{lines[head]}: {detail}") from None
        raise


def parse_document(document: Mapping[str, Any], *, source: str, base_dir: Path | None) -> BatchSpec:
    """A spec from its parsed document (TOML's tables, or the JSONL lines gathered)."""
    reader = _Reader(source, base_dir)
    unknown = sorted(set(document) - set(SECTIONS))
    if unknown:
        raise reader.error(unknown[0], f"unknown section; one of {', '.join(SECTIONS)}")
    batch = reader.table(document, "batch")
    run = reader.table(document, "run")
    matrix = reader.table(document, "matrix")
    tasks = tuple(
        reader.task(item, f"tasks[{i}]") for i, item in enumerate(reader.list_of(document, "tasks"))
    )
    agents = tuple(
        reader.agent(item, f"agents[{i}]")
        for i, item in enumerate(reader.list_of(document, "agents"))
    )
    if not tasks:
        raise reader.error("tasks", "a batch needs at least one task")
    if not agents:
        raise reader.error("agents", "a batch needs at least one agent")
    reader.unique(tasks, "tasks")
    reader.unique(agents, "agents")
    tasks = reader.select(tasks, matrix, "tasks")
    agents = reader.select(agents, matrix, "agents")
    repeats = reader.integer(
        matrix, "repeats", "matrix.repeats", default=1, low=1, high=MAX_REPEATS
    )
    if len(tasks) * len(agents) * repeats > MAX_BATCH_CELLS:
        raise reader.error(
            "matrix",
            f"{len(tasks)} tasks x {len(agents)} agents x {repeats} repeats is more than "
            f"{MAX_BATCH_CELLS} cells",
        )
    max_cost = reader.number(batch, "max_cost", "batch.max_cost")
    if max_cost is not None and max_cost < 0:
        raise reader.error("batch.max_cost", "must be 0 or more")
    name = reader.text(batch, "name", "batch.name")
    return BatchSpec(
        tasks=tasks,
        agents=agents,
        repeats=repeats,
        run=reader.run_settings(run),
        name=name,
        max_cost=max_cost,
    )


class _Reader:
    """Field readers that name the field they refuse."""

    def __init__(self, source: str, base_dir: Path | None) -> None:
        self.source = source
        self.base_dir = base_dir

    def error(self, where: str, message: str) -> BatchSpecInvalid:
        return BatchSpecInvalid(f"{self.source}: {where}: {message}")

    def table(self, document: Mapping[str, Any], name: str) -> Mapping[str, Any]:
        value = document.get(name, {})
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise self.error(name, "must be a table (an object)")
        self.known(value, SECTIONS[name], name)
        return value

    def known(self, value: Mapping[str, Any], keys: Sequence[str], where: str) -> None:
        unknown = sorted(set(value) - set(keys))
        if unknown:
            raise self.error(f"{where}.{unknown[0]}", f"unknown field; one of {', '.join(keys)}")

    def list_of(self, document: Mapping[str, Any], name: str) -> list[Mapping[str, Any]]:
        value = document.get(name, [])
        if not isinstance(value, list):
            raise self.error(name, "must be a list of tables ([[tasks]] in TOML)")
        for index, item in enumerate(value):
            if not isinstance(item, Mapping):
                raise self.error(f"{name}[{index}]", "must be a table (an object)")
        return value

    def text(
        self, value: Mapping[str, Any], key: str, where: str, *, required: bool = False
    ) -> str | None:
        found = value.get(key)
        if found is None:
            if required:
                raise self.error(where, "is required")
            return None
        if not isinstance(found, str) or not found:
            raise self.error(where, "must be a non-empty string")
        return found

    def boolean(self, value: Mapping[str, Any], key: str, where: str) -> bool:
        found = value.get(key, False)
        if not isinstance(found, bool):
            raise self.error(where, "must be true or false")
        return found

    def number(self, value: Mapping[str, Any], key: str, where: str) -> float | None:
        found = value.get(key)
        if found is None:
            return None
        if isinstance(found, bool) or not isinstance(found, int | float):
            raise self.error(where, "must be a number")
        return float(found)

    def integer(
        self, value: Mapping[str, Any], key: str, where: str, *, default: int, low: int, high: int
    ) -> int:
        found = value.get(key, default)
        if isinstance(found, bool) or not isinstance(found, int):
            raise self.error(where, "must be an integer")
        if not low <= found <= high:
            raise self.error(where, f"must be between {low} and {high}")
        return found

    def strings(self, value: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
        found = value.get(key, [])
        if not isinstance(found, list) or not all(isinstance(s, str) and s for s in found):
            raise self.error(where, "must be a list of non-empty strings")
        return tuple(found)

    def identifier(self, value: Mapping[str, Any], where: str) -> str:
        found = self.text(value, "id", f"{where}.id", required=True)
        assert found is not None
        if not ID_PATTERN.fullmatch(found):
            raise self.error(
                f"{where}.id",
                "letters, digits, '.', '_' and '-', at most 64, not starting with a sign",
            )
        return found

    def path(self, text: str | None) -> str | None:
        if text is None or self.base_dir is None:
            return text
        return str((self.base_dir / os.path.expanduser(text)).resolve())

    def task(self, value: Mapping[str, Any], where: str) -> TaskSpec:
        self.known(value, _TASK_KEYS, where)
        task_id = self.identifier(value, where)
        prompt = self.text(value, "prompt", f"{where}.prompt", required=True)
        assert prompt is not None
        if len(prompt) > MAX_PROMPT_CHARS:
            raise self.error(f"{where}.prompt", f"longer than {MAX_PROMPT_CHARS} characters")
        repo = self.text(value, "repo", f"{where}.repo")
        cwd = self.text(value, "cwd", f"{where}.cwd")
        if repo is not None and cwd is not None:
            raise self.error(where, "takes repo or cwd, not both")
        base = self.text(value, "base", f"{where}.base")
        workspace = self.text(value, "workspace", f"{where}.workspace") or (
            "worktree" if repo is not None else "none"
        )
        if workspace not in WORKSPACES:
            raise self.error(f"{where}.workspace", f"one of {', '.join(WORKSPACES)}")
        if workspace == "worktree" and repo is None:
            raise self.error(f"{where}.workspace", "a worktree needs the task's repo")
        if base is not None and workspace != "worktree":
            raise self.error(f"{where}.base", "a base ref needs a worktree (a repo)")
        attachments = self.strings(value, "attachments", f"{where}.attachments")
        if repo is None and cwd is None:
            cwd = "."
        return TaskSpec(
            id=task_id,
            prompt=prompt,
            repo=self.path(repo),
            cwd=self.path(cwd),
            base=base,
            attachments=tuple(str(self.path(a)) for a in attachments),
            workspace=workspace,
        )

    def agent(self, value: Mapping[str, Any], where: str) -> AgentSpec:
        self.known(value, _AGENT_KEYS, where)
        agent_id = self.identifier(value, where)
        profile = self.text(value, "profile", f"{where}.profile")
        command = self.text(value, "command", f"{where}.command")
        if (profile is None) == (command is None):
            raise self.error(where, "takes exactly one of profile and command")
        options = value.get("options", {})
        if not isinstance(options, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str | int | float | bool)
            for k, v in options.items()
        ):
            raise self.error(f"{where}.options", "must be a table of option id = value")
        protocol = value.get("protocol")
        if protocol is not None:
            protocol = str(protocol)
            if protocol not in PROTOCOL_CHOICES:
                raise self.error(f"{where}.protocol", f"one of {', '.join(PROTOCOL_CHOICES)}")
        policy = self.text(value, "policy", f"{where}.policy")
        if policy is not None and policy not in POLICIES:
            raise self.error(f"{where}.policy", f"one of {', '.join(POLICIES)}")
        return AgentSpec(
            id=agent_id,
            profile=profile,
            command=command,
            env=self.strings(value, "env", f"{where}.env"),
            mode=self.text(value, "mode", f"{where}.mode"),
            model=self.text(value, "model", f"{where}.model"),
            effort=self.text(value, "effort", f"{where}.effort"),
            options={str(k): _option_text(v) for k, v in options.items()},
            protocol=protocol,
            policy=policy,
        )

    def run_settings(self, run: Mapping[str, Any]) -> RunSettings:
        policy = self.text(run, "policy", "run.policy") or "ask"
        if policy not in POLICIES:
            raise self.error("run.policy", f"one of {', '.join(POLICIES)}")
        bounds = []
        for key in ("idle_timeout", "timeout"):
            found = self.number(run, key, f"run.{key}")
            if found is not None and found <= 0:
                raise self.error(f"run.{key}", "must be more than 0 seconds")
            bounds.append(found)
        return RunSettings(
            policy=policy,
            allow_unattended=self.boolean(run, "allow_unattended", "run.allow_unattended"),
            idle_timeout=bounds[0],
            timeout=bounds[1],
            require_clean=self.boolean(run, "require_clean", "run.require_clean"),
        )

    def unique(self, items: Sequence[TaskSpec | AgentSpec], name: str) -> None:
        seen: set[str] = set()
        for index, item in enumerate(items):
            if item.id in seen:
                raise self.error(f"{name}[{index}].id", f"{item.id!r} is used twice")
            seen.add(item.id)

    def select(
        self, items: tuple[_Item, ...], matrix: Mapping[str, Any], name: str
    ) -> tuple[_Item, ...]:
        if name not in matrix:
            return items
        wanted = self.strings(matrix, name, f"matrix.{name}")
        known = {item.id: item for item in items}
        for index, item_id in enumerate(wanted):
            if item_id not in known:
                raise self.error(f"matrix.{name}[{index}]", f"no {name[:-1]} {item_id!r}")
        if not wanted:
            raise self.error(f"matrix.{name}", "selects nothing")
        return tuple(known[item_id] for item_id in dict.fromkeys(wanted))


def _option_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
