"""Client-provided system prompts (``systemPrompt`` on session/new, load and resume).

**Unstable**: in the SDK 2.4.0 schemas ``systemPrompt`` is only in ``schema.unstable.json``
(some SDKs call it stable). Baton sends it only behind its capability gate:

- ``append`` (add to the agent's own instructions) needs ``sessionCapabilities.systemPrompt``;
- ``override`` (replace the agent's default instructions) needs
  ``sessionCapabilities.systemPrompt.mode.override`` as well.

Otherwise the request is refused locally, before anything is written, with
:class:`~baton.errors.CapabilityNotAdvertised` naming the capability. The content is one text
block (the only block type an advertising agent must accept; an empty prompt is never sent),
bounded by :data:`MAX_SYSTEM_PROMPT_CHARS`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal

from baton.errors import InvalidArgument
from baton.wire.capabilities import AgentCapabilities

APPEND: Final = "append"
OVERRIDE: Final = "override"

SystemPromptMode = Literal["append", "override"]

#: Characters of a system prompt. It rides on every session setup request (new, load, resume)
#: and is kept on the session record; 64 KiB is far above real instruction files (CLAUDE.md,
#: AGENTS.md are a few KiB) and far below the frame cap.
MAX_SYSTEM_PROMPT_CHARS: Final = 64 * 1024

#: The capability each mode needs.
MODE_CAPABILITY: Final = {
    APPEND: "sessionCapabilities.systemPrompt",
    OVERRIDE: "sessionCapabilities.systemPrompt.mode.override",
}


@dataclass(frozen=True, slots=True)
class SystemPrompt:
    """A system prompt to send: its ``mode`` and its text."""

    mode: SystemPromptMode
    text: str

    def __post_init__(self) -> None:
        if self.mode not in MODE_CAPABILITY:
            raise InvalidArgument(f"unknown system prompt mode {self.mode!r} (append, override)")
        if not isinstance(self.text, str) or not self.text.strip():
            raise InvalidArgument("a system prompt must not be empty")
        if len(self.text) > MAX_SYSTEM_PROMPT_CHARS:
            raise InvalidArgument(
                f"a system prompt holds at most {MAX_SYSTEM_PROMPT_CHARS} characters "
                f"(this one has {len(self.text)})"
            )

    def check(self, capabilities: AgentCapabilities, what: str) -> None:
        """Refuse (:class:`~baton.errors.CapabilityNotAdvertised`) unless the agent advertised
        this mode; ``override`` names its own leaf, and append's container when that is absent
        too."""
        capabilities.require(MODE_CAPABILITY[APPEND], f"{what} with a system prompt")
        if self.mode == OVERRIDE:
            capabilities.require(
                MODE_CAPABILITY[OVERRIDE], f"{what} with an override system prompt"
            )

    def to_acp(self) -> dict[str, Any]:
        """The wire ``SystemPrompt`` object."""
        return {"mode": self.mode, "content": [{"type": "text", "text": self.text}]}
