"""Session notices and compaction updates (SDK 2.4.0 stable): parsing, patch semantics,
bounds. Every shape used here validates against the pinned current schema first."""

from __future__ import annotations

from typing import Any

import pytest

from acp_schemas import CURRENT, validate_in
from baton.wire.compaction import (
    MAX_COMPACTIONS,
    MAX_SUMMARY_CHARS,
    Compaction,
    CompactionTracker,
)
from baton.wire.notices import MAX_NOTICE_TITLE_CHARS, Notice, parse_notice
from baton.wire.toolcalls import MAX_TOOL_NAME_CHARS, merge_tool_call, tool_name


def _valid(update: dict[str, Any]) -> dict[str, Any]:
    validate_in(CURRENT, "SessionUpdate", update)
    return update


def test_notice_with_and_without_description() -> None:
    full = _valid(
        {
            "sessionUpdate": "notice",
            "severity": "warning",
            "title": "Rate limited",
            "description": "Retrying in 30 s",
        }
    )
    assert parse_notice(full) == Notice("warning", "Rate limited", "Retrying in 30 s")
    bare = _valid({"sessionUpdate": "notice", "severity": "info", "title": "Hi"})
    assert parse_notice(bare) == Notice("info", "Hi", None)
    assert parse_notice(bare).known_severity  # type: ignore[union-attr]


def test_custom_severity_kept_verbatim() -> None:
    custom = _valid({"sessionUpdate": "notice", "severity": "_vendor", "title": "T"})
    notice = parse_notice(custom)
    assert notice is not None and notice.severity == "_vendor" and not notice.known_severity


@pytest.mark.parametrize(
    "update",
    [
        {"sessionUpdate": "notice", "title": "no severity"},
        {"sessionUpdate": "notice", "severity": "info"},
        {"sessionUpdate": "notice", "severity": "info", "title": ""},
        {"sessionUpdate": "notice", "severity": 3, "title": "x"},
    ],
)
def test_unreadable_notices(update: dict[str, Any]) -> None:
    assert parse_notice(update) is None


def test_notice_bounds_and_wrong_description() -> None:
    notice = parse_notice({"severity": "error", "title": "x" * 10_000, "description": 5})
    assert notice is not None
    assert len(notice.title) == MAX_NOTICE_TITLE_CHARS and notice.description is None


def _chunk(cid: str, text: str) -> dict[str, Any]:
    return _valid(
        {
            "sessionUpdate": "compaction_summary_chunk",
            "compactionId": cid,
            "content": {"type": "text", "text": text},
        }
    )


def test_compaction_upsert_and_chunks() -> None:
    tracker = CompactionTracker()
    first = tracker.apply(
        _valid(
            {"sessionUpdate": "compaction_update", "compactionId": "c1", "status": "in_progress"}
        )
    )
    assert first == Compaction("c1", "in_progress")
    tracker.apply(_chunk("c1", "Summary "))
    tracker.apply(_chunk("c1", "so far."))
    done = tracker.apply(
        _valid({"sessionUpdate": "compaction_update", "compactionId": "c1", "status": "completed"})
    )
    assert done is not None and done.summary == "Summary so far." and done.status == "completed"
    # summary replaces whole, null clears; error patches.
    tracker.apply(
        _valid(
            {
                "sessionUpdate": "compaction_update",
                "compactionId": "c1",
                "status": "failed",
                "summary": [{"type": "text", "text": "new"}],
                "error": "boom",
            }
        )
    )
    assert tracker.compactions["c1"].summary == "new" and tracker.compactions["c1"].error == "boom"
    cleared = tracker.apply(
        _valid(
            {
                "sessionUpdate": "compaction_update",
                "compactionId": "c1",
                "status": "failed",
                "summary": None,
                "error": None,
            }
        )
    )
    assert cleared is not None and cleared.summary == "" and cleared.error is None
    assert list(tracker.compactions) == ["c1"]


def test_a_chunk_first_creates_an_in_progress_compaction() -> None:
    tracker = CompactionTracker()
    created = tracker.apply(_chunk("c2", "abc"))
    assert created is not None and created.status == "in_progress" and created.summary == "abc"
    image = tracker.apply(
        {
            "sessionUpdate": "compaction_summary_chunk",
            "compactionId": "c2",
            "content": {"type": "image", "data": "aGk=", "mimeType": "image/png"},
        }
    )
    assert image is not None and image.other_blocks == 1 and image.summary == "abc"


def test_compaction_bounds() -> None:
    tracker = CompactionTracker()
    tracker.apply(_chunk("big", "x" * (MAX_SUMMARY_CHARS - 1)))
    big = tracker.apply(_chunk("big", "yyyy"))
    assert big is not None and big.truncated and len(big.summary) == MAX_SUMMARY_CHARS
    for i in range(MAX_COMPACTIONS + 5):
        tracker.apply(_chunk(f"id{i}", "."))
    assert len(tracker.compactions) == MAX_COMPACTIONS and tracker.dropped == 6


@pytest.mark.parametrize(
    "update",
    [
        {"sessionUpdate": "compaction_update", "status": "completed"},
        {"sessionUpdate": "compaction_update", "compactionId": "c"},
        {"sessionUpdate": "compaction_update", "compactionId": 3, "status": "completed"},
        {"sessionUpdate": "other", "compactionId": "c", "status": "completed"},
    ],
)
def test_unreadable_compaction_updates(update: dict[str, Any]) -> None:
    tracker = CompactionTracker()
    assert tracker.apply(update) is None and not tracker.compactions


def test_tool_name_on_calls_updates_and_merge() -> None:
    call = _valid(
        {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Run", "name": "Bash"}
    )
    state = merge_tool_call(None, call)
    assert tool_name(state) == "Bash"
    update = _valid({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "name": "Shell"})
    assert tool_name(merge_tool_call(state, update)) == "Shell"
    cleared = merge_tool_call(state, {"toolCallId": "t1", "name": None})
    assert tool_name(cleared) is None
    assert tool_name({"name": 5}) is None and tool_name({"name": ""}) is None
    assert len(tool_name({"name": "n" * 1000}) or "") == MAX_TOOL_NAME_CHARS
