"""The job engine under the queue: procrastinate on the shared PostgreSQL store.

Baton writes no scheduler (docs/decisions.md, "Many hosts"): procrastinate holds the jobs,
hands each to one worker (``FOR UPDATE SKIP LOCKED``), runs a session's jobs one at a time
and in order (its job ``lock``), keeps per-host queues, records worker heartbeats, and leaves
a stalled job to the application. Baton's part is what a job *means*: one job runs one QUEUED
run, never retried by the engine (``retry=False``), and a stalled one is settled by
:mod:`baton.fleet.recovery`, never replayed.

One engine App per process and database (:func:`engine_app`): its connection pool is opened
by the first ``async with app.open_async()`` and closed by the last, so a worker, its
recovery and a submitter in one process share one pool of ENGINE_POOL_MAX connections.

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

from baton.fleet import engine_schema
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
    connections itself (procrastinate checks each one it hands out).

    Opened by reference: the pool opens on the first ``open_async`` and closes on the last
    matching ``close_async``, so the process's one App serves overlapping users."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._users = 0
        self._opening: asyncio.Future[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def open_async(self, pool: Any = None) -> None:
        """Open the pool unless another user of this process has (then share it).

        Cancellation: a cancelled first opener leaves the pool closed and the count as it
        was; the users waiting on it see the cancellation too."""
        loop = asyncio.get_running_loop()
        if self._users and self._loop is not loop:
            if self._loop is not None and not self._loop.is_closed():
                raise RuntimeError("the engine's pool is open on another event loop")
            # Its loop ended with the pool open (a user that never closed): start afresh.
            self._users, self._opening, self._async_pool = 0, None, None
        self._users += 1
        self._loop = loop
        try:
            if self._opening is None:
                self._opening = asyncio.ensure_future(super().open_async(pool=pool))
            await asyncio.shield(self._opening)
        except BaseException:
            self._users -= 1
            if self._users == 0:
                self._opening = None
            raise

    async def close_async(self) -> None:
        """Close the pool once its last user of this process closes it.

        Cancellation: the pool may be left open; the next close (or the process's end)
        closes it."""
        if self._users == 0:
            return
        self._users -= 1
        if self._users == 0:
            self._opening = None
            await super().close_async()

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


#: The process's engine Apps, one per database URL (see the module docstring).
_APPS: dict[str, procrastinate.App] = {}


def engine_app(url: str) -> procrastinate.App:
    """The process's procrastinate app on the store's database, with Baton's one task
    registered (made on first use). Open it with ``async with app.open_async():`` (shared:
    see :class:`OutageTolerantConnector`)."""
    app = _APPS.get(url)
    if app is None:
        app = _APPS[url] = _new_app(url)
    return app


def _new_app(url: str) -> procrastinate.App:
    # kwargs={}: procrastinate 3.1 opens its listener's connection with the pool's
    # ``kwargs``, which psycopg_pool 3.3 leaves None unless given (found by the fleet suite's
    # lowest-versions pass).
    connector = OutageTolerantConnector(
        conninfo=url, min_size=1, max_size=ENGINE_POOL_MAX, kwargs={}
    )
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


#: The databases whose engine schema this process has checked (see ensure_engine_schema).
_SCHEMA_CHECKED: set[str] = set()


def ensure_engine_schema(url: str, *, assume_from: str | None = None) -> None:
    """Install or migrate the engine's schema (:func:`baton.fleet.engine_schema.
    ensure_engine_schema`) once per process and database: a submitter deferring many turns
    pays for the check (a connection and the advisory lock) on its first only. A worker
    checks when it starts; a host upgraded later meets a newer schema at its own start."""
    if url in _SCHEMA_CHECKED:
        return
    engine_schema.ensure_engine_schema(url, assume_from=assume_from)
    _SCHEMA_CHECKED.add(url)


def job_status(row: Any) -> str:
    """A job's status as text (procrastinate's enum or its value)."""
    return str(getattr(row, "value", row))
