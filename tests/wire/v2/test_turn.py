"""The v2 prompt acknowledgement and state updates (the turn's end)."""

from __future__ import annotations

from typing import Any

import pytest

from baton.errors import MalformedResult
from baton.wire.codec import AcpV2Codec
from baton.wire.v2.turn import PromptAck, parse_state_update


def test_the_prompt_answer_is_an_acknowledgement() -> None:
    assert AcpV2Codec().prompt_answer({"messageId": "m1"}) == PromptAck("m1")


@pytest.mark.parametrize("result", [None, {}, {"messageId": None}, {"stopReason": "end_turn"}])
def test_an_acknowledgement_without_message_id_is_malformed(result: Any) -> None:
    with pytest.raises(MalformedResult):
        AcpV2Codec().prompt_answer(result)


def test_idle_carries_the_stop_reason() -> None:
    activity = parse_state_update({"state": "idle", "stopReason": "end_turn"})
    assert activity is not None and activity.idle
    assert activity.stop_reason is not None and activity.stop_reason.is_end_turn


def test_idle_with_an_error_reason_keeps_the_error() -> None:
    activity = parse_state_update(
        {"state": "idle", "stopReason": "error", "error": {"code": -32603, "message": "boom"}}
    )
    assert activity is not None and activity.stop_reason is not None
    assert activity.stop_reason.known and activity.stop_reason.value == "error"
    assert activity.error is not None and (activity.error.code, activity.error.message) == (
        -32603,
        "boom",
    )


@pytest.mark.parametrize("reason", [None, 3, {"x": 1}])
def test_idle_without_a_readable_reason_reports_none(reason: object) -> None:
    activity = parse_state_update({"state": "idle", "stopReason": reason})
    assert activity is not None and activity.idle and activity.stop_reason is None


def test_running_and_requires_action_are_not_idle() -> None:
    for state in ("running", "requires_action"):
        activity = parse_state_update({"state": state, "stopReason": "end_turn"})
        assert activity is not None and not activity.idle and activity.state.known
        assert activity.stop_reason is None


def test_open_enums_keep_extensions_and_unknown_values() -> None:
    ext = parse_state_update({"state": "_x.dev/paused"})
    assert ext is not None and ext.state.kind == "extension" and not ext.idle
    new = parse_state_update({"state": "sleeping" * 40})
    assert new is not None and new.state.kind == "unknown" and len(new.state.value) == 128
    reason = parse_state_update({"state": "idle", "stopReason": "_x/quota"})
    assert reason is not None and reason.stop_reason is not None
    assert reason.stop_reason.value == "_x/quota" and not reason.stop_reason.known
    assert parse_state_update({"state": 1}) is None


def test_the_ending_idle_carries_the_turn_usage() -> None:
    # Where the v2 draft reports a turn's tokens: IdleStateUpdate.usage (unstable part).
    activity = parse_state_update(
        {
            "state": "idle",
            "stopReason": "end_turn",
            "usage": {
                "totalTokens": 30,
                "inputTokens": 20,
                "outputTokens": 10,
                "thoughtTokens": None,
            },
        }
    )
    assert activity is not None and activity.usage is not None
    assert activity.usage.to_json() == {"totalTokens": 30, "inputTokens": 20, "outputTokens": 10}


def test_usage_on_an_idle_without_a_stop_reason_is_kept() -> None:
    activity = parse_state_update({"state": "idle", "usage": {"totalTokens": 5}})
    assert activity is not None and activity.stop_reason is None
    assert activity.usage is not None and activity.usage.get("totalTokens") == 5


@pytest.mark.parametrize("usage", [None, 3, "many", {}, {"totalTokens": -1}, {"totalTokens": True}])
def test_unreadable_idle_usage_is_none(usage: object) -> None:
    activity = parse_state_update({"state": "idle", "stopReason": "end_turn", "usage": usage})
    assert activity is not None and activity.usage is None


def test_usage_on_a_running_state_is_not_turn_usage() -> None:
    activity = parse_state_update({"state": "running", "usage": {"totalTokens": 5}})
    assert activity is not None and activity.usage is None
