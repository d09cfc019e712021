"""Submitting a turn to the queue, and following it from anywhere: :func:`submit` and the
:class:`QueuedRun` handle (``id``, ``events()``, ``interrupt()``, ``result()``, ``cancel()``:
the :class:`~baton.runtime.run.RunHandle` protocol a local run's handle shares, plus the
record). ``baton submit`` is this.

A submission writes a QUEUED run and its request to the shared store in one transaction
(an idempotency key already used returns the first run instead), then defers one job for it.
A session's turns carry the session's job lock (one active turn per session, in submission
order) and go to the queue of the worker that holds the session once one does.

Events. The worker running the turn appends its events to the store (``run_events``);
:meth:`QueuedRun.events` reads them as they arrive, ending with the ``result`` event. A run
that ends without one (its worker was lost: RECOVERY_REQUIRED; CANCELLED before it started)
ends with a ``result`` event built from the run's record.

Interrupts. :meth:`QueuedRun.interrupt` cancels a run no worker took yet (CANCELLED); a
started one has its job aborted through the engine and its worker interrupts the turn
(:meth:`QueuedRun.abort`). Closing :meth:`QueuedRun.events` early (``break``, ``aclose``, a
cancelled reader) interrupts the run the same way, with the reason ``events_closed``, as a
local run's stream does.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from baton.errors import ConfigurationError, StoreConflict
from baton.fleet.engine import (
    DEFAULT_QUEUE,
    TURN_TASK,
    engine_app,
    ensure_engine_schema,
    session_lock,
)
from baton.fleet.limits import LEASE_SECONDS
from baton.runtime.run import EVENTS_CLOSED, EventStream
from baton.runtime.runtime import RunResult
from baton.runtime.turns.events import RunEvent, event_type
from baton.runtime.turns.outcome import BUDGET_EXPIRED_CODE, exit_code_of, run_outcome_of
from baton.store import ACTIVE_RUN_STATUSES, ENDED_RUN_STATUSES, Run, Store

#: How often a waiting submitter reads the store for new events and the run's status
#: (seconds). Bounds the latency `submit --wait` adds to an event, and the read load one
#: waiting submitter puts on the shared database (about 10 small reads a second).
EVENT_POLL_SECONDS: Final = 0.1
#: How long a submitter waits, once the run has ended, for its worker's own ``result`` event
#: before building one from the run's record (a worker ends the run, then appends the result;
#: a lost worker appends nothing). Seconds.
RESULT_GRACE_SECONDS: Final = 2.0
#: The error code a run cancelled before it started carries (it moves QUEUED -> CANCELLED;
#: an earlier Baton made such runs INTERRUPTED with it, which schema version 5 migrated).
CANCELLED_CODE: Final = "QUEUED_RUN_CANCELLED"
#: How long a closed event stream waits for its interrupted run to end (seconds): the
#: engine's abort reaching the worker, the interrupt deadline, and a lost worker's lease (its
#: runs are settled RECOVERY_REQUIRED by a peer) fit in it.
SETTLE_WAIT_SECONDS: Final = 60.0
#: The priority a session's turn is re-queued with when it reached a worker that does not
#: hold the session: above the default (0), so it stays ahead of the session's later turns.
REDIRECT_PRIORITY: Final = 1


@dataclass(frozen=True)
class TurnSubmission:
    """What to run: exactly one of ``agent`` (a profile) and ``agent_command``; ``session``
    names a session whose turns all run on the worker that holds it."""

    prompt: str
    agent: str | None = None
    agent_command: str | None = None
    session: str | None = None
    queue: str = DEFAULT_QUEUE
    cwd: str | None = None
    policy: str = "ask"
    allow_unattended: bool = False
    mode: str | None = None
    model: str | None = None
    effort: str | None = None
    idle_timeout: float | None = None
    timeout: float | None = None
    idempotency_key: str | None = None
    env_keys: tuple[str, ...] = field(default_factory=tuple)
    #: The workspace on the worker's host (docs/workspaces.md): ``worktree`` (a session's is
    #: made by its first turn and kept on that host), an absolute directory there, or None.
    workspace: str | None = None
    #: With ``workspace="worktree"``: the base commit (default ``HEAD``) and whether a dirty
    #: checkout is refused.
    base: str | None = None
    require_clean: bool = False

    def request(self) -> dict[str, Any]:
        """The request a worker runs (everything but the prompt, the queue and the key)."""
        data = asdict(self)
        for key in ("prompt", "queue", "idempotency_key", "session"):
            data.pop(key)
        data["env_keys"] = list(self.env_keys)
        return data


async def submit(url: str, submission: TurnSubmission) -> QueuedRun:
    """Queue one turn on the fleet whose store is ``url``; the handle of its QUEUED run.

    Cancellation: cancelling before the job is deferred leaves a QUEUED run with no job (it
    never runs; ``baton runs`` shows it QUEUED, and :meth:`QueuedRun.cancel` settles it)."""
    if (submission.agent is None) == (submission.agent_command is None):
        raise ConfigurationError("name exactly one of --agent (a profile) and --agent-command")
    store = Store(url)
    try:
        queue = submission.queue
        if submission.session is not None:
            pinned = store.find_pinned_session(submission.session)
            if pinned is not None:
                queue = pinned.queue
        record, created = store.create_submission(
            submission.prompt,
            queue=queue,
            request=submission.request(),
            policy=submission.policy,
            unattended=submission.allow_unattended,
            idempotency_key=submission.idempotency_key,
            session_name=submission.session,
        )
        if created:
            job_id = await defer_turn(url, record.run_id, queue, submission.session)
            store.set_submission_job(record.run_id, job_id)
    finally:
        store.close()
    return QueuedRun(url, record.run_id, created=created)


async def defer_turn(
    url: str, run_id: str, queue: str, session: str | None, *, priority: int = 0
) -> int:
    """Defer the job of queued run ``run_id``; its job id."""
    ensure_engine_schema(url)
    app = engine_app(url)
    async with app.open_async():
        task = app.tasks[TURN_TASK]
        options: dict[str, Any] = {"queue": queue, "priority": priority}
        if session is not None:
            options["lock"] = session_lock(session)
        return await task.configure(**options).defer_async(run_id=run_id)


class QueuedRun:
    """A submitted run, followed through the shared store (a
    :class:`~baton.runtime.run.RunHandle`)."""

    def __init__(self, url: str, run_id: str, *, created: bool = True) -> None:
        self.url = url
        self.run_id = run_id
        #: False when the idempotency key named an earlier submission (this is its run).
        self.created = created

    @property
    def id(self) -> str:
        """The run's id (its row in the shared store)."""
        return self.run_id

    def run(self) -> Run:
        """The run's record now."""
        with Store(self.url, read_only=True) as store:
            return store.get_run(self.run_id)

    def events(self) -> EventStream:
        """The run's events as its worker records them; the last is ``result`` (an async
        iterator, and an ``async with`` that closes it).

        Cancellation: closing the stream before its end (``break``, ``aclose``, leaving its
        ``async with``, cancelling the reader) interrupts the run as :meth:`interrupt` does,
        with the reason ``events_closed`` (still queued: CANCELLED; taken by a worker:
        session/cancel and the interrupt deadline there), and waits for the run to end, at
        most :data:`SETTLE_WAIT_SECONDS`; a reader cancelled again while it waits stops
        waiting."""
        return EventStream(self._follow())

    async def _follow(self) -> AsyncGenerator[RunEvent]:
        ended = False
        try:
            async for event in self._read():
                yield event
            ended = True
        finally:
            if not ended:
                await self._interrupt_and_settle(EVENTS_CLOSED)

    async def _interrupt_and_settle(self, reason: str) -> None:
        """Interrupt the run (see :meth:`interrupt`) and wait for it to end, bounded."""
        if not await self.interrupt(reason):
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + SETTLE_WAIT_SECONDS
        with Store(self.url, read_only=True) as store:
            while loop.time() < deadline:
                if store.get_run(self.run_id).status in ENDED_RUN_STATUSES:
                    return
                await asyncio.sleep(EVENT_POLL_SECONDS)

    async def _read(self) -> AsyncGenerator[RunEvent]:
        after = -1
        ended_at: float | None = None
        loop = asyncio.get_running_loop()
        store = Store(self.url, read_only=True)
        try:
            while True:
                batch = store.run_events(self.run_id, after=after)
                for seq, data in batch:
                    after = seq
                    event = _event(self.run_id, data)
                    if event is None:
                        continue  # a type this Baton does not know (a newer worker's)
                    yield event
                    if event.type == "result":
                        return
                if batch:
                    continue
                run = store.get_run(self.run_id)
                if run.status in ENDED_RUN_STATUSES:
                    ended_at = loop.time() if ended_at is None else ended_at
                    # A CANCELLED run never reached a worker: no result event will come.
                    if run.status == "CANCELLED" or loop.time() - ended_at >= RESULT_GRACE_SECONDS:
                        yield result_of(run).to_event()
                        return
                await asyncio.sleep(EVENT_POLL_SECONDS)
        finally:
            store.close()

    async def result(self) -> RunResult:
        """Wait for the run to end; its result. Cancellation: safe, writes nothing (the run
        goes on: :meth:`interrupt` stops it)."""
        async for event in self._read():
            if event.type == "result":
                return RunResult.from_event(event)
        raise AssertionError("events() ends with a result event")  # pragma: no cover

    async def interrupt(self, reason: str = "user") -> bool:
        """Stop the run from any host: a run no worker started is cancelled (see
        :meth:`cancel`); a started one has its job aborted through the engine, and the worker
        running it interrupts the turn through the run's own interrupt path (session/cancel,
        then INTERRUPTED, or RECOVERY_REQUIRED when the agent does not confirm in time).
        ``reason`` is recorded on a cancelled run's diagnostic, not on a started one (its
        worker records ``user``). False when the run ended.
        Returns without waiting for the outcome: :meth:`result` has it.

        Cancellation: safe; an abort already asked for stays asked."""
        if await self.cancel(reason):
            return True
        return await self.abort()

    async def abort(self) -> bool:
        """Ask the engine to abort the job of the started run (the worker interrupts the
        turn); False when the run is not active or has no job. Cancellation: safe."""
        with Store(self.url) as store:
            if store.get_run(self.run_id).status not in ACTIVE_RUN_STATUSES:
                return False
            job_id = store.get_submission(self.run_id).job_id
        if job_id is None:
            return False
        app = engine_app(self.url)
        async with app.open_async():
            return bool(await app.job_manager.cancel_job_by_id_async(job_id, abort=True))

    async def expire_if_queued(self, timeout: float) -> bool:
        """End the run CANCELLED with ``BUDGET_EXPIRED`` if no worker started it yet (the
        time it waited in the queue used up ``timeout`` seconds); False when a worker took
        it first (the worker's turn gets only what is left of the bound).

        Cancellation: as :meth:`cancel`."""
        with Store(self.url) as store:
            submission = store.get_submission(self.run_id)
            if submission.job_id is not None:
                app = engine_app(self.url)
                async with app.open_async():
                    await app.job_manager.cancel_job_by_id_async(submission.job_id, delete_job=True)
            return await expire_queued(store, self.run_id, timeout)

    async def cancel(self, reason: str | None = None) -> bool:
        """Cancel the run if it has not started: its job is cancelled and the run becomes
        CANCELLED (error code QUEUED_RUN_CANCELLED). False when a worker already took it (a
        started turn is not cancelled from here).

        Cancellation: cancelling this coroutine before the status write leaves the run QUEUED
        (its job may be cancelled already: a worker then never takes it; call again)."""
        with Store(self.url) as store:
            submission = store.get_submission(self.run_id)
            if submission.job_id is not None:
                app = engine_app(self.url)
                async with app.open_async():
                    await app.job_manager.cancel_job_by_id_async(submission.job_id, delete_job=True)
            try:
                await store.update_run_status(
                    self.run_id,
                    "CANCELLED",
                    expected=("QUEUED",),
                    error_code=CANCELLED_CODE,
                    stop_reason="cancelled",
                    diagnostic="cancelled before a worker started it"
                    + (f" ({reason})" if reason is not None else ""),
                )
            except StoreConflict:
                return False
            return True


async def expire_queued(store: Store, run_id: str, timeout: float) -> bool:
    """QUEUED -> CANCELLED with ``BUDGET_EXPIRED`` (exit 3): the run's ``timeout`` elapsed
    before a worker started it. False when it was no longer QUEUED."""
    try:
        await store.update_run_status(
            run_id,
            "CANCELLED",
            expected=("QUEUED",),
            error_code=BUDGET_EXPIRED_CODE,
            stop_reason="cancelled",
            diagnostic=(
                f"no worker started it within its --timeout of {timeout:g}s (it waited in the "
                "queue the whole time)"
            ),
        )
    except StoreConflict:
        return False
    return True


def remaining_budget(timeout: float, created_at: str, now: datetime | None = None) -> float | None:
    """What is left of a queued run's absolute ``timeout`` after the time it waited since
    ``created_at`` (seconds), or None when nothing is left."""
    try:
        created = datetime.fromisoformat(created_at.replace("Z", "+00:00"))
    except ValueError:
        return timeout
    if created.tzinfo is None:
        created = created.replace(tzinfo=UTC)
    waited = ((now or datetime.now(UTC)) - created).total_seconds()
    left = timeout - max(0.0, waited)
    return left if left > 0 else None


def serving_workers(
    store: Store, queue: str, *, lease_seconds: float = LEASE_SECONDS, now: datetime | None = None
) -> list[str]:
    """The names of the workers that read ``queue`` and are alive: RUNNING, with a heartbeat
    within ``lease_seconds`` as this host's clock reads it."""
    moment = now or datetime.now(UTC)
    names = []
    for worker in store.list_workers():
        if worker.state != "RUNNING" or queue not in worker.queues:
            continue
        try:
            beat = datetime.fromisoformat(worker.heartbeat_at.replace("Z", "+00:00"))
        except ValueError:
            continue
        if beat.tzinfo is None:
            beat = beat.replace(tzinfo=UTC)
        if moment - beat <= timedelta(seconds=lease_seconds):
            names.append(worker.name)
    return names


def _event(run_id: str, data: dict[str, Any]) -> RunEvent | None:
    body = dict(data)
    kind = event_type(body.pop("type", None))
    body.pop("runId", None)
    return None if kind is None else RunEvent(kind, run_id, body)


def result_of(run: Run) -> RunResult:
    """The result of an ended run, from its record (when its worker sent none)."""
    return RunResult(
        run.id,
        run.status,
        run.stop_reason,
        exit_code_of(run_outcome_of(run.status, error_code=run.error_code)),
        error_code=run.error_code,
        message=run.diagnostic or run.recovery_reason,
        session_id=run.session_id,
        skipped_frames=run.skipped_frames,
        violations=run.violations,
    )
