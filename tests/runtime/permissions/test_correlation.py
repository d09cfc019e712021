"""Correlating permission requests with the tool-call state streamed before them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from baton.errors import InternalError
from baton.runtime.permissions.correlation import ToolCallTracker
from baton.wire.permission import PermissionRequest, parse_permission_request
from baton.wire.toolcalls import tool_command, tool_paths

FIXTURES = Path(__file__).parents[2] / "fixtures" / "permissions"


def _fixture(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())
    return loaded


def _sparse_request(tool_call_id: str, session: str = "s") -> PermissionRequest:
    params = {
        "sessionId": session,
        "toolCall": {"toolCallId": tool_call_id},
        "options": [{"optionId": "ok", "name": "OK", "kind": "allow_once"}],
    }
    return parse_permission_request(params)


def test_a_request_with_only_a_tool_call_id_gets_the_prior_state() -> None:
    tracker = ToolCallTracker("s")
    tracker.observe({"sessionUpdate": "tool_call", "toolCallId": "t", "kind": "edit", "title": "E"})
    tracker.observe(
        {"sessionUpdate": "tool_call_update", "toolCallId": "t", "locations": [{"path": "/w/a"}]}
    )
    state = tracker.correlate(_sparse_request("t"))
    assert state == {
        "toolCallId": "t",
        "kind": "edit",
        "title": "E",
        "locations": [{"path": "/w/a"}],
    }


def test_first_sight_in_the_request_is_the_state() -> None:
    fixture = _fixture("codex-execute-first-sight")
    assert fixture["prior_updates"] == []
    tracker = ToolCallTracker(fixture["params"]["sessionId"])
    request = parse_permission_request(fixture["params"])
    state = tracker.correlate(request)
    assert state == request.tool_call
    assert tool_command(state) == "/bin/bash -lc echo hello > hello_shell.txt"
    # A later update for the same id builds on what the request said.
    tracker.observe({"sessionUpdate": "tool_call", "toolCallId": "call_4", "status": "in_progress"})
    later = tracker.get("call_4")
    assert later is not None and later["status"] == "in_progress" and later["kind"] == "execute"


@pytest.mark.parametrize("name", ["claude-execute", "claude-edit", "claude-write", "codex-edit"])
def test_real_captures_correlate_to_their_full_tool_call(name: str) -> None:
    fixture = _fixture(name)
    tracker = ToolCallTracker(fixture["params"]["sessionId"])
    for update in fixture["prior_updates"]:
        assert tracker.observe(update)
    request = parse_permission_request(fixture["params"])
    state = tracker.correlate(request)
    assert state["kind"] == request.tool_call["kind"]
    assert "sessionUpdate" not in state
    if state["kind"] == "edit":
        assert tool_paths(state)
    else:
        assert tool_command(state) == "echo hi > bash_out.txt"


def test_claudes_empty_first_tool_call_is_filled_in_before_the_request() -> None:
    fixture = _fixture("claude-edit")
    tracker = ToolCallTracker(fixture["params"]["sessionId"])
    first = fixture["prior_updates"][0]
    assert first["rawInput"] == {} and first["locations"] == []
    tracker.observe(first)
    stripped = dict(fixture["params"], toolCall={"toolCallId": first["toolCallId"]})
    assert tool_paths(tracker.correlate(parse_permission_request(stripped))) == []
    for update in fixture["prior_updates"][1:]:
        tracker.observe(update)
    state = tracker.correlate(parse_permission_request(stripped))
    assert tool_paths(state) == ["/home/user/project/edit_me.txt"]


def test_the_request_can_clear_a_prior_field() -> None:
    tracker = ToolCallTracker("s")
    tracker.observe({"sessionUpdate": "tool_call", "toolCallId": "t", "kind": "edit"})
    params = {
        "sessionId": "s",
        "toolCall": {"toolCallId": "t", "kind": None},
        "options": [{"optionId": "ok", "name": "OK", "kind": "allow_once"}],
    }
    assert "kind" not in tracker.correlate(parse_permission_request(params))


def test_other_updates_and_sessions_are_ignored() -> None:
    tracker = ToolCallTracker("s")
    assert not tracker.observe({"sessionUpdate": "agent_message_chunk", "content": {}})
    assert not tracker.observe({"sessionUpdate": "tool_call", "toolCallId": 4})
    assert not tracker.observe_notification(
        {"sessionId": "other", "update": {"sessionUpdate": "tool_call", "toolCallId": "t"}}
    )
    assert not tracker.observe_notification({"sessionId": "s", "update": "junk"})
    assert tracker.observe_notification(
        {"sessionId": "s", "update": {"sessionUpdate": "tool_call", "toolCallId": "t"}}
    )
    assert len(tracker) == 1


def test_a_request_for_another_session_is_a_routing_bug() -> None:
    with pytest.raises(InternalError):
        ToolCallTracker("s").correlate(_sparse_request("t", session="other"))


def test_memory_is_bounded_by_forgetting_the_least_recently_updated() -> None:
    tracker = ToolCallTracker("s", max_tracked=3)
    for name in ("a", "b", "c"):
        tracker.observe({"sessionUpdate": "tool_call", "toolCallId": name, "kind": "edit"})
    tracker.observe({"sessionUpdate": "tool_call_update", "toolCallId": "a", "title": "A"})
    tracker.observe({"sessionUpdate": "tool_call", "toolCallId": "d"})
    assert len(tracker) == 3
    assert tracker.get("b") is None
    assert tracker.get("a") is not None
    # A forgotten tool call correlates with the request alone: less to go on, never more.
    assert tracker.correlate(_sparse_request("b")) == {"toolCallId": "b"}
    tracker.forget("b")
    tracker.forget("never-seen")
    assert tracker.get("b") is None
    with pytest.raises(InternalError):
        ToolCallTracker("s", max_tracked=0)
