"""The command line's exit codes: named from the runtime's one table, plus its own."""

from __future__ import annotations

import re
from pathlib import Path

from baton.cli import exit_codes
from baton.runtime.turns.outcome import EXIT_CODES, RunOutcome

SRC = Path(__file__).resolve().parents[2] / "src" / "baton"


def test_the_cli_names_are_the_tables_codes() -> None:
    assert exit_codes.OK == EXIT_CODES[RunOutcome.COMPLETED] == 0
    assert exit_codes.TURN_FAILED == EXIT_CODES[RunOutcome.FAILED] == 1
    assert exit_codes.USAGE == EXIT_CODES[RunOutcome.USAGE] == 2
    assert exit_codes.BUDGET == EXIT_CODES[RunOutcome.BUDGET_EXPIRED] == 3
    assert exit_codes.AUTH_REQUIRED == EXIT_CODES[RunOutcome.AUTHENTICATION_REQUIRED] == 4
    assert exit_codes.NOT_INSTALLED == EXIT_CODES[RunOutcome.AGENT_UNAVAILABLE] == 5
    assert exit_codes.RECOVERY_REQUIRED == EXIT_CODES[RunOutcome.RECOVERY_REQUIRED] == 6
    assert exit_codes.INTERRUPTED == EXIT_CODES[RunOutcome.INTERRUPTED] == 130


def test_the_help_lists_every_code_once() -> None:
    listed = [int(m) for m in re.findall(r"^  (\d+) ", exit_codes.EPILOG, re.MULTILINE)]
    named = {
        value for name, value in vars(exit_codes).items() if name.isupper() and type(value) is int
    }
    assert {
        exit_codes.PERMISSION_NOT_GRANTED,
        exit_codes.SESSION_BUSY,
        exit_codes.PIPE_CLOSED,
    } <= named
    assert set(EXIT_CODES.values()) <= named
    assert sorted(listed) == sorted(named)


def test_the_runtime_holds_no_literal_exit_codes() -> None:
    # The front and its rooms report outcomes; only the table gives them numbers.
    for path in [SRC / "runtime" / "runtime.py", *(SRC / "runtime" / "sessions").glob("*.py")]:
        text = path.read_text()
        assert "exit_code=" not in text, path
        assert "EXIT_CODES = " not in text and "EXIT_CODES: Final" not in text, path


def test_an_error_outside_a_run_exits_with_its_class() -> None:
    from baton.errors import (
        AgentLaunchFailed,
        AuthenticationRequired,
        IncompatibleProtocolVersion,
        ProtocolError,
        UsageError,
    )

    assert exit_codes.of_error(AuthenticationRequired("session/list", -32000, "sign in")) == 4
    assert exit_codes.of_error(AgentLaunchFailed("/nowhere/agent", "no such file")) == 5
    assert exit_codes.of_error(IncompatibleProtocolVersion(1, 9, (1, 2))) == 5
    assert exit_codes.of_error(UsageError("bad flag")) == 2
    assert exit_codes.of_error(ProtocolError("garbage")) == 1
