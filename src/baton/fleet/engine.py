"""The job engine under the queue: procrastinate on the shared PostgreSQL store.

Baton writes no scheduler (docs/decisions.md, "Many hosts"): procrastinate holds the jobs,
hands each to one worker (``FOR UPDATE SKIP LOCKED``), runs a session's jobs one at a time
and in order (its job ``lock``), keeps per-host queues, records worker heartbeats, and leaves
a stalled job to the application. Baton's part is what a job *means*: one job runs one QUEUED
run, never retried by the engine (``retry=False``), and a stalled one is settled by
:mod:`baton.fleet.recovery`, never replayed.

One job's arguments are only the run id: the prompt and the request live in the store (the
run and its submission), redacted like every record, so the job table holds no prompt text.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Final, TypeVar

import procrastinate
import psycopg
from procrastinate import sql as engine_sql
from procrastinate.exceptions import ConnectorException

from baton.errors import StoreUnavailable
from baton.store.location import display_url
from baton.store.outage import OUTAGE_PAUSE_SECONDS, OUTAGE_WINDOW_SECONDS

LOG = logging.getLogger("baton.fleet")
_T = TypeVar("_T")

#: The task every queued turn is a job of.
TURN_TASK: Final = "baton.turn"
#: The queue a submission goes to when none is named.
DEFAULT_QUEUE: Final = "default"
#: The prefix of a worker's own queue (``worker:NAME``): the turns of the sessions it holds.
WORKER_QUEUE_PREFIX: Final = "worker:"
#: The prefix of a session's job lock: one active turn per session, in submission order.
SESSION_LOCK_PREFIX: Final = "session:"
#: The advisory lock held while procrastinate's schema is installed, so two hosts starting
#: together install it once (the ASCII of "baton-jq").
SCHEMA_LOCK_KEY: Final = 0x6261746F6E2D6A71
#: Connections one process keeps to the database for the engine (a worker's fetch, listen,
#: heartbeat and job updates; a submitter uses one). Bounds the load one host puts on the
#: server, which serves every host.
ENGINE_POOL_MAX: Final = 8

#: How many times a job that did nothing runs again (:class:`JobNotStarted`: the store could
#: not be reached before the run was taken), and the seconds between two tries. Bounds a
#: database outage a queued run outlives; past it the job fails and the run stays QUEUED.
NOT_STARTED_ATTEMPTS: Final = 30
NOT_STARTED_WAIT_SECONDS: Final = 2


#: The engine's queries run again when the database went away under them (see
#: :class:`OutageTolerantConnector`): the worker's heartbeat (idempotent) and its fetch of the
#: next job (a fetch whose commit was cut off leaves a job marked as this worker's that it
#: never received; the worker's sweep adopts it, :mod:`baton.fleet.sweep`).
RETRIED_QUERIES: Final = frozenset(
    {engine_sql.queries["update_heartbeat"], engine_sql.queries["fetch_job"]}
)
#: The engine's query that finishes a job (its status, and the release of its lock).
FINISH_JOB_QUERY: Final = engine_sql.queries["finish_job"]
#: What the engine's finish function raises for a job no longer running (procrastinate's own
#: message): a peer finished it when it declared this worker lost (baton.fleet.recovery).
_FINISHED_ELSEWHERE: Final = "Job was not found or not in"

#: Seconds between two attempts of the engine's listener to reconnect after the database went
#: away. Bounds the connection attempts one worker makes on a server that is coming back;
#: meanwhile the worker polls for jobs (FETCH_POLL_SECONDS in worker.py).
LISTEN_RETRY_SECONDS: Final = 1.0


def lost_connection(exc: BaseException) -> bool:
    """True when an engine error is the database going away (a restart, a network cut, no
    pooled connection in time), not a bug or a refused statement."""
    cause = exc.__cause__ if isinstance(exc, ConnectorException) else exc
    return isinstance(cause, psycopg.OperationalError)


class OutageTolerantConnector(procrastinate.PsycopgConnector):
    """procrastinate's psycopg connector, made to outlive a database restart. Left alone, the
    engine's worker stops taking jobs when its listener cannot reconnect at once, and its
    heartbeat or its fetch dies with the connection they ran on. Here the listener reconnects
    every LISTEN_RETRY_SECONDS for as long as the worker runs, and the RETRIED_QUERIES run
    again every OUTAGE_PAUSE_SECONDS for up to OUTAGE_WINDOW_SECONDS. The pool replaces dead
    connections itself (procrastinate checks each one it hands out)."""

    async def listen_notify(self, on_notification: Any, channels: Iterable[str]) -> None:
        """Listen for new jobs, reconnecting after the database went away.

        Cancellation: how the worker stops it; nothing is left open."""
        channels = list(channels)
        while True:
            try:
                await super().listen_notify(on_notification, channels)
            except ConnectorException as exc:
                if not lost_connection(exc):
                    raise
                LOG.warning("job listener disconnected; reconnecting: %s", exc.__cause__)
            await asyncio.sleep(LISTEN_RETRY_SECONDS)

    async def execute_query_async(self, query: Any, **arguments: Any) -> None:
        """Run one engine query (again after an outage when it is one of RETRIED_QUERIES).
        Finishing a job a peer already finished (it declared this worker lost and settled
        the job's run: this worker was fenced off, docs/fleet.md) does nothing."""
        try:
            await self._retried(
                query,
                lambda: super(OutageTolerantConnector, self).execute_query_async(
                    query, **arguments
                ),
            )
        except ConnectorException as exc:
            if query != FINISH_JOB_QUERY or _FINISHED_ELSEWHERE not in str(exc.__cause__):
                raise
            LOG.info("job %s was finished by another worker", arguments.get("job_id"))

    async def execute_query_one_async(self, query: Any, **arguments: Any) -> dict[str, Any]:
        """Run one engine query for one row (again after an outage, as above)."""
        return await self._retried(
            query,
            lambda: super(OutageTolerantConnector, self).execute_query_one_async(
                query, **arguments
            ),
        )

    async def _retried(self, query: Any, run: Callable[[], Awaitable[_T]]) -> _T:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + OUTAGE_WINDOW_SECONDS
        while True:
            try:
                return await run()
            except ConnectorException as exc:
                if query not in RETRIED_QUERIES or not lost_connection(exc):
                    raise
                if loop.time() >= deadline:
                    raise
                LOG.warning("engine query cut by the database going away; again: %s", exc.__cause__)
            await asyncio.sleep(OUTAGE_PAUSE_SECONDS)


class JobNotStarted(Exception):
    """A job stopped before its run was taken (nothing was sent to any agent), so running it
    again is safe: the one failure the engine retries. Every other failure is final."""


#: Whether a running job's abort was asked for by a user (``baton cancel``, the engine's
#: ``cancel_job_by_id(abort=True)``), not by the worker shutting down.
AbortAsked = Callable[[], bool]
#: What a worker hands the engine to run a job: ``(run_id, job_id, abort_asked)`` to nothing.
JobHandler = Callable[[str, int, AbortAsked], Awaitable[None]]

#: The key under which a worker's handler rides in the job context.
HANDLER_CONTEXT_KEY: Final = "baton_handler"


def worker_queue(worker: str) -> str:
    """The queue only ``worker`` reads: the turns of the sessions it holds."""
    return f"{WORKER_QUEUE_PREFIX}{worker}"


def session_lock(name: str) -> str:
    """The job lock of session ``name``."""
    return f"{SESSION_LOCK_PREFIX}{name}"


def engine_app(url: str) -> procrastinate.App:
    """A procrastinate app on the store's database with Baton's one task registered.
    Open it with ``async with app.open_async():``."""
    connector = OutageTolerantConnector(conninfo=url, min_size=1, max_size=ENGINE_POOL_MAX)
    app = procrastinate.App(connector=connector)

    retry = procrastinate.RetryStrategy(
        max_attempts=NOT_STARTED_ATTEMPTS,
        wait=NOT_STARTED_WAIT_SECONDS,
        retry_exceptions={JobNotStarted},
    )

    @app.task(name=TURN_TASK, pass_context=True, retry=retry)
    async def turn(context: procrastinate.JobContext, run_id: str) -> None:
        handler: JobHandler = context.additional_context[HANDLER_CONTEXT_KEY]
        assert context.job.id is not None

        def abort_asked() -> bool:
            return context.abort_reason() is procrastinate.job_context.AbortReason.USER_REQUEST

        await handler(run_id, context.job.id, abort_asked)

    del turn
    return app


def ensure_engine_schema(url: str) -> None:
    """Install procrastinate's tables in the store's database unless they are there (once,
    under :data:`SCHEMA_LOCK_KEY`). Raises StoreUnavailable when the server is unreachable."""
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("SELECT pg_advisory_lock(%s)", (SCHEMA_LOCK_KEY,))
            try:
                row = conn.execute("SELECT to_regclass('procrastinate_jobs')").fetchone()
                if row is None or row[0] is None:
                    schema = procrastinate.App(
                        connector=procrastinate.PsycopgConnector(conninfo=url)
                    ).schema_manager.get_schema()
                    conn.execute(schema)
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (SCHEMA_LOCK_KEY,))
    except psycopg.OperationalError as exc:
        raise StoreUnavailable(
            f"{display_url(url)}: the database cannot be reached ({exc})"
        ) from exc


def job_status(row: Any) -> str:
    """A job's status as text (procrastinate's enum or its value)."""
    return str(getattr(row, "value", row))
