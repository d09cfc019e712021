"""Text output: one line per tool-call state change that matters (a title always), the right
mark for a rejection, usage and cost in the summary, plurals."""

from __future__ import annotations

import io
from typing import Any

from baton.cli.run_text import TextPrinter, plural, usage_text
from baton.cli.terminal import Screen
from baton.runtime.result import permission_counts
from baton.runtime.runtime import RunResult
from baton.runtime.turns.events import RunEvent


def printer() -> tuple[TextPrinter, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    return TextPrinter(Screen(out, err, environ={"NO_COLOR": "1"})), out, err


def tool(status: str, title: str = "", **extra: Any) -> RunEvent:
    data = {"toolCallId": "t1", "kind": "edit", "title": title, "status": status, "paths": []}
    return RunEvent("tool_call", "run-1", {**data, **extra})


def test_a_claude_write_prints_two_titled_lines_not_four() -> None:
    show, _out, err = printer()
    show(tool("pending"))  # Claude's first update: no title yet
    show(tool("pending", "Write /w/a.txt", paths=["/w/a.txt"]))
    show(tool("in_progress", "Write /w/a.txt", paths=["/w/a.txt"]))
    show(tool("completed", "Write /w/a.txt", paths=["/w/a.txt"]))
    lines = err.getvalue().splitlines()
    assert lines == ["⚙ edit Write /w/a.txt [pending]", "⚙ edit Write /w/a.txt [completed]"]


def test_a_tool_that_never_gets_a_title_still_shows_one() -> None:
    show, _out, err = printer()
    show(tool("pending"))
    show(tool("failed"))
    assert err.getvalue().splitlines() == ["⚙ edit edit [failed]"]


def permission(option: str, kind: str) -> RunEvent:
    return RunEvent(
        "permission",
        "run-1",
        {
            "toolCallId": "t1",
            "options": [{"optionId": option, "name": option, "kind": kind}],
            "outcome": "selected",
            "optionId": option,
            "chosenBy": "user",
        },
    )


def test_a_rejection_is_not_a_check_mark() -> None:
    show, _out, err = printer()
    show(permission("reject", "reject_once"))
    show(permission("allow", "allow_once"))
    assert err.getvalue().splitlines() == [
        "✗ permission: reject (chosen by user)",
        "✓ permission: allow (chosen by user)",
    ]


def test_counts_usage_cost_and_plurals_in_the_summary() -> None:
    show, _out, err = printer()
    show(
        RunEvent(
            "usage",
            "run-1",
            {"used": 1200, "size": 200000, "cost": {"amount": 0.0123, "currency": "USD"}},
        )
    )
    views = [
        {
            "outcome": "selected",
            "optionId": "a",
            "options": [{"optionId": "a", "kind": "allow_once"}],
        },
        {
            "outcome": "selected",
            "optionId": "r",
            "options": [{"optionId": "r", "kind": "reject_once"}],
        },
        {"outcome": "cancelled", "optionId": None, "options": []},
    ]
    result = RunResult("run-1", "COMPLETED", "end_turn", 0, tool_calls=1, permissions=views)
    show.summary(result, 0, fail_on_denied=False)
    summary = err.getvalue().splitlines()[0]
    assert "1 tool call ·" in summary
    assert "permissions 1 granted, 1 denied, 1 cancelled" in summary
    assert "1,200/200,000 tokens · $0.0123" in summary
    assert permission_counts(views) == {"granted": 1, "denied": 1, "cancelled": 1}
    assert plural(1, "event") == "1 event" and plural(2, "segment") == "2 segments"
    assert usage_text(None) is None


def test_the_next_step_names_the_real_run_id() -> None:
    show, _out, err = printer()
    result = RunResult(
        "run-abc123", "RECOVERY_REQUIRED", None, 6, error_code="AGENT_MUTATION_AMBIGUOUS"
    )
    show.summary(result, 6, fail_on_denied=False)
    assert "`baton recover run-abc123`" in err.getvalue()
    assert "baton recover RUN" not in err.getvalue()


# --- issue 20: tool names, nested tools, notices, compaction, turn usage ---------------------


def test_a_tool_name_is_shown_once_and_nested_tools_are_indented() -> None:
    show, _out, err = printer()
    show(tool("completed", "Run tests", kind="execute", name="Bash"))
    show(
        RunEvent(
            "tool_call",
            "run-1",
            {
                "toolCallId": "t2",
                "kind": "read",
                "title": "Read a.py",
                "status": "completed",
                "paths": [],
                "name": "Read",
                "parentToolCallId": "t1",
            },
        )
    )
    assert err.getvalue().splitlines() == [
        "⚙ execute Run tests (Bash) [completed]",
        "  ↳ ⚙ read Read a.py [completed]",
    ]


def test_notices_by_severity() -> None:
    show, _out, err = printer()
    show(
        RunEvent(
            "notice",
            "run-1",
            {"severity": "warning", "title": "Rate limited", "description": "Retrying in 30 s"},
        )
    )
    show(
        RunEvent("notice", "run-1", {"severity": "_vendor", "title": "Custom", "description": None})
    )
    assert err.getvalue().splitlines() == [
        "! notice: Rate limited — Retrying in 30 s",
        "ℹ notice: [_vendor] Custom",
    ]


def test_a_compaction_prints_on_status_changes_only() -> None:
    show, _out, err = printer()
    base = {"compactionId": "c1", "error": None, "truncated": False, "otherBlocks": 0}
    show(RunEvent("compaction", "run-1", {**base, "status": "in_progress", "summary": ""}))
    show(RunEvent("compaction", "run-1", {**base, "status": "in_progress", "summary": "Kept "}))
    show(RunEvent("compaction", "run-1", {**base, "status": "completed", "summary": "Kept it"}))
    assert err.getvalue().splitlines() == [
        "⟲ context compaction [in_progress]",
        "⟲ context compaction [completed]: Kept it",
    ]


def test_turn_usage_shows_only_what_was_sent() -> None:
    assert usage_text({"turn": {"totalTokens": 108, "inputTokens": 84, "outputTokens": 24}}) == (
        "turn 108 tokens (84 in, 24 out)"
    )
    assert (
        usage_text({"used": 43, "size": 200000, "turn": {"inputTokens": 5, "cachedReadTokens": 0}})
        == "43/200,000 tokens · turn (5 in, 0 cache read)"
    )
    assert usage_text({"used": 1, "size": 2}) == "1/2 tokens"
