"""What the scripted agent advertises and how it behaves: :class:`AgentOptions`.

Options come from a profile (:mod:`baton.agents.scripted.profiles`) and are then overridden by
command-line flags (:mod:`baton.agents.scripted.flags`). This module imports neither, so the
profiles build on it without a cycle.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from baton.wire.framing import DEFAULT_MAX_FRAME_BYTES
from baton.wire.jsonrpc import Message

AgentProtocol = Literal["1", "2", "auto"]
AuthRequired = Literal["off", "new", "prompt", "turn"]
ConfigKey = Literal["id", "configId"]
ModelsForm = Literal["config", "legacy", "both", "none"]
ModelExtension = Literal["none", "grok", "cursor"]
RequestIds = Literal["int", "uuid"]
ToolCallForm = Literal["id", "full"]


@dataclass(frozen=True, slots=True)
class Choice:
    """One value of a select option, one mode or one model: id, display name, description."""

    value: str
    name: str
    description: str | None = None


@dataclass(frozen=True, slots=True)
class SelectSpec:
    """A select config option other than mode and model (reasoning effort, in practice)."""

    option_id: str
    name: str
    category: str
    values: tuple[Choice, ...]
    current: str
    description: str | None = None


@dataclass(frozen=True, slots=True)
class BooleanSpec:
    """A boolean config option."""

    option_id: str
    name: str
    category: str
    current: bool
    description: str | None = None


@dataclass(frozen=True, slots=True)
class Catalog:
    """The session surface: modes, models and config options, and the shape they are sent in."""

    modes: tuple[Choice, ...]
    models: tuple[Choice, ...]
    current_model: str
    mode_option: bool = True
    mode_option_name: str = "Mode"
    mode_option_description: str | None = None
    model_option_description: str | None = None
    effort: SelectSpec | None = None
    toggle: BooleanSpec | None = None
    #: Per-model reasoning selectors (model id, spec), for the profile extensions: Grok lists a
    #: model's values in its ``_meta.reasoningEfforts``; Cursor sends the current model's spec
    #: as a config option and replaces it when the model changes.
    model_efforts: tuple[tuple[str, SelectSpec], ...] = ()

    def effort_for(self, model_id: str) -> SelectSpec | None:
        """The per-model reasoning selector of ``model_id``, if it has one."""
        for candidate, spec in self.model_efforts:
            if candidate == model_id:
                return spec
        return None


@dataclass(frozen=True, slots=True)
class PermissionChoice:
    """One permission option offered for ``write`` and ``shell``."""

    option_id: str
    name: str
    kind: str

    def to_json(self) -> Message:
        """The PermissionOption object."""
        return {"optionId": self.option_id, "name": self.name, "kind": self.kind}


@dataclass(frozen=True)
class AgentOptions:
    """Everything that shapes the agent. Frozen; derive variants with :func:`dataclasses.replace`."""

    profile: str
    agent_info: Message
    capabilities: Message
    auth_methods: tuple[Message, ...]
    catalog: Catalog
    permission_options: tuple[PermissionChoice, ...]
    #: The version initialize answers; None answers the version the client asked for.
    protocol_version: int | None = 1
    #: The ACP surface spoken: ``1`` (v1), ``2`` (the v2 draft, answering 2), or ``auto`` (v2
    #: when the client offers 2 or more, else v1).
    protocol: AgentProtocol = "1"
    auth_required: AuthRequired = "off"
    config_key: ConfigKey = "id"
    models_form: ModelsForm = "config"
    #: The profile-gated model extension this agent speaks (``grok``: initialize
    #: ``_meta.modelState``, ``session/set_model`` with ``_meta.reasoningEffort``,
    #: ``models_update``; ``cursor``: ``cursor/list_available_models`` and per-model config
    #: catalogs). Only the ``grok`` and ``cursor`` profiles set it.
    model_extension: ModelExtension = "none"
    config_options: bool = True
    modes: bool = True
    request_ids: RequestIds = "int"
    exit_on_eof: bool = True
    permission_tool_call: ToolCallForm = "id"
    reject_ends_turn: bool = False
    cancel_requests: bool = False
    #: Advertise and answer the steering extension (``_session/steering``, issue 29).
    steering: bool = False
    prompt_usage: bool = False
    serve_unadvertised: bool = False
    state_dir: Path | None = None
    #: Append every received prompt (one JSON line: pid, sessionId, text) to this file: the
    #: evidence the fleet tests count (each queued prompt reaches an agent at most once).
    prompt_log: Path | None = None
    max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES
    verbose: bool = False
    #: Seconds the process waits before it reads anything (``--startup-delay``): stands in for
    #: a real adapter's slow start in benchmarks of the warm path.
    startup_delay: float = 0.0

    @property
    def auth_method_ids(self) -> tuple[str, ...]:
        """The ids of the advertised auth methods."""
        return tuple(str(method.get("id")) for method in self.auth_methods)


def is_advertised(capabilities: Message, path: str) -> bool:
    """True when the capability at dotted ``path`` is advertised.

    ``true`` and any non-boolean, non-null value (``{}`` markers) advertise; ``false``, ``null``
    and an omitted key do not.
    """
    node: Any = capabilities
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return node is True or (node is not None and not isinstance(node, bool))
