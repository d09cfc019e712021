"""The smaller frictions a newcomer hit (issue 30, item 8): counts as people read them, no
Python reprs, no reST markup in --help, real ids instead of placeholders, the session a turn
continued named in its summary."""

from __future__ import annotations

from pathlib import Path

from baton.cli.commands.show import choice_text
from baton.cli.terminal import plain_help
from baton.cli.usage_view import count_text, usage_text
from baton.runtime.lanes.reconcile import reconciled_reason

from .helpers import AGENT, baton


def test_token_counts_are_written_out() -> None:
    assert usage_text({"used": 54, "size": 1e6}) == "54/1,000,000 tokens"
    assert usage_text({"used": 1234567}) == "1,234,567 tokens"
    assert count_text(0.5) == "0.5"


def test_a_cancelled_permission_shows_no_python_repr() -> None:
    assert choice_text(None) == "-"
    assert choice_text("allow") == "allow"


def test_help_text_has_no_rest_markup(tmp_path: Path) -> None:
    assert (
        plain_help("``--x``: a *new* prompt, a*b, **kept**") == "`--x`: a new prompt, a*b, **kept**"
    )
    done = baton(tmp_path, "recover", "--help")
    assert done.returncode == 0
    assert "``" not in done.stdout and "*new*" not in done.stdout
    assert "`--mark-failed`" in done.stdout


def test_a_reconciled_run_names_its_own_id() -> None:
    assert "`baton recover run-abc`" in reconciled_reason("run-abc")
    assert "recover RUN" not in reconciled_reason("run-abc")


def test_a_continued_turn_names_its_session_in_the_summary(tmp_path: Path) -> None:
    made = baton(tmp_path, "session", "new", "demo1", "--agent-command", AGENT)
    assert made.returncode == 0, made.stderr
    done = baton(tmp_path, "run", "--continue", "--agent-command", AGENT, "echo hi")
    assert done.returncode == 0, done.stderr
    [summary] = [line for line in done.stderr.splitlines() if line.startswith("— ")]
    assert summary.endswith("· session demo1")


def test_continue_without_a_session_offers_create_and_create_starts_one(tmp_path: Path) -> None:
    refused = baton(tmp_path, "run", "--continue", "--agent-command", AGENT, "echo hi")
    assert refused.returncode == 2
    assert "SESSION_NOT_FOUND" in refused.stderr
    assert "add --create" in refused.stderr and "baton run --continue --create" in refused.stderr
    made = baton(tmp_path, "run", "--continue", "--create", "--agent-command", AGENT, "echo one")
    assert made.returncode == 0, made.stderr
    [note] = [line for line in made.stderr.splitlines() if "created session" in line]
    name = note.rsplit(" ", 1)[1]
    [summary] = [line for line in made.stderr.splitlines() if line.startswith("— ")]
    assert summary.endswith(f"· session {name}")
    # The next --continue (with or without --create) is a turn of that same session.
    again = baton(tmp_path, "run", "--continue", "--create", "--agent-command", AGENT, "echo two")
    assert again.returncode == 0, again.stderr
    assert "created session" not in again.stderr
    [summary] = [line for line in again.stderr.splitlines() if line.startswith("— ")]
    assert summary.endswith(f"· session {name}")


def test_create_needs_continue(tmp_path: Path) -> None:
    done = baton(tmp_path, "run", "--create", "--agent-command", AGENT, "echo hi")
    assert done.returncode == 2 and "--create goes with --continue" in done.stderr
