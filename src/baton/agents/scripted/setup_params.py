"""What the scripted agent accepts beyond cwd and MCP servers on session/new, load and resume:
``additionalDirectories`` (stable) and ``systemPrompt`` (unstable), each only when the agent
advertises it (``--cap sessionCapabilities.additionalDirectories={}``, ``--cap
sessionCapabilities.systemPrompt={}`` or ``={"mode": {"override": {}}}``), as the schema asks
of an agent: anything else is -32602 and no session is created. The accepted setup is kept on
the session and reported by the ``setup`` command."""

from __future__ import annotations

from typing import Any, Final

from baton.agents.scripted.options import is_advertised
from baton.wire.jsonrpc import INVALID_PARAMS, Message

ADDITIONAL_DIRECTORIES: Final = "sessionCapabilities.additionalDirectories"
SYSTEM_PROMPT: Final = "sessionCapabilities.systemPrompt"
OVERRIDE: Final = "sessionCapabilities.systemPrompt.mode.override"


class SetupRefused(Exception):
    """The setup params break the agent's advertisement; answer -32602 with this message."""

    code = INVALID_PARAMS


def _directories(value: object, capabilities: Message) -> list[str]:
    if value is None:
        return []
    if not is_advertised(capabilities, ADDITIONAL_DIRECTORIES):
        raise SetupRefused(f"Invalid params: additionalDirectories needs {ADDITIONAL_DIRECTORIES}")
    if not isinstance(value, list) or not all(
        isinstance(d, str) and d.startswith("/") for d in value
    ):
        raise SetupRefused("Invalid params: additionalDirectories must be absolute paths")
    return list(value)


def _system_prompt(value: object, capabilities: Message) -> Message | None:
    if value is None:
        return None
    if not is_advertised(capabilities, SYSTEM_PROMPT):
        raise SetupRefused(f"Invalid params: systemPrompt needs {SYSTEM_PROMPT}")
    mode = value.get("mode") if isinstance(value, dict) else None
    content = value.get("content") if isinstance(value, dict) else None
    if mode not in ("append", "override") or (
        mode == "override" and not is_advertised(capabilities, OVERRIDE)
    ):
        raise SetupRefused(f"Invalid params: systemPrompt mode {mode!r} is not supported")
    if not isinstance(content, list) or not content:
        raise SetupRefused("Invalid params: systemPrompt content must be a non-empty array")
    texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
    if len(texts) != len(content) or not all(isinstance(t, str) for t in texts):
        raise SetupRefused("Invalid params: systemPrompt content must be text blocks")
    return {"mode": mode, "chars": sum(len(str(t)) for t in texts)}


def read_setup(params: dict[str, Any], capabilities: Message) -> Message:
    """The accepted setup (``additionalDirectories``, ``systemPrompt`` mode and size) or raise
    :class:`SetupRefused`."""
    setup: Message = {}
    directories = _directories(params.get("additionalDirectories"), capabilities)
    if directories:
        setup["additionalDirectories"] = directories
    prompt = _system_prompt(params.get("systemPrompt"), capabilities)
    if prompt is not None:
        setup["systemPrompt"] = prompt
    return setup
