"""``initialize`` in the v2 draft: ``info`` and ``capabilities`` on both sides, capabilities as
object support markers, auth methods by ``methodId``.

Support markers follow the same leaf rule as v1 (:func:`~baton.wire.capabilities.leaf_advertised`):
an object (``{}``) or any other non-null value is presence, a boolean is itself, omitted or
``null`` is unsupported. ``capabilities.session`` present means the baseline session methods
(``session/new``, ``list``, ``resume``, ``close``, ``prompt``, ``cancel``); ``session/load`` does
not exist in v2. ``auth/logout`` is advertised by a non-empty ``authMethods`` list.
``session.systemPrompt`` (unstable in the draft, as ``sessionCapabilities.systemPrompt`` is in
v1) advertises system prompts in ``append`` mode, and ``override`` with ``mode.override``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from baton.errors import MalformedResult
from baton.wire.capabilities import (
    CLIENT_NAME,
    MAX_AUTH_TEXT_CHARS,
    MAX_CAPABILITY_KEY_CHARS,
    MAX_UNMODELED_PATHS,
    NO_ELICITATION,
    AgentCapabilities,
    AgentInfo,
    AuthMethod,
    ElicitationOffer,
    InitializeResult,
    elicitation_modes,
    leaf_advertised,
    parse_auth_methods,
)
from baton.wire.fork import fork_at_turn_advertised

_META: Final = "_meta"

# Containers under ``capabilities.session`` Baton models, with the leaves it reads in each
# (wire name -> AgentCapabilities attribute).
_SESSION_CONTAINERS: Final[Mapping[str, Mapping[str, str]]] = {
    "prompt": {
        "image": "prompt_image",
        "audio": "prompt_audio",
        "embeddedContext": "prompt_embedded_context",
    },
    "mcp": {"stdio": "mcp_stdio", "http": "mcp_http"},
}

# Leaves directly under ``capabilities.session``.
_SESSION_LEAVES: Final[Mapping[str, str]] = {
    "delete": "session_delete",
    "additionalDirectories": "session_additional_directories",
}

# ``session.fork`` (unstable, see baton.wire.fork).
_FORK: Final = "fork"

# ``session.systemPrompt`` (the draft's unstable part: ``SessionSystemPromptCapabilities``).
_SYSTEM_PROMPT: Final = "systemPrompt"

# Top-level capability containers the draft defines (``auth`` holds extensions only).
_TOP: Final = ("session", "auth")


def _key(text: str) -> str:
    return text if len(text) <= MAX_CAPABILITY_KEY_CHARS else text[:MAX_CAPABILITY_KEY_CHARS] + "…"


def parse_v2_agent_capabilities(raw: object, *, auth_methods: int = 0) -> AgentCapabilities:
    """Read the v2 ``capabilities`` object tolerantly; anything unreadable is unsupported.
    ``auth_methods`` is the number of advertised auth methods (logout needs at least one)."""
    flags: dict[str, bool] = {"auth_logout": auth_methods > 0, "mcp_stdio": False}
    unmodeled: list[str] = []

    def note(path: str) -> None:
        if len(unmodeled) < MAX_UNMODELED_PATHS:
            unmodeled.append(path)

    meta_keys: tuple[str, ...] = ()
    if isinstance(raw, Mapping):
        for key, value in raw.items():
            if isinstance(key, str) and key not in _TOP and key != _META and leaf_advertised(value):
                note(_key(key))
        auth = raw.get("auth")
        if isinstance(auth, Mapping):
            for key, value in auth.items():
                if isinstance(key, str) and key != _META and leaf_advertised(value):
                    note(f"auth.{_key(key)}")
        session = raw.get("session")
        if leaf_advertised(session):
            for baseline in ("session_list", "session_resume", "session_close"):
                flags[baseline] = True
        if isinstance(session, Mapping):
            _read_session(session, flags, note)
        meta = raw.get(_META)
        if isinstance(meta, Mapping):
            meta_keys = tuple(_key(k) for k in meta if isinstance(k, str))[:MAX_UNMODELED_PATHS]
    return AgentCapabilities(**flags, unmodeled=tuple(unmodeled), meta_keys=meta_keys)


def _read_session(session: Mapping[str, Any], flags: dict[str, bool], note: Any) -> None:
    for key, value in session.items():
        if not isinstance(key, str) or key == _META:
            continue
        if key in _SESSION_LEAVES:
            flags[_SESSION_LEAVES[key]] = leaf_advertised(value)
            continue
        if key == _FORK:
            # Unstable in the draft, as in v1; Baton's own ``_meta`` key adds ``--at-turn``.
            flags["session_fork"] = leaf_advertised(value)
            flags["session_fork_at_turn"] = leaf_advertised(value) and fork_at_turn_advertised(
                value
            )
            continue
        if key == _SYSTEM_PROMPT:
            # Unstable in the draft, as in v1 (where Baton reads it too): append with the
            # marker, override with ``mode.override``.
            flags["session_system_prompt"] = leaf_advertised(value)
            mode = value.get("mode") if isinstance(value, Mapping) else None
            flags["session_system_prompt_override"] = isinstance(mode, Mapping) and (
                leaf_advertised(mode.get("override"))
            )
            continue
        leaves = _SESSION_CONTAINERS.get(key)
        if leaves is None:
            if leaf_advertised(value):
                note(f"session.{_key(key)}")
            continue
        if not isinstance(value, Mapping):
            continue  # a container that is not an object advertises none of its leaves
        for sub, sub_value in value.items():
            if not isinstance(sub, str) or sub == _META:
                continue
            attribute = leaves.get(sub)
            if attribute is not None:
                flags[attribute] = leaf_advertised(sub_value)
            elif leaf_advertised(sub_value):
                note(f"session.{key}.{_key(sub)}")


def _text(value: object) -> str | None:
    return value[:MAX_AUTH_TEXT_CHARS] if isinstance(value, str) else None


def parse_v2_auth_methods(raw: object) -> tuple[AuthMethod, ...]:
    """The advertised auth methods (``methodId``, ``name``, ``type``); invalid or repeated
    entries are skipped, as the schema asks."""
    return parse_auth_methods(raw, id_key="methodId")


def parse_v2_info(raw: object) -> AgentInfo:
    """The agent's ``info`` (required in v2: a ``name`` and a ``version`` string).

    Raises :class:`MalformedResult` when it is missing or lacks either string.
    """
    if (
        not isinstance(raw, Mapping)
        or not isinstance(raw.get("name"), str)
        or not isinstance(raw.get("version"), str)
    ):
        raise MalformedResult(
            "the agent answered protocol version 2 without an info object naming its name and "
            "version (v2 requires it)"
        )
    return AgentInfo(
        name=raw["name"][:MAX_AUTH_TEXT_CHARS],
        title=_text(raw.get("title")),
        version=raw["version"][:MAX_AUTH_TEXT_CHARS],
    )


def parse_v2_initialize_result(result: Mapping[str, Any], version: int) -> InitializeResult:
    """Parse a v2 ``initialize`` result whose ``version`` the caller already accepted.

    Raises :class:`MalformedResult` without a valid ``info``.
    """
    info = parse_v2_info(result.get("info"))
    methods = parse_v2_auth_methods(result.get("authMethods"))
    return InitializeResult(
        protocol_version=version,
        capabilities=parse_v2_agent_capabilities(
            result.get("capabilities"), auth_methods=len(methods)
        ),
        auth_methods=methods,
        agent_info=info,
    )


def v2_client_capabilities(elicitation: ElicitationOffer = NO_ELICITATION) -> dict[str, Any]:
    """What Baton advertises in v2: no terminal auth methods (v2 has no client filesystem or
    terminal methods at all), and elicitation (form and/or URL) only when offered."""
    capabilities: dict[str, Any] = {}
    if elicitation.any:
        capabilities["elicitation"] = elicitation_modes(elicitation)
    return capabilities


def v2_initialize_fields(
    client_version: str, elicitation: ElicitationOffer = NO_ELICITATION
) -> dict[str, Any]:
    """The v2-only fields of ``initialize`` params: ``info`` and ``capabilities``."""
    return {
        "info": {"name": CLIENT_NAME, "version": client_version},
        "capabilities": v2_client_capabilities(elicitation),
    }
