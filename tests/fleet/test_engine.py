"""The job engine as its authors intended (issue 33, item 3): one App per process, its schema
migrated when procrastinate is upgraded (or refused with a stable code), finished jobs
deleted, and a worker's graceful shutdown that settles every turn it stops. Needs a
PostgreSQL server (`make test-fleet`)."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from tests.conftest import create_database, drop_database, postgres_admin_url

from baton.errors import EngineSchemaTooNew, EngineSchemaUnknown, InvalidArgument
from baton.fleet import TurnSubmission, submit
from baton.fleet.engine import engine_app
from baton.fleet.engine_schema import (
    SCHEMA_TABLE,
    ensure_engine_schema,
    installed_release,
    migrations,
    pending,
    release_text,
)
from baton.store import Store

pytestmark = pytest.mark.slow

#: How long a stopped worker has to exit (seconds): generous for a loaded machine, and inside
#: the suite's 120 s test timeout so a failure shows the worker's log.
EXIT_DEADLINE = 60.0
#: The releases an "older database" is built at, first choice first: the lowest procrastinate
#: Baton allows, or (when that is the one installed, `make test-fleet`'s lowest-versions pass)
#: the release before it.
OLDER_RELEASES = ((3, 1, 0), (3, 0, 0))


def _older_release() -> tuple[int, int, int]:
    for release in OLDER_RELEASES:
        if pending(release, installed_release()):
            return release
    raise AssertionError(f"no migration leads to procrastinate {installed_release()}")


#: What makes the engine's schema, compared between a migrated and a fresh database.
SCHEMA_SHAPE = {
    "columns": "SELECT table_name, column_name, data_type, is_nullable FROM "
    "information_schema.columns WHERE table_name LIKE 'procrastinate%%'",
    "functions": "SELECT proname, pg_get_function_identity_arguments(oid) FROM pg_proc "
    "WHERE proname LIKE 'procrastinate%%'",
    "enums": "SELECT t.typname, e.enumlabel FROM pg_enum e JOIN pg_type t ON t.oid = "
    "e.enumtypid WHERE t.typname LIKE 'procrastinate%%'",
    "triggers": "SELECT tgname FROM pg_trigger WHERE tgname LIKE 'procrastinate%%'",
    "indexes": "SELECT tablename, indexdef FROM pg_indexes WHERE tablename LIKE 'procrastinate%%'",
}


@pytest.fixture
def _fresh_database() -> Iterator[Callable[[], str]]:
    """Makes more empty databases on the test server (dropped afterwards)."""
    admin = postgres_admin_url()
    if admin is None:
        pytest.skip("no PostgreSQL server")
    made: list[str] = []

    def make() -> str:
        name, url = create_database(admin)
        made.append(name)
        return url

    try:
        yield make
    finally:
        for name in made:
            drop_database(admin, name)


def _shape(url: str) -> dict[str, set[tuple[Any, ...]]]:
    with psycopg.connect(url) as conn:
        return {name: set(conn.execute(query).fetchall()) for name, query in SCHEMA_SHAPE.items()}


def _older_schema(url: str, release: tuple[int, int, int]) -> None:
    """The engine's schema as ``release`` left it (procrastinate's first schema and every
    migration up to it), recorded as that release."""
    with psycopg.connect(url, autocommit=True) as conn:
        for migration in migrations():
            if migration.release <= release:
                conn.execute(migration.sql())
        conn.execute(
            f"CREATE TABLE {SCHEMA_TABLE} (id integer PRIMARY KEY, release text NOT NULL,"
            " migrated_at timestamptz NOT NULL DEFAULT now())"
        )
        conn.execute(
            f"INSERT INTO {SCHEMA_TABLE} (id, release) VALUES (1, %s)", (release_text(release),)
        )


def _recorded(url: str) -> str | None:
    with psycopg.connect(url) as conn:
        row = conn.execute(f"SELECT release FROM {SCHEMA_TABLE}").fetchone()
    return None if row is None else str(row[0])


def test_an_older_engine_schema_is_migrated_to_the_installed_release(
    postgres_database: str, _fresh_database: Callable[[], str]
) -> None:
    older = _older_release()
    fresh = _fresh_database()
    assert ensure_engine_schema(fresh) is None  # a new database: the whole schema
    _older_schema(postgres_database, older)
    assert _shape(postgres_database) != _shape(fresh)  # the older schema really differs
    assert ensure_engine_schema(postgres_database) == older
    assert _shape(postgres_database) == _shape(fresh)
    assert _recorded(postgres_database) == release_text(installed_release())
    assert ensure_engine_schema(postgres_database) is None  # once: the next start does nothing


async def test_the_migrated_schema_runs_jobs(postgres_database: str) -> None:
    _older_schema(postgres_database, _older_release())
    ensure_engine_schema(postgres_database)
    app = engine_app(postgres_database)
    async with app.open_async():
        job_id = await app.tasks["baton.turn"].configure(queue="q").defer_async(run_id="r1")
        worker_id = await app.job_manager.register_worker()
        job = await app.job_manager.fetch_job(queues=["q"], worker_id=worker_id)
    assert job is not None and job.id == job_id and job.task_kwargs == {"run_id": "r1"}


def test_a_schema_never_recorded_is_refused_naming_the_option(postgres_database: str) -> None:
    ensure_engine_schema(postgres_database)
    with psycopg.connect(postgres_database, autocommit=True) as conn:
        conn.execute(f"DELETE FROM {SCHEMA_TABLE}")
    with pytest.raises(EngineSchemaUnknown) as refused:
        ensure_engine_schema(postgres_database)
    assert "--engine-schema-from RELEASE" in refused.value.message
    assert refused.value.code == "ENGINE_SCHEMA_UNKNOWN"
    with pytest.raises(InvalidArgument):
        ensure_engine_schema(postgres_database, assume_from="latest")
    # Named, it is recorded (the installed release: nothing left to apply).
    current = release_text(installed_release())
    assert ensure_engine_schema(postgres_database, assume_from=current) is None
    assert _recorded(postgres_database) == current


def test_a_schema_newer_than_this_host_is_left_untouched(postgres_database: str) -> None:
    ensure_engine_schema(postgres_database)
    with psycopg.connect(postgres_database, autocommit=True) as conn:
        conn.execute(f"UPDATE {SCHEMA_TABLE} SET release = '99.0.0'")
    before = _shape(postgres_database)
    with pytest.raises(EngineSchemaTooNew) as refused:
        ensure_engine_schema(postgres_database)
    assert "procrastinate>=99.0.0" in refused.value.message
    assert _shape(postgres_database) == before and _recorded(postgres_database) == "99.0.0"


async def test_one_engine_app_per_process_shared_by_overlapping_users(
    postgres_database: str,
) -> None:
    ensure_engine_schema(postgres_database)
    app = engine_app(postgres_database)
    assert engine_app(postgres_database) is app
    count = "SELECT count(*) AS n FROM procrastinate_jobs"
    async with app.open_async():
        async with app.open_async():
            pass
        # The inner user's close left the pool open for the outer one.
        assert (await app.connector.execute_query_one_async(count))["n"] == 0
    with pytest.raises(Exception):  # noqa: B017 - the last close closed it
        await app.connector.execute_query_one_async(count)


def _jobs(url: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as conn:
        return conn.execute("SELECT id, status FROM procrastinate_jobs").fetchall()


async def _until(condition: Any, deadline: float = 120.0) -> None:
    loop = asyncio.get_running_loop()
    until = loop.time() + deadline
    while not condition():
        if loop.time() > until:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.1)


def _turn(fleet: Any, text: str) -> TurnSubmission:
    return TurnSubmission(
        prompt=text, agent_command=fleet.agent_command(), allow_unattended=True, queue="stop"
    )


async def test_a_finished_turns_job_is_deleted(fleet: Any) -> None:
    fleet.start_worker("w-done", "stop")
    handle = await submit(fleet.url, _turn(fleet, "echo done"))
    assert _jobs(fleet.url) != []
    ended = await fleet.wait_ended([handle.run_id])
    assert ended[handle.run_id].status == "COMPLETED"
    await _until(lambda: _jobs(fleet.url) == [])


async def _stopped(fleet: Any, name: str, *signals: float) -> tuple[int, str]:
    """Send SIGTERM to worker ``name`` after each delay in ``signals``; its exit code and
    log once it exited (bounded)."""
    worker = fleet.workers[name]
    for delay in signals:
        await asyncio.sleep(delay)
        worker.process.send_signal(signal.SIGTERM)
    loop = asyncio.get_running_loop()
    until = loop.time() + EXIT_DEADLINE
    while worker.process.poll() is None:
        assert loop.time() < until, f"the worker did not exit: {worker.log.read_text()}"
        await asyncio.sleep(0.1)
    return worker.process.returncode, worker.log.read_text()


async def _running(fleet: Any, run_id: str) -> None:
    def started() -> bool:
        with Store(fleet.url, read_only=True) as store:
            return store.get_run(run_id).status == "RUNNING"

    await _until(lambda: any(p["text"].startswith("slow") for p in fleet.prompts()))
    await _until(started)


async def test_a_second_sigterm_interrupts_the_running_turn_and_settles_it(fleet: Any) -> None:
    fleet.start_worker("w-twice", "stop", args=("--shutdown-timeout", "600"))
    handle = await submit(fleet.url, _turn(fleet, "slow 600\necho never"))
    await _running(fleet, handle.run_id)
    code, log = await _stopped(fleet, "w-twice", 0, 1.0)
    # Settled by the worker itself before it exited: not left RUNNING for a peer's lease.
    with Store(fleet.url, read_only=True) as store:
        run = store.get_run(handle.run_id)
        workers = {w.name: w.state for w in store.list_workers()}
    assert run.status == "INTERRUPTED", (run.status, log)
    assert code == 0 and "Traceback" not in log, log
    assert "interrupting 1 running turns" in log
    assert run.stop_reason == "cancelled"
    assert workers["w-twice"] == "STOPPED"
    assert [p["text"] for p in fleet.prompts()] == ["slow 600\necho never"]


async def test_the_shutdown_bound_interrupts_a_turn_that_outlasts_it(fleet: Any) -> None:
    fleet.start_worker("w-bound", "stop", args=("--shutdown-timeout", "1"))
    handle = await submit(fleet.url, _turn(fleet, "slow 600\necho never"))
    await _running(fleet, handle.run_id)
    code, log = await _stopped(fleet, "w-bound", 0)
    with Store(fleet.url, read_only=True) as store:
        run = store.get_run(handle.run_id)
    assert run.status == "INTERRUPTED", (run.status, log)
    assert code == 0 and "Traceback" not in log, log


async def test_a_turn_inside_the_shutdown_bound_finishes(fleet: Any) -> None:
    fleet.start_worker("w-inside", "stop", args=("--shutdown-timeout", "600"))
    handle = await submit(fleet.url, _turn(fleet, "slow 2\necho finished"))
    await _running(fleet, handle.run_id)
    code, log = await _stopped(fleet, "w-inside", 0)
    with Store(fleet.url, read_only=True) as store:
        run = store.get_run(handle.run_id)
    assert run.status == "COMPLETED", (run.status, log)
    assert code == 0
