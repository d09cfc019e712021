"""Unit tests of the fleet's command line pieces (issue 30, item 4) that need no PostgreSQL:
the outcome of a run a bound ended in the queue, the exit code of a refused fleet turn, what
is left of a queued run's --timeout, which workers serve a queue, and `baton worker`'s lines."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from baton.cli.commands.worker import JobLines
from baton.errors import AgentLaunchFailed, AgentNotInstalled, BadFlag, StoreUnavailable
from baton.fleet.queued import remaining_budget, serving_workers
from baton.fleet.worker import JobReport
from baton.runtime.turns.outcome import (
    RunOutcome,
    exit_code_of,
    refusal_outcome,
    run_outcome_of,
)
from baton.store import Store
from baton.store.database import format_timestamp


def test_a_queued_run_ended_by_its_timeout_is_a_budget_expiry() -> None:
    outcome = run_outcome_of("CANCELLED", error_code="BUDGET_EXPIRED")
    assert outcome is RunOutcome.BUDGET_EXPIRED and exit_code_of(outcome) == 3
    # A queued run cancelled by its caller stays an interrupt.
    assert run_outcome_of("CANCELLED", error_code="QUEUED_RUN_CANCELLED") is RunOutcome.INTERRUPTED


def test_a_refused_fleet_turn_exits_as_baton_run_would() -> None:
    assert exit_code_of(refusal_outcome(AgentNotInstalled("no claude"))) == 5
    assert exit_code_of(refusal_outcome(AgentLaunchFailed("x", "not on PATH"))) == 5
    assert exit_code_of(refusal_outcome(BadFlag("--mode"))) == 2
    assert exit_code_of(refusal_outcome(StoreUnavailable("down"))) == 1


def test_the_time_in_the_queue_counts_against_the_timeout() -> None:
    now = datetime(2026, 1, 1, 12, 0, 10, tzinfo=UTC)
    created = format_timestamp(now - timedelta(seconds=4))
    left = remaining_budget(10.0, created, now)
    assert left is not None and abs(left - 6.0) < 1e-6
    assert remaining_budget(3.0, created, now) is None


def test_only_running_workers_with_a_fresh_heartbeat_on_the_queue_serve_it(
    tmp_path: Path,
) -> None:
    clock = [datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)]
    (tmp_path / "d").mkdir(mode=0o700)
    with Store.open(tmp_path / "d", clock=lambda: clock[0]) as store:
        store.register_worker("a", host="h1", queues=["default"], concurrency=1)
        store.register_worker("b", host="h2", queues=["gpu"], concurrency=1)
        store.register_worker("c", host="h3", queues=["default"], concurrency=1)
        store.end_worker("c", "STOPPED")
        now = clock[0] + timedelta(seconds=5)
        assert serving_workers(store, "default", lease_seconds=15, now=now) == ["a"]
        assert serving_workers(store, "gpu", lease_seconds=15, now=now) == ["b"]
        assert serving_workers(store, "other", lease_seconds=15, now=now) == []
        later = clock[0] + timedelta(seconds=60)
        assert serving_workers(store, "default", lease_seconds=15, now=later) == []


def test_the_worker_prints_a_line_per_job_and_counts_them_at_stop(capsys: object) -> None:
    lines = JobLines("w1")
    lines(JobReport("started", "run-1", session="review"))
    lines(JobReport("ended", "run-1", "review", "COMPLETED", duration_ms=1500))
    lines(JobReport("started", "run-2"))
    lines(JobReport("ended", "run-2", None, "FAILED", "STOP_REFUSAL", "refused\x1b[2J"))
    lines(JobReport("ended", "run-3", skipped=True))
    err = capsys.readouterr().err.splitlines()  # type: ignore[attr-defined]
    assert err == [
        "baton worker w1: ▶ run-1 (session review) started",
        "baton worker w1: ■ run-1 (session review) COMPLETED in 1.5s",
        "baton worker w1: ▶ run-2 started",
        "baton worker w1: ■ run-2 FAILED (STOP_REFUSAL): refused\\x1b[2J",
        "baton worker w1: · run-3 skipped (cancelled, settled, or its session's host runs it)",
    ]
    assert lines.stopped_line(False) == (
        "baton worker w1: stopped: 2 jobs run (1 completed, 1 failed, 1 skipped)"
    )
