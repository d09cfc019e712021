"""What the scripted agent advertises and how it behaves: :class:`AgentOptions`.

Options come from a profile (:mod:`baton.agents.scripted.profiles`) and are then overridden by
command-line flags (:func:`add_arguments`, :func:`options_from_namespace`).
"""

from __future__ import annotations

import argparse
import copy
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final, Literal

import orjson

from baton.errors import ConfigurationError
from baton.wire.framing import DEFAULT_MAX_FRAME_BYTES, validate_frame_cap
from baton.wire.jsonrpc import Message

AgentProtocol = Literal["1", "2", "auto"]
AuthRequired = Literal["off", "new", "prompt", "turn"]
ConfigKey = Literal["id", "configId"]
ModelsForm = Literal["config", "legacy", "both", "none"]
ModelExtension = Literal["none", "grok", "cursor"]
RequestIds = Literal["int", "uuid"]
ToolCallForm = Literal["id", "full"]

#: The forms ``--cap PATH=FORM`` accepts besides any JSON literal.
CAPABILITY_FORMS: Final = ("true", "false", "{}", "null", "omit")

#: Capability paths are dotted identifiers (``sessionCapabilities.resume``).
_CAP_PATH: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")

#: Where the default state directory lives under the user's cache directory.
DEFAULT_STATE_SUBDIR: Final = Path("baton", "scripted-agent")

#: Longest ``--startup-delay`` accepted (seconds): a stand-in for a slow adapter, not a hang.
MAX_STARTUP_DELAY_SECONDS: Final = 60.0

#: Highest protocol version ``--protocol-version`` accepts (the wire field is a uint16).
MAX_PROTOCOL_VERSION: Final = 65535


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


def apply_capability(capabilities: Message, spec: str) -> Message:
    """Return a copy of ``capabilities`` with ``PATH=FORM`` applied.

    FORM is ``omit`` (remove the key) or a JSON literal: ``true``, ``false``, ``{}``, ``null``, or
    any other JSON value.
    """
    path, sep, form = spec.partition("=")
    path = path.strip()
    form = form.strip()
    if not sep or not _CAP_PATH.match(path):
        raise ConfigurationError(
            f"--cap takes PATH=FORM such as sessionCapabilities.resume={{}}, got {spec!r}"
        )
    result = copy.deepcopy(capabilities)
    parts = path.split(".")
    node = result
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            if form == "omit":
                return result
            child = {}
            node[part] = child
        node = child
    if form == "omit":
        node.pop(parts[-1], None)
        return result
    try:
        node[parts[-1]] = orjson.loads(form)
    except orjson.JSONDecodeError as exc:
        raise ConfigurationError(
            f"--cap {path}: FORM must be one of {', '.join(CAPABILITY_FORMS)} or a JSON value, "
            f"got {form!r}"
        ) from exc
    return result


def parse_auth_method(spec: str) -> Message:
    """``ID`` or ``ID:TYPE`` (TYPE such as ``agent``, ``terminal`` or ``env_var``)."""
    method_id, _sep, method_type = spec.partition(":")
    if not method_id:
        raise ConfigurationError(f"--auth-method takes ID or ID:TYPE, got {spec!r}")
    method: Message = {"id": method_id, "name": f"Sign in ({method_id})"}
    if method_type:
        method["type"] = method_type
    return method


def parse_native_mode(spec: str) -> Choice:
    """``ID`` or ``ID:DESCRIPTION``: one advertised session mode (named after its id)."""
    mode_id, _sep, description = spec.partition(":")
    if not mode_id:
        raise ConfigurationError(f"--native-mode takes ID or ID:DESCRIPTION, got {spec!r}")
    return Choice(mode_id, mode_id.capitalize(), description or None)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Register every scripted-agent flag on ``parser``. Defaults are None: a profile decides."""
    from baton.agents.scripted.profiles import PROFILE_NAMES

    shape = parser.add_argument_group("what initialize and session/new advertise")
    shape.add_argument(
        "--profile",
        choices=PROFILE_NAMES,
        default="baton",
        help="start from the shapes of a captured adapter (default: baton)",
    )
    shape.add_argument(
        "--protocol-version",
        metavar="N|echo",
        help="the protocolVersion initialize answers; 'echo' answers the client's (default: 1)",
    )
    shape.add_argument(
        "--protocol",
        choices=("1", "2", "auto"),
        default=None,
        help="the ACP surface to speak: 1, the v2 draft (2, answering protocolVersion 2), or "
        "auto (v2 when offered 2 or more; default: 1)",
    )
    shape.add_argument(
        "--cap",
        action="append",
        default=[],
        metavar="PATH=FORM",
        help="set one agentCapabilities entry: FORM is true, false, {}, null, omit or JSON "
        "(repeatable), e.g. --cap sessionCapabilities.resume=omit",
    )
    shape.add_argument(
        "--auth-method",
        action="append",
        default=None,
        metavar="ID[:TYPE]",
        help="advertise this auth method instead of the profile's (repeatable)",
    )
    shape.add_argument(
        "--auth-required",
        choices=("off", "new", "prompt", "turn"),
        help="answer -32000 on session/new (or on session/prompt; turn: accept the prompt, then "
        "fail its turn with -32000, v2: idle with the error stop reason) until authenticate is "
        "called",
    )
    shape.add_argument(
        "--config-key",
        choices=("id", "configId"),
        help="the key that names each config option object (default: id)",
    )
    shape.add_argument(
        "--models",
        choices=("config", "legacy", "both", "none"),
        help="send the model list as a config option, a legacy models object, both or neither",
    )
    shape.add_argument(
        "--config-options",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="send configOptions at all",
    )
    shape.add_argument(
        "--modes",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="send modes and answer session/set_mode",
    )
    shape.add_argument(
        "--native-mode",
        action="append",
        default=None,
        metavar="ID[:DESCRIPTION]",
        help="advertise this session mode instead of the profile's (repeatable; a session "
        "starts in the first one), e.g. --native-mode 'auto:Acts without asking'",
    )
    behaviour = parser.add_argument_group("behaviour")
    behaviour.add_argument(
        "--request-ids",
        choices=("int", "uuid"),
        help="ids of the agent's own requests: integers from 0 or UUID strings",
    )
    behaviour.add_argument(
        "--eof",
        choices=("exit", "ignore"),
        help="on stdin EOF: end waits on the client, finish the work and exit (default), or "
        "keep running until killed",
    )
    behaviour.add_argument(
        "--permission-tool-call",
        choices=("id", "full"),
        help="toolCall in session/request_permission: only {toolCallId}, or the full tool call",
    )
    behaviour.add_argument(
        "--reject-ends-turn",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="a rejected or cancelled permission ends the turn with stopReason cancelled",
    )
    behaviour.add_argument(
        "--cancel-requests",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="on session/cancel, send $/cancel_request for the turn's pending requests",
    )
    behaviour.add_argument(
        "--prompt-usage",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="add a usage object to every prompt response (v2: to the idle state ending the turn)",
    )
    behaviour.add_argument(
        "--serve-unadvertised",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="answer session methods whose capability is not advertised (default: -32601)",
    )
    behaviour.add_argument(
        "--state-dir",
        metavar="DIR",
        help=(
            "keep sessions in DIR so session/load and resume work across processes (default: "
            "$XDG_CACHE_HOME/baton/scripted-agent, else ~/.cache/baton/scripted-agent)"
        ),
    )
    behaviour.add_argument(
        "--no-state-dir",
        action="store_true",
        default=None,
        help="keep sessions in memory only (ids session-1, session-2...; lost at exit)",
    )
    behaviour.add_argument(
        "--prompt-log",
        metavar="FILE",
        help="append every prompt received (a JSON line: pid, sessionId, text) to FILE",
    )
    behaviour.add_argument(
        "--max-frame-bytes",
        type=int,
        metavar="N",
        help=f"cap on one inbound frame (default: {DEFAULT_MAX_FRAME_BYTES})",
    )
    behaviour.add_argument(
        "--startup-delay",
        metavar="SECONDS",
        help=f"wait this long before reading anything, like a slow adapter's start "
        f"(0-{MAX_STARTUP_DELAY_SECONDS:g}; default 0)",
    )
    behaviour.add_argument(
        "--verbose",
        action="store_true",
        default=None,
        help="log every inbound method on stderr",
    )


def options_from_namespace(args: argparse.Namespace) -> AgentOptions:
    """Build options: the profile's, then every flag that was given."""
    from baton.agents.scripted.profiles import profile_options

    options = profile_options(str(args.profile))
    changes: dict[str, Any] = {}
    if args.protocol_version is not None:
        changes["protocol_version"] = _protocol_version(str(args.protocol_version))
    if getattr(args, "protocol", None) is not None:
        changes["protocol"] = str(args.protocol)
    capabilities = options.capabilities
    for spec in args.cap:
        capabilities = apply_capability(capabilities, str(spec))
    changes["capabilities"] = capabilities
    if args.auth_method is not None:
        changes["auth_methods"] = tuple(parse_auth_method(str(s)) for s in args.auth_method)
    if getattr(args, "native_mode", None):
        modes = tuple(parse_native_mode(str(s)) for s in args.native_mode)
        changes["catalog"] = replace(options.catalog, modes=modes)
    simple = {
        "auth_required": args.auth_required,
        "config_key": args.config_key,
        "models_form": args.models,
        "config_options": args.config_options,
        "modes": args.modes,
        "request_ids": args.request_ids,
        "permission_tool_call": args.permission_tool_call,
        "reject_ends_turn": args.reject_ends_turn,
        "cancel_requests": args.cancel_requests,
        "prompt_usage": args.prompt_usage,
        "serve_unadvertised": args.serve_unadvertised,
        "verbose": args.verbose,
    }
    changes.update({key: value for key, value in simple.items() if value is not None})
    if args.eof is not None:
        changes["exit_on_eof"] = args.eof == "exit"
    if getattr(args, "no_state_dir", None):
        if args.state_dir is not None:
            raise ConfigurationError("--state-dir and --no-state-dir exclude each other")
        changes["state_dir"] = None
    elif args.state_dir is not None:
        changes["state_dir"] = _state_dir(str(args.state_dir))
    else:
        changes["state_dir"] = default_state_dir(os.environ)
    if getattr(args, "prompt_log", None) is not None:
        changes["prompt_log"] = Path(str(args.prompt_log)).expanduser().resolve()
    if getattr(args, "startup_delay", None) is not None:
        changes["startup_delay"] = _startup_delay(str(args.startup_delay))
    if args.max_frame_bytes is not None:
        changes["max_frame_bytes"] = validate_frame_cap(args.max_frame_bytes)
    return replace(options, **changes)


def _startup_delay(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds <= MAX_STARTUP_DELAY_SECONDS:
        raise ConfigurationError(
            f"--startup-delay takes seconds from 0 to {MAX_STARTUP_DELAY_SECONDS:g}, got {text!r}"
        )
    return seconds


def _protocol_version(text: str) -> int | None:
    if text == "echo":
        return None
    if not text.isdigit() or not 0 <= int(text) <= MAX_PROTOCOL_VERSION:
        raise ConfigurationError(
            f"--protocol-version takes an integer 0-{MAX_PROTOCOL_VERSION} or 'echo', got {text!r}"
        )
    return int(text)


def default_state_dir(environ: Mapping[str, str]) -> Path | None:
    """The state directory used without ``--state-dir``: ``$XDG_CACHE_HOME/baton/scripted-agent``
    (an absolute XDG_CACHE_HOME only), else ``$HOME/.cache/baton/scripted-agent``; created
    owner-only. None (sessions in memory, as with ``--no-state-dir``) when neither names a
    usable place or the directory cannot be made writable: the agent still starts."""
    cache = environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(cache):
        home = environ.get("HOME", "")
        if not os.path.isabs(home):
            return None
        cache = os.path.join(home, ".cache")
    path = Path(cache) / DEFAULT_STATE_SUBDIR
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:
        return None
    if not path.is_dir() or not os.access(path, os.W_OK):
        return None
    return path.resolve()


def _state_dir(text: str) -> Path:
    path = Path(text).expanduser()
    if path.exists() and not path.is_dir():
        raise ConfigurationError(f"--state-dir {text!r} exists and is not a directory")
    path.mkdir(parents=True, exist_ok=True)
    if not os.access(path, os.W_OK):
        raise ConfigurationError(f"--state-dir {text!r} is not writable")
    return path.resolve()
