"""The run outcome classes and their one exit-code table."""

from __future__ import annotations

import pytest

from baton.runtime.turns.outcome import (
    EXIT_CODES,
    RunOutcome,
    TurnOutcome,
    exit_code_of,
    run_outcome_of,
)


def test_every_outcome_has_one_distinct_code() -> None:
    assert set(EXIT_CODES) == set(RunOutcome)
    assert len(set(EXIT_CODES.values())) == len(RunOutcome)
    assert exit_code_of(RunOutcome.COMPLETED) == 0


@pytest.mark.parametrize(
    ("status", "error_code", "bound", "expected"),
    [
        ("COMPLETED", None, None, RunOutcome.COMPLETED),
        ("FAILED", "STOP_REFUSAL", None, RunOutcome.FAILED),
        ("FAILED", "AUTHENTICATION_REQUIRED", None, RunOutcome.AUTHENTICATION_REQUIRED),
        ("INTERRUPTED", None, None, RunOutcome.INTERRUPTED),
        ("INTERRUPTED", "BUDGET_EXPIRED", "idle", RunOutcome.BUDGET_EXPIRED),
        ("RECOVERY_REQUIRED", "AGENT_MUTATION_AMBIGUOUS", None, RunOutcome.RECOVERY_REQUIRED),
        ("RECOVERY_REQUIRED", "INTERRUPT_DEADLINE_EXPIRED", "idle", RunOutcome.RECOVERY_REQUIRED),
        ("LOST", None, None, RunOutcome.RECOVERY_REQUIRED),
    ],
)
def test_a_status_maps_to_its_outcome(
    status: str, error_code: str | None, bound: str | None, expected: RunOutcome
) -> None:
    assert run_outcome_of(status, error_code=error_code, bound=bound) is expected
    outcome = TurnOutcome(status, error_code=error_code, bound=bound)
    assert outcome.run_outcome is expected


def test_an_explicit_class_wins_over_the_status() -> None:
    outcome = TurnOutcome("FAILED", error_code="AGENT_LAUNCH_FAILED", outcome=RunOutcome.USAGE)
    assert outcome.run_outcome is RunOutcome.USAGE
