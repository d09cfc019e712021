"""Stop reasons: the five known ones, anything else kept verbatim as unknown."""

from __future__ import annotations

import pytest

from baton.errors import MalformedResult
from baton.wire.stop import (
    KNOWN_STOP_REASONS,
    MAX_STOP_REASON_CHARS,
    parse_prompt_result,
    parse_stop_reason,
)


@pytest.mark.parametrize(
    "value", ["end_turn", "cancelled", "max_tokens", "max_turn_requests", "refusal"]
)
def test_known_reasons(value: str) -> None:
    reason = parse_stop_reason(value)
    assert (reason.value, reason.known) == (value, True)
    assert reason.is_end_turn is (value == "end_turn")
    assert reason.is_cancelled is (value == "cancelled")


def test_the_known_set() -> None:
    assert len(KNOWN_STOP_REASONS) == 5


@pytest.mark.parametrize("value", ["paused", "END_TURN", "", "stop"])
def test_unknown_reasons_are_kept_verbatim(value: str) -> None:
    reason = parse_stop_reason(value)
    assert (reason.value, reason.known, reason.is_end_turn) == (value, False, False)


def test_an_unknown_reason_is_bounded() -> None:
    assert len(parse_stop_reason("x" * 10_000).value) == MAX_STOP_REASON_CHARS


@pytest.mark.parametrize("value", [None, 3, True, {"reason": "end_turn"}])
def test_a_non_string_reason_is_malformed(value: object) -> None:
    with pytest.raises(MalformedResult):
        parse_stop_reason(value)


def test_prompt_result() -> None:
    parsed = parse_prompt_result({"stopReason": "end_turn", "usage": {"totalTokens": 3}})
    assert parsed.stop_reason.is_end_turn and parsed.usage == {"totalTokens": 3}
    assert parse_prompt_result({"stopReason": "refusal", "usage": 5}).usage is None
    for bad in (None, [], {}, {"stopReason": None}):
        with pytest.raises(MalformedResult):
            parse_prompt_result(bad)
