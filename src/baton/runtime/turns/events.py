"""Baton's normalized run events: what `baton run --format json` prints, one object per line,
and what the library's event iterator yields.

Every event is a flat JSON object with a ``type`` and the ``runId``. The types and their fields
are part of Baton's public contract (documented in docs/events.md); fields are only added.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

import orjson

from baton.redaction import SecretValues, redact_json

#: Event types, in the order a turn usually produces them.
EVENT_TYPES: Final = (
    "run_started",  # runId, sessionId, agent, cwd, policy
    "session",  # runId, sessionId, providerSessionId, attachedBy, replayedUpdates
    "controls",  # runId, the session's safe controls after settings: revision, controls
    "text",  # runId, text, coalescedEvents
    "thought",  # runId, text, coalescedEvents
    "user_text",  # runId, text (load replays of the user's own messages)
    "tool_call",  # runId, toolCallId, kind, title, status, paths, command, name, parentToolCallId
    "plan",  # runId, entries [{content, status, priority}]
    "usage",  # runId, used, size, cost, turn
    "notice",  # runId, severity, title, description
    "compaction",  # runId, compactionId, status, summary, error, truncated, otherBlocks
    "elicitation",  # runId, request, action, reasonCode, reason, chosenBy, content
    "mode",  # runId, modeId
    "config",  # runId, configOptions (ids and current values)
    "session_info",  # runId, title
    "commands",  # runId, commands [names]
    "state",  # runId, state (ACP v2 only: running, requires_action, idle, or the agent's own)
    "permission",  # runId, toolCallId, options, outcome, optionId, chosenBy, reason
    "item",  # runId, kind, coalescedEvents (an item was materialized to the store)
    "warning",  # runId, code, message
    "result",  # runId, status, stopReason, exitCode, error, toolCalls, durationMs, ...
)


@dataclass(frozen=True, slots=True)
class RunEvent:
    """One normalized event of a run."""

    type: str
    run_id: str
    data: dict[str, Any] = field(default_factory=dict)

    def redacted(self, secrets: SecretValues | None) -> RunEvent:
        """This event with its data redacted like the run store: the credential rules and the
        exact ``secrets`` (see docs/redaction.md)."""
        return RunEvent(self.type, self.run_id, redact_json(self.data, secrets))

    def to_dict(self) -> dict[str, Any]:
        """The JSON object `baton run --format json` prints for this event."""
        return {"type": self.type, "runId": self.run_id, **self.data}

    def to_json(self) -> bytes:
        """One compact JSON line, without the newline."""
        return orjson.dumps(self.to_dict())
