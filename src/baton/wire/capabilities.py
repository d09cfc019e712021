"""What the agent advertises in ``initialize`` and what Baton advertises back.

Reading rules for every capability leaf (the wire design's correction after a real adapter):

- a boolean is honoured as a boolean: ``"audio": false`` means unsupported;
- a non-boolean, non-null value (``{}``, an object, anything else) is a presence marker:
  advertised;
- omitted or ``null`` is unsupported.

A container that is not an object (``"promptCapabilities": true``) advertises none of its
leaves, as the schema's default-on-error rule asks.

Capabilities the agent advertises that Baton does not model are recorded in
:attr:`AgentCapabilities.unmodeled` as dotted paths (``sessionCapabilities.fork``), so a caller can
see that the session is narrower than the agent. ``_meta`` is opaque by the protocol's own rule
("implementations MUST NOT make assumptions about values at these keys"): it is never listed in
``unmodeled``; only the top-level key names of ``agentCapabilities._meta`` are kept, in
:attr:`AgentCapabilities.meta_keys`, and no ``_meta`` value is ever copied.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, cast

from baton._version import __version__
from baton.errors import CapabilityNotAdvertised, MalformedResult, UsageError
from baton.wire.fork import fork_at_turn_advertised
from baton.wire.version import PROTOCOL_V1, ProtocolChoice

if TYPE_CHECKING:
    from baton.wire.acp_types import (
        ClientCapabilities,
        ElicitationCapabilities,
        InitializeRequest,
        InitializeResponse,
    )

#: Unmodeled capability paths kept per agent. The list is shown on the session and stored with
#: it; an agent advertising thousands of keys must not make that record unbounded.
MAX_UNMODELED_PATHS: Final = 64

#: Characters kept of an agent-chosen capability key (in ``unmodeled`` and ``meta_keys``).
MAX_CAPABILITY_KEY_CHARS: Final = 128

#: Auth methods kept from one ``initialize`` answer (real agents offer one to three).
MAX_AUTH_METHODS: Final = 32

#: Characters kept of an auth method's free-form text (name, description): untrusted agent text.
MAX_AUTH_TEXT_CHARS: Final = 512

#: The auth method type an entry without ``type`` has (schema: AuthMethodAgent is the default).
DEFAULT_AUTH_METHOD_TYPE: Final = "agent"

#: The one auth method type Baton never calls ``authenticate`` for (decisions.md item 10).
TERMINAL_AUTH_METHOD_TYPE: Final = "terminal"

# Capability path -> AgentCapabilities attribute. Paths are the wire names, dotted.
CAPABILITY_PATHS: Final[Mapping[str, str]] = {
    "loadSession": "load_session",
    "promptCapabilities.image": "prompt_image",
    "promptCapabilities.audio": "prompt_audio",
    "promptCapabilities.embeddedContext": "prompt_embedded_context",
    "mcpCapabilities.http": "mcp_http",
    "mcpCapabilities.sse": "mcp_sse",
    "sessionCapabilities.list": "session_list",
    "sessionCapabilities.resume": "session_resume",
    "sessionCapabilities.close": "session_close",
    "sessionCapabilities.delete": "session_delete",
    "sessionCapabilities.fork": "session_fork",
    "sessionCapabilities.additionalDirectories": "session_additional_directories",
    "auth.logout": "auth_logout",
    "auth.status": "auth_status",
    "sessionCapabilities.systemPrompt": "session_system_prompt",
    "sessionCapabilities.systemPrompt.mode.override": "session_system_prompt_override",
}

#: The unstable fork capability (an object; Baton's own ``_meta`` key in it adds ``--at-turn``).
_FORK: Final = "fork"

#: The unstable system-prompt capability (an object; its ``mode.override`` adds a mode).
_SYSTEM_PROMPT: Final = "systemPrompt"

# Containers Baton models, with the leaves it reads in each.
_CONTAINERS: Final[Mapping[str, tuple[str, ...]]] = {
    "promptCapabilities": ("image", "audio", "embeddedContext"),
    "mcpCapabilities": ("http", "sse"),
    "sessionCapabilities": (
        "list",
        "resume",
        "close",
        "delete",
        _FORK,
        "additionalDirectories",
        _SYSTEM_PROMPT,
    ),
    "auth": ("logout", "status"),
}
_TOP_LEAVES: Final = ("loadSession",)
_META: Final = "_meta"


def leaf_advertised(value: object) -> bool:
    """The leaf rule: a bool is itself; None is unsupported; anything else is presence."""
    if isinstance(value, bool):
        return value
    return value is not None


def _key(text: str) -> str:
    return text if len(text) <= MAX_CAPABILITY_KEY_CHARS else text[:MAX_CAPABILITY_KEY_CHARS] + "…"


@dataclass(frozen=True, slots=True)
class AgentCapabilities:
    """The agent's capabilities as Baton reads them. Every flag defaults to unsupported."""

    load_session: bool = False
    prompt_image: bool = False
    prompt_audio: bool = False
    prompt_embedded_context: bool = False
    mcp_http: bool = False
    mcp_sse: bool = False
    session_list: bool = False
    session_resume: bool = False
    session_close: bool = False
    session_delete: bool = False
    #: ``sessionCapabilities.fork`` (unstable): the agent answers ``session/fork``.
    session_fork: bool = False
    #: Baton's own fork extension (:mod:`baton.wire.fork`): ``session/fork`` keeps only the
    #: first N turns of the parent when asked (``baton session fork --at-turn N``).
    session_fork_at_turn: bool = False
    session_additional_directories: bool = False
    auth_logout: bool = False
    #: ``auth.status`` (unstable): the agent answers ``auth/status`` (baton.wire.auth_status).
    auth_status: bool = False
    #: ``sessionCapabilities.systemPrompt`` (unstable): ``systemPrompt`` in ``append`` mode.
    session_system_prompt: bool = False
    #: ``sessionCapabilities.systemPrompt.mode.override`` (unstable): the ``override`` mode.
    session_system_prompt_override: bool = False
    #: stdio MCP servers: v1 baseline (always true there); v2 advertises ``session.mcp.stdio``.
    mcp_stdio: bool = True
    #: Dotted paths the agent advertised (by the leaf rule) that Baton does not model.
    unmodeled: tuple[str, ...] = ()
    #: Top-level key names of ``agentCapabilities._meta`` (values are never copied).
    meta_keys: tuple[str, ...] = ()

    def supports(self, capability: str) -> bool:
        """Whether the dotted wire path ``capability`` (a key of :data:`CAPABILITY_PATHS`) is
        advertised. An unknown path is a caller mistake (:class:`UsageError`)."""
        attribute = CAPABILITY_PATHS.get(capability)
        if attribute is None:
            raise UsageError(f"unknown capability path {capability!r}")
        return bool(getattr(self, attribute))

    def require(self, capability: str, what: str) -> None:
        """Raise :class:`CapabilityNotAdvertised` naming ``capability`` unless it is advertised.
        ``what`` says what needed it ("session/load")."""
        if not self.supports(capability):
            raise CapabilityNotAdvertised(capability, what)


def _override_advertised(system_prompt: object) -> bool:
    """``systemPrompt.mode.override`` by the leaf rule; a non-object container advertises
    nothing (``append`` alone, which every advertising agent supports)."""
    if not isinstance(system_prompt, Mapping):
        return False
    mode = system_prompt.get("mode")
    return isinstance(mode, Mapping) and leaf_advertised(mode.get("override"))


def parse_agent_capabilities(raw: object) -> AgentCapabilities:
    """Read ``agentCapabilities`` tolerantly; anything unreadable is unsupported."""
    if not isinstance(raw, Mapping):
        return AgentCapabilities()
    flags: dict[str, bool] = {}
    unmodeled: list[str] = []

    def note(path: str) -> None:
        if len(unmodeled) < MAX_UNMODELED_PATHS:
            unmodeled.append(path)

    for leaf in _TOP_LEAVES:
        flags[CAPABILITY_PATHS[leaf]] = leaf_advertised(raw.get(leaf))
    for key, value in raw.items():
        if not isinstance(key, str) or key == _META or key in _TOP_LEAVES:
            continue
        modeled = _CONTAINERS.get(key)
        if modeled is None:
            if leaf_advertised(value):
                note(_key(key))
            continue
        if not isinstance(value, Mapping):
            continue
        for leaf in modeled:
            flags[CAPABILITY_PATHS[f"{key}.{leaf}"]] = leaf_advertised(value.get(leaf))
        if flags.get("session_system_prompt") and key == "sessionCapabilities":
            flags["session_system_prompt_override"] = _override_advertised(value[_SYSTEM_PROMPT])
        if flags.get("session_fork") and key == "sessionCapabilities":
            flags["session_fork_at_turn"] = fork_at_turn_advertised(value[_FORK])
        for sub, sub_value in value.items():
            if not isinstance(sub, str) or sub == _META or sub in modeled:
                continue
            if leaf_advertised(sub_value):
                note(f"{key}.{_key(sub)}")
    meta = raw.get(_META)
    meta_keys: tuple[str, ...] = ()
    if isinstance(meta, Mapping):
        meta_keys = tuple(_key(k) for k in meta if isinstance(k, str))[:MAX_UNMODELED_PATHS]
    return AgentCapabilities(**flags, unmodeled=tuple(unmodeled), meta_keys=meta_keys)


@dataclass(frozen=True, slots=True)
class AuthMethod:
    """One advertised way to sign in. ``type`` is verbatim (``agent``, ``terminal``, or a
    non-standard one such as ``env_var``); ``agent`` when the agent omitted it."""

    id: str
    name: str
    type: str = DEFAULT_AUTH_METHOD_TYPE
    description: str | None = None

    @property
    def is_terminal(self) -> bool:
        """True for a method the user runs in a terminal; Baton never authenticates it."""
        return self.type == TERMINAL_AUTH_METHOD_TYPE


@dataclass(frozen=True, slots=True)
class AgentInfo:
    """The agent's ``agentInfo``: name, optional title and version (untrusted display text)."""

    name: str
    title: str | None = None
    version: str | None = None


@dataclass(frozen=True, slots=True)
class InitializeResult:
    """A parsed ``initialize`` answer whose protocol version Baton accepted."""

    protocol_version: int
    capabilities: AgentCapabilities
    auth_methods: tuple[AuthMethod, ...] = ()
    agent_info: AgentInfo | None = None

    def auth_method(self, method_id: str) -> AuthMethod | None:
        """The advertised auth method with exactly this id, if any."""
        for method in self.auth_methods:
            if method.id == method_id:
                return method
        return None


def _text(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    return value[:MAX_AUTH_TEXT_CHARS]


def parse_auth_methods(raw: object, *, id_key: str = "id") -> tuple[AuthMethod, ...]:
    """The advertised auth methods (at most :data:`MAX_AUTH_METHODS`); an invalid or repeated
    entry is skipped, as the schema asks. ``id_key`` is the id's name: ``id`` in v1,
    ``methodId`` in v2."""
    if not isinstance(raw, list):
        return ()
    methods: list[AuthMethod] = []
    seen: set[str] = set()
    for entry in raw:
        if len(methods) >= MAX_AUTH_METHODS:
            break
        if not isinstance(entry, Mapping):
            continue
        method_id, name = entry.get(id_key), entry.get("name")
        if not isinstance(method_id, str) or not isinstance(name, str) or method_id in seen:
            continue
        kind = entry.get("type")
        seen.add(method_id)
        methods.append(
            AuthMethod(
                id=method_id,
                name=name[:MAX_AUTH_TEXT_CHARS],
                type=kind if isinstance(kind, str) else DEFAULT_AUTH_METHOD_TYPE,
                description=_text(entry.get("description")),
            )
        )
    return tuple(methods)


def _parse_agent_info(raw: object) -> AgentInfo | None:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("name"), str):
        return None
    return AgentInfo(
        name=raw["name"][:MAX_AUTH_TEXT_CHARS],
        title=_text(raw.get("title")),
        version=_text(raw.get("version")),
    )


#: Only v1 answers are read here; :func:`baton.wire.codec.negotiate` reads both versions.
_V1_ONLY: Final = ProtocolChoice(PROTOCOL_V1)


def parse_initialize_result(result: object) -> InitializeResult:
    """Parse a v1 ``initialize`` result (the layout of protocol version 1).

    Raises :class:`MalformedResult` when the result is not an object and
    :class:`~baton.errors.IncompatibleProtocolVersion` when its version is not implemented.
    Everything else is read tolerantly (invalid parts are unsupported or skipped).
    """
    if not isinstance(result, Mapping):
        raise MalformedResult("the initialize result is not an object")
    return parse_v1_initialize_result(result, _V1_ONLY.accept(result.get("protocolVersion")))


def parse_v1_initialize_result(result: Mapping[str, Any], version: int) -> InitializeResult:
    """Read a v1-layout ``initialize`` result whose ``version`` the caller already accepted."""
    # Read through the schema's type, indexing (mypy checks an index's name; it does not
    # check ``.get``'s); the values are the agent's, checked by each parser at run time.
    response = cast("InitializeResponse", result)
    return InitializeResult(
        protocol_version=version,
        capabilities=parse_agent_capabilities(
            response["agentCapabilities"] if "agentCapabilities" in response else None  # noqa: SIM401
        ),
        auth_methods=parse_auth_methods(
            response["authMethods"] if "authMethods" in response else None  # noqa: SIM401
        ),
        agent_info=_parse_agent_info(response["agentInfo"] if "agentInfo" in response else None),  # noqa: SIM401
    )


#: The name Baton gives itself in ``clientInfo``.
CLIENT_NAME: Final = "baton"


@dataclass(frozen=True, slots=True)
class ElicitationOffer:
    """Which elicitation modes this client offers. Baton offers elicitation only when someone
    can answer (a person at a TTY under ``ask``, or a surface such as the service's API): a
    client that cannot answer does not advertise it at all. Both False: nothing advertised."""

    form: bool = False
    url: bool = False

    @property
    def any(self) -> bool:
        """Whether any mode is offered."""
        return self.form or self.url


#: The offer of a client nobody answers: no elicitation.
NO_ELICITATION: Final = ElicitationOffer()


def client_capabilities(elicitation: ElicitationOffer = NO_ELICITATION) -> ClientCapabilities:
    """Exactly what Baton advertises: no filesystem, no terminal (decisions.md item 11); boolean
    session config options, session notices and context compaction, which it implements; and
    elicitation (form and/or URL) only when ``elicitation`` offers a mode. Nothing else."""
    capabilities: ClientCapabilities = {
        "fs": {"readTextFile": False, "writeTextFile": False},
        "terminal": False,
        "session": {"configOptions": {"boolean": {}}, "notices": {}, "compaction": {}},
    }
    if elicitation.any:
        capabilities["elicitation"] = elicitation_modes(elicitation)
    return capabilities


def elicitation_modes(offer: ElicitationOffer) -> ElicitationCapabilities:
    """The ``elicitation`` capability object for ``offer`` (same shape in v1 and v2)."""
    modes: ElicitationCapabilities = {}
    if offer.form:
        modes["form"] = {}
    if offer.url:
        modes["url"] = {}
    return modes


def initialize_params(
    version: int,
    client_version: str = __version__,
    elicitation: ElicitationOffer = NO_ELICITATION,
) -> InitializeRequest:
    """The ``initialize`` params Baton sends for protocol ``version``."""
    return {
        "protocolVersion": version,
        "clientCapabilities": client_capabilities(elicitation),
        "clientInfo": {"name": CLIENT_NAME, "version": client_version},
    }
