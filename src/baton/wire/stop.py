"""Stop reasons of ``session/prompt`` answers.

The schema's five reasons are recognised; anything else is kept verbatim (bounded) and flagged
unknown, so a newer agent's reason is reported rather than rejected or renamed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, cast

from baton.errors import MalformedResult

if TYPE_CHECKING:
    from baton.wire.acp_types import PromptResponse

END_TURN: Final = "end_turn"
CANCELLED: Final = "cancelled"
MAX_TOKENS: Final = "max_tokens"
MAX_TURN_REQUESTS: Final = "max_turn_requests"
REFUSAL: Final = "refusal"

#: Every stop reason of the pinned schema.
KNOWN_STOP_REASONS: Final = frozenset({END_TURN, CANCELLED, MAX_TOKENS, MAX_TURN_REQUESTS, REFUSAL})

#: Characters kept of an unknown stop reason: it is agent text that is stored and shown.
MAX_STOP_REASON_CHARS: Final = 128


@dataclass(frozen=True, slots=True)
class StopReason:
    """A stop reason. ``known`` is False for a value the schema does not name."""

    value: str
    known: bool

    @property
    def is_end_turn(self) -> bool:
        """The only reason that completes a prompt successfully."""
        return self.value == END_TURN

    @property
    def is_cancelled(self) -> bool:
        """The turn was cancelled (after ``session/cancel``)."""
        return self.value == CANCELLED


def parse_stop_reason(value: object) -> StopReason:
    """Read a stop reason. Raises :class:`MalformedResult` when it is not a string."""
    if not isinstance(value, str):
        raise MalformedResult("the session/prompt result carries no string stopReason")
    if value in KNOWN_STOP_REASONS:
        return StopReason(value, True)
    return StopReason(value[:MAX_STOP_REASON_CHARS], False)


@dataclass(frozen=True, slots=True)
class PromptResult:
    """A parsed ``session/prompt`` answer. ``usage`` is the agent's extra usage object when it
    sends one (Claude does; the stable schema does not define it), kept as sent."""

    stop_reason: StopReason
    usage: Mapping[str, Any] | None = None


def parse_prompt_result(result: object) -> PromptResult:
    """Parse a ``session/prompt`` result. Raises :class:`MalformedResult` without a stopReason."""
    if not isinstance(result, Mapping):
        raise MalformedResult("the session/prompt result is not an object")
    response = cast("PromptResponse", result)  # indexed: mypy checks the name (not .get's)
    usage = result.get("usage")  # unstable (not in the pinned stable schema's PromptResponse)
    return PromptResult(
        parse_stop_reason(response["stopReason"] if "stopReason" in response else None),  # noqa: SIM401
        usage if isinstance(usage, Mapping) else None,
    )
