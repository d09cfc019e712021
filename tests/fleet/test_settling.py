"""A worker's own settling, without a database server: how a turn's run is recorded once its
job ends with the store's writes lost (FleetWorker._settle_unended), the sweep of orphaned
runs and jobs (baton/fleet/sweep.py), and the engine queries run again after an outage
(baton/fleet/engine.py). The store here is SQLite; the engine is a stand-in."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import psycopg
import pytest
from procrastinate.exceptions import ConnectorException

from baton.errors import StoreUnavailable
from baton.fleet import engine
from baton.fleet.engine import JobNotStarted, OutageTolerantConnector, lost_connection
from baton.fleet.sweep import RUN_ORPHANED_CODE, OrphanSweep
from baton.fleet.worker import FleetWorker, WorkerSettings
from baton.runtime.runtime import RunResult
from baton.store import Store


@pytest.fixture
def store(tmp_path: Path) -> Any:
    with Store(tmp_path / "s.sqlite3") as opened:
        yield opened


def _worker(store: Store) -> FleetWorker:
    worker = FleetWorker(WorkerSettings(url="postgresql://unused/db", name="w1"))
    worker.runtime = SimpleNamespace(store=store)  # type: ignore[assignment]
    return worker


async def test_a_turn_whose_end_was_not_recorded_is_settled_by_its_own_worker(
    store: Store,
) -> None:
    worker = _worker(store)
    # The store went away before the prompt was sent, and stayed away: FAILED, nothing sent.
    unsent = store.create_run("a", status="STARTING")
    await worker._settle_unended(unsent.id, None, StoreUnavailable("gone"))
    run = store.get_run(unsent.id)
    assert (run.status, run.error_code) == ("FAILED", "STORE_UNAVAILABLE")
    # The turn ended but its outcome write was lost: the result is recorded.
    done = store.create_run("b", status="RUNNING")
    result = RunResult(done.id, "COMPLETED", "end_turn", 0)
    await worker._settle_unended(done.id, result, None)
    assert store.get_run(done.id).status == "COMPLETED"
    # The worker failed with the prompt out: ambiguous, never re-run.
    crashed = store.create_run("c", status="RUNNING")
    await worker._settle_unended(crashed.id, None, RuntimeError("boom"))
    run = store.get_run(crashed.id)
    assert (run.status, run.error_code) == ("RECOVERY_REQUIRED", "WORKER_FAILED")
    assert run.recovery_reason and "not run again" in run.recovery_reason
    # A run the Runtime never took: FAILED, nothing sent.
    queued = store.create_run("d")
    await worker._settle_unended(queued.id, None, RuntimeError("boom"))
    assert store.get_run(queued.id).status == "FAILED"
    # A run that ended as it should is left alone.
    await worker._settle_unended(done.id, RunResult(done.id, "FAILED", None, 1), None)
    assert store.get_run(done.id).status == "COMPLETED"


async def test_an_orphaned_run_is_settled_on_the_second_pass_that_finds_it(store: Store) -> None:
    sweep = OrphanSweep()
    running = store.create_run("a", status="RUNNING")
    orphan = store.create_run("b", status="STARTING")
    assert await sweep.settle_runs(store, {running.id}) == []  # a first sighting only
    later = store.create_run("c", status="RUNNING")
    assert await sweep.settle_runs(store, {running.id}) == [orphan.id]
    run = store.get_run(orphan.id)
    assert (run.status, run.error_code) == ("RECOVERY_REQUIRED", RUN_ORPHANED_CODE)
    assert store.get_run(running.id).status == "RUNNING"  # its job is running here
    assert store.get_run(later.id).status == "RUNNING"  # seen once so far
    # One that its job picked up again in between is not settled.
    assert await sweep.settle_runs(store, {running.id, later.id}) == []
    assert store.get_run(later.id).status == "RUNNING"


async def test_an_orphaned_job_is_reported_on_the_second_pass_that_finds_it() -> None:
    rows = [{"id": 7, "args": {"run_id": "run-7"}}, {"id": 8, "args": {"run_id": "run-8"}}]
    asked: list[dict[str, Any]] = []

    async def execute_query_all_async(query: str, **arguments: Any) -> list[dict[str, Any]]:
        asked.append(arguments)
        return rows

    app: Any = SimpleNamespace(
        connector=SimpleNamespace(execute_query_all_async=execute_query_all_async)
    )
    sweep = OrphanSweep()
    assert await sweep.orphaned_jobs(app, 3, running={8}) == []
    assert await sweep.orphaned_jobs(app, 3, running={8}) == [(7, "run-7")]
    assert asked[0]["worker_id"] == 3
    rows.pop(0)
    assert await sweep.orphaned_jobs(app, 3, running=set()) == []  # job 8: first sighting


def _cut() -> ConnectorException:
    try:
        raise ConnectorException() from psycopg.OperationalError("server closed the connection")
    except ConnectorException as exc:
        return exc


async def test_the_engines_heartbeat_and_fetch_run_again_after_an_outage(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(engine, "OUTAGE_PAUSE_SECONDS", 0.0)
    connector = OutageTolerantConnector(conninfo="postgresql://unused/db")
    tries: list[int] = []

    async def twice_cut() -> str:
        tries.append(1)
        if len(tries) <= 2:
            raise _cut()
        return "ok"

    heartbeat = engine.engine_sql.queries["update_heartbeat"]
    assert await connector._retried(heartbeat, twice_cut) == "ok"
    assert len(tries) == 3
    # Any other query (a job's finish: its outcome unknown) fails at once.
    tries.clear()
    with pytest.raises(ConnectorException):
        await connector._retried(engine.engine_sql.queries["finish_job"], twice_cut)
    assert len(tries) == 1
    assert lost_connection(_cut())
    assert not lost_connection(ConnectorException())


async def test_an_adopted_job_runs_its_handler_then_is_finished_or_requeued(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[str, int, Any]] = []

    async def finish_job_by_id_async(job_id: int, *, status: Any, delete_job: bool) -> None:
        calls.append(("finish", job_id, status.value))

    async def retry_job_by_id_async(job_id: int, *, retry_at: Any) -> None:
        calls.append(("retry", job_id, None))

    worker = _worker(store)
    worker.app = SimpleNamespace(  # type: ignore[assignment]
        job_manager=SimpleNamespace(
            finish_job_by_id_async=finish_job_by_id_async,
            retry_job_by_id_async=retry_job_by_id_async,
        )
    )
    outcomes: list[BaseException | None] = [None, JobNotStarted("run-b")]

    async def run_job(run_id: str, job_id: int) -> None:
        calls.append(("run", job_id, run_id))
        failure = outcomes.pop(0)
        if failure is not None:
            raise failure

    monkeypatch.setattr(worker, "run_job", run_job)
    await worker._adopt(1, "run-a")
    await worker._adopt(2, "run-b")  # the store away before the run was taken
    worker.running_runs.add("run-c")
    await worker._adopt(3, "run-c")  # its run is running here under another job
    assert calls == [
        ("run", 1, "run-a"),
        ("finish", 1, "succeeded"),
        ("run", 2, "run-b"),
        ("retry", 2, None),
        ("finish", 3, "failed"),
    ]
