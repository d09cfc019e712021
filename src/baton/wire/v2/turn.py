"""A v2 turn on the wire: the prompt's acknowledgement and the session's state updates.

In v2, ``session/prompt`` answers once the prompt is inserted, with the user message's
``messageId``; the turn's end is a ``state_update`` reporting ``idle``, with the stop reason.
``running`` and ``requires_action`` report progress and a wait for the user. Neither an
acknowledgement nor an idle state is ever assumed: a lost one leaves the turn ambiguous.

The end-of-turn token usage: v2's acknowledgement has no ``usage`` (``PromptResponse`` is
``messageId`` and ``_meta`` only); the draft's unstable part puts it on the ``idle`` state
(``IdleStateUpdate.usage``, a ``Usage`` object: "token usage for completed foreground work").
It is read here into the same :class:`~baton.wire.usage.TurnUsage` as v1's prompt answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from baton.errors import MalformedResult
from baton.wire.stop import StopReason
from baton.wire.usage import TurnUsage, parse_turn_usage
from baton.wire.v2.enums import (
    MAX_ENUM_VALUE_CHARS,
    SESSION_STATES,
    STATE_IDLE,
    V2_STOP_REASONS,
    OpenValue,
    open_value,
)

#: Characters kept of the agent's message in an ``error`` stop reason.
MAX_STOP_ERROR_MESSAGE_CHARS: Final = 512


@dataclass(frozen=True, slots=True)
class PromptAck:
    """A v2 ``session/prompt`` answer: the inserted user message's id."""

    message_id: str


def parse_prompt_ack(result: object) -> PromptAck:
    """Parse a v2 ``session/prompt`` result. Raises :class:`MalformedResult` without a string
    ``messageId`` (required and non-null in v2)."""
    if not isinstance(result, Mapping) or not isinstance(result.get("messageId"), str):
        raise MalformedResult("the v2 session/prompt acknowledgement carries no string messageId")
    return PromptAck(result["messageId"][:MAX_ENUM_VALUE_CHARS])


@dataclass(frozen=True, slots=True)
class StopError:
    """The JSON-RPC error object of an ``error`` stop reason (agent text, bounded)."""

    code: int | None
    message: str


@dataclass(frozen=True, slots=True)
class SessionActivity:
    """A parsed ``state_update``: the state, and for ``idle`` the stop reason when reported
    (omitted, ``null`` or malformed: None) with an ``error`` reason's details, and the token
    usage of the foreground work that ended when the agent reported it (unstable in the draft;
    omitted, ``null`` or unreadable: None)."""

    state: OpenValue
    stop_reason: StopReason | None = None
    error: StopError | None = None
    usage: TurnUsage | None = None

    @property
    def idle(self) -> bool:
        """True when no foreground work is active (the turn's end)."""
        return self.state.value == STATE_IDLE


def _stop_error(raw: object) -> StopError | None:
    if not isinstance(raw, Mapping):
        return None
    code = raw.get("code")
    message = raw.get("message")
    return StopError(
        code if isinstance(code, int) and not isinstance(code, bool) else None,
        message[:MAX_STOP_ERROR_MESSAGE_CHARS] if isinstance(message, str) else "",
    )


def parse_state_update(update: Mapping[str, Any]) -> SessionActivity | None:
    """Read a (normalized) ``state_update``; None when ``state`` is not a string."""
    state = update.get("state")
    if not isinstance(state, str):
        return None
    value = open_value(state, SESSION_STATES)
    if value.value != STATE_IDLE:
        return SessionActivity(value)
    usage = parse_turn_usage(update.get("usage"))
    reason = update.get("stopReason")
    if not isinstance(reason, str):
        return SessionActivity(value, usage=usage)
    stop = open_value(reason, V2_STOP_REASONS)
    error = _stop_error(update.get("error")) if reason == "error" else None
    return SessionActivity(value, StopReason(stop.value, stop.known), error, usage)
