"""Open enums of the v2 draft.

Every v2 enum is open: a value the schema names is known; a value beginning with ``_`` is an
extension (implementation-specific, never given meaning by Baton); any other value is unknown
but kept verbatim (bounded), so a newer agent's value is reported rather than rejected.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Final, Literal

#: The prefix of an extension value (the draft's extensibility rule).
EXTENSION_PREFIX: Final = "_"

#: Characters kept of an agent-chosen enum value: it is agent text that is stored and shown.
MAX_ENUM_VALUE_CHARS: Final = 128

EnumClass = Literal["known", "extension", "unknown"]


@dataclass(frozen=True, slots=True)
class OpenValue:
    """One value of an open enum: ``value`` verbatim (cut to :data:`MAX_ENUM_VALUE_CHARS`)
    and how Baton classed it."""

    value: str
    kind: EnumClass

    @property
    def known(self) -> bool:
        """True for a value the schema names."""
        return self.kind == "known"


def open_value(value: str, known: Collection[str]) -> OpenValue:
    """Class ``value`` against the schema's ``known`` values."""
    if value in known:
        return OpenValue(value, "known")
    kept = value[:MAX_ENUM_VALUE_CHARS]
    if value.startswith(EXTENSION_PREFIX):
        return OpenValue(kept, "extension")
    return OpenValue(kept, "unknown")


#: ``state_update.state`` values.
STATE_RUNNING: Final = "running"
STATE_IDLE: Final = "idle"
STATE_REQUIRES_ACTION: Final = "requires_action"
SESSION_STATES: Final = frozenset({STATE_RUNNING, STATE_IDLE, STATE_REQUIRES_ACTION})

#: v2 stop reasons (v1's five plus ``error``).
STOP_ERROR: Final = "error"
V2_STOP_REASONS: Final = frozenset(
    {"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled", STOP_ERROR}
)

#: ``ToolCallStatus`` (v2 adds ``paused`` and ``cancelled``).
TOOL_CALL_STATUSES: Final = frozenset(
    {"pending", "in_progress", "paused", "completed", "failed", "cancelled"}
)

#: ``ToolKind``.
TOOL_KINDS: Final = frozenset(
    {
        "read",
        "edit",
        "delete",
        "move",
        "search",
        "execute",
        "think",
        "fetch",
        "switch_mode",
        "other",
    }
)

#: ``DiffChange.operation``.
DIFF_OPERATIONS: Final = frozenset({"add", "delete", "modify", "move", "copy"})

#: ``DiffPatchFormat``.
GIT_PATCH: Final = "git_patch"
PATCH_FORMATS: Final = frozenset({GIT_PATCH})

#: ``SessionUpdate.sessionUpdate`` kinds of the v2 draft.
V2_UPDATE_KINDS: Final = frozenset(
    {
        "user_message_chunk",
        "user_message",
        "agent_message_chunk",
        "agent_message",
        "agent_thought_chunk",
        "agent_thought",
        "state_update",
        "tool_call_content_chunk",
        "tool_call_update",
        "terminal_update",
        "terminal_output_chunk",
        "plan_update",
        "available_commands_update",
        "config_option_update",
        "session_info_update",
        "usage_update",
        "notice",
        "compaction_update",
        "compaction_summary_chunk",
    }
)
