"""Text output: one line per tool-call state change that matters (a title always), the right
mark for a rejection, usage and cost in the summary, plurals."""

from __future__ import annotations

import io
from typing import Any

from baton.cli.commands.run import TextPrinter, permission_counts, plural, usage_text
from baton.cli.terminal import Screen
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
    assert "1200/200000 tokens · $0.0123" in summary
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
