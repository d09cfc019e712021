"""Decoding v2 session updates: upserts by id, first update creates, chunks append, diffs."""

from __future__ import annotations

from typing import Any

from baton.wire.toolcalls import merge_tool_call, tool_diff_stats, tool_paths
from baton.wire.v2.updates import (
    MAX_TOOL_CALL_CONTENT_ITEMS,
    SessionUpdateDecoder,
    is_idle,
)


def _text(kind: str, message_id: str, text: str) -> dict[str, Any]:
    return {
        "sessionUpdate": kind,
        "messageId": message_id,
        "content": {"type": "text", "text": text},
    }


def test_chunks_pass_through() -> None:
    decoder = SessionUpdateDecoder("s")
    chunk = _text("agent_message_chunk", "m", "hi")
    assert decoder.decode(chunk) == [chunk]


def test_a_new_message_upsert_becomes_chunks() -> None:
    decoder = SessionUpdateDecoder("s")
    out = decoder.decode(
        {
            "sessionUpdate": "agent_message",
            "messageId": "m",
            "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
        }
    )
    assert [u["content"]["text"] for u in out] == ["a", "b"]
    assert {u["sessionUpdate"] for u in out} == {"agent_message_chunk"}


def test_an_upsert_extending_the_streamed_text_appends_the_suffix() -> None:
    decoder = SessionUpdateDecoder("s")
    decoder.decode(_text("agent_message_chunk", "m", "Hello"))
    out = decoder.decode(
        {
            "sessionUpdate": "agent_message",
            "messageId": "m",
            "content": [{"type": "text", "text": "Hello, world"}],
        }
    )
    assert out == [_text("agent_message_chunk", "m", ", world")]
    # The same content again adds nothing (idempotent).
    same = {
        "sessionUpdate": "agent_message",
        "messageId": "m",
        "content": [{"type": "text", "text": "Hello, world"}],
    }
    assert decoder.decode(same) == []
    # Omitted content leaves the message unchanged.
    assert decoder.decode({"sessionUpdate": "agent_message", "messageId": "m"}) == []


def test_a_rewrite_or_clear_is_a_revision() -> None:
    decoder = SessionUpdateDecoder("s")
    decoder.decode(_text("agent_thought_chunk", "m", "abc"))
    out = decoder.decode(
        {
            "sessionUpdate": "agent_thought",
            "messageId": "m",
            "content": [{"type": "text", "text": "x"}],
        }
    )
    assert out == [{"sessionUpdate": "message_revised", "messageId": "m", "kind": "agent_thought"}]
    # After the revision, the new content is the base: an extension appends again.
    out = decoder.decode(_text("agent_thought_chunk", "m", "y"))
    assert out[0]["content"]["text"] == "y"
    cleared = decoder.decode({"sessionUpdate": "agent_thought", "messageId": "m", "content": None})
    assert cleared[0]["sessionUpdate"] == "message_revised"


def test_messages_of_different_roles_do_not_mix() -> None:
    decoder = SessionUpdateDecoder("s")
    decoder.decode(_text("user_message_chunk", "m", "question"))
    out = decoder.decode(
        {
            "sessionUpdate": "agent_message",
            "messageId": "m",
            "content": [{"type": "text", "text": "q"}],
        }
    )
    assert out == [_text("agent_message_chunk", "m", "q")]


def test_the_first_tool_call_update_creates_it_with_defaults() -> None:
    decoder = SessionUpdateDecoder("s")
    created = decoder.decode(
        {"sessionUpdate": "tool_call_update", "toolCallId": "t", "title": "Read", "kind": None}
    )[0]
    assert created == {
        "sessionUpdate": "tool_call",
        "toolCallId": "t",
        "title": "Read",
        "status": "pending",
    }
    update = decoder.decode(
        {"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": None, "kind": None}
    )[0]
    assert update["sessionUpdate"] == "tool_call_update"
    assert (update["status"], update["kind"]) == ("pending", "other")
    cleared = decoder.decode(
        {"sessionUpdate": "tool_call_update", "toolCallId": "t", "title": None}
    )
    state = merge_tool_call(merge_tool_call(merge_tool_call(None, created), update), cleared[0])
    assert "title" not in state and state["status"] == "pending"


def test_content_chunks_append_and_an_update_replaces() -> None:
    decoder = SessionUpdateDecoder("s")
    first = {"type": "content", "content": {"type": "text", "text": "1"}}
    second = {"type": "content", "content": {"type": "text", "text": "2"}}
    created = decoder.decode(
        {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "t", "content": first}
    )[0]
    assert created["sessionUpdate"] == "tool_call" and created["content"] == [first]
    appended = decoder.decode(
        {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "t", "content": second}
    )[0]
    assert appended["content"] == [first, second]
    decoder.decode({"sessionUpdate": "tool_call_update", "toolCallId": "t", "content": []})
    again = decoder.decode(
        {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "t", "content": first}
    )[0]
    assert again["content"] == [first]


def test_content_beyond_the_bound_is_counted_not_kept() -> None:
    decoder = SessionUpdateDecoder("s")
    item = {"type": "content", "content": {"type": "text", "text": "x"}}
    chunk = {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "t", "content": item}
    for _ in range(MAX_TOOL_CALL_CONTENT_ITEMS):
        decoder.decode(chunk)
    assert decoder.decode(chunk) == []
    assert decoder.dropped_content_items == 1


def test_a_v2_diff_names_its_paths_and_counts_its_patch() -> None:
    patch = "\n".join(
        [
            "diff --git a/src/a.py b/src/a.py",
            "--- a/src/a.py",
            "+++ b/src/a.py",
            "@@ -1,2 +1,2 @@",
            "-old",
            "+new",
            "+more",
            "diff --git a/gone.txt b/gone.txt",
            "--- a/gone.txt",
            "+++ /dev/null",
            "-bye",
        ]
    )
    diff = {
        "type": "diff",
        "changes": [
            {"operation": "modify", "path": "/w/src/a.py"},
            {"operation": "delete", "path": "/w/gone.txt"},
            {"operation": "move", "oldPath": "/w/b", "path": "/w/c"},
        ],
        "patch": {"format": "git_patch", "text": patch},
    }
    state = decoder_state(
        {"sessionUpdate": "tool_call_update", "toolCallId": "t", "content": [diff]}
    )
    assert tool_paths(state) == ["/w/src/a.py", "/w/gone.txt", "/w/b", "/w/c"]
    stats = {s.path: (s.added, s.removed, s.exact) for s in tool_diff_stats(state)}
    assert stats == {
        "/w/src/a.py": (2, 1, True),
        "/w/gone.txt": (0, 1, True),
        "/w/c": (0, 0, False),
    }


def decoder_state(update: dict[str, Any]) -> dict[str, Any]:
    return merge_tool_call(None, SessionUpdateDecoder("s").decode(update)[0])


def test_plans_are_upserts_by_id() -> None:
    decoder = SessionUpdateDecoder("s")
    entries = [{"content": "do", "priority": "high", "status": "pending"}]
    out = decoder.decode(
        {
            "sessionUpdate": "plan_update",
            "plan": {"type": "items", "planId": "p", "entries": entries},
        }
    )
    assert out == [{"sessionUpdate": "plan", "planId": "p", "entries": entries}]
    other = {"sessionUpdate": "plan_update", "plan": {"type": "_x/markdown", "planId": "p"}}
    assert decoder.decode(other) == [other]


def test_other_kinds_pass_through_unknown_but_kept() -> None:
    decoder = SessionUpdateDecoder("s")
    for update in (
        {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"},
        {"sessionUpdate": "usage_update", "used": 1, "size": 2},
        {"sessionUpdate": "_x.dev/telemetry", "n": 1},
        {"sessionUpdate": "brand_new_kind"},
    ):
        assert decoder.decode(update) == [update]
    assert is_idle({"sessionUpdate": "state_update", "state": "idle"})
    assert not is_idle({"sessionUpdate": "state_update", "state": "running"})
