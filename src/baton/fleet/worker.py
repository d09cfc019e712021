"""A worker: runs queued turns with its host's Runtime (warm lanes reused across jobs),
records everything in the shared store, keeps its journals on its own disk. ``baton worker``
is this.

It reads its queues plus its own (``worker:NAME``: the turns of the sessions it holds),
heartbeats into the store (``fleet_workers``) and the engine (procrastinate's workers), and
settles the turns of workers whose heartbeat lapsed (:mod:`baton.fleet.recovery`).

One job, one run, at most once. A job whose run is no longer QUEUED (cancelled, settled) does
nothing. A session's turn that reached a worker not holding the session is re-queued to the
holder, the run still QUEUED and nothing sent (sessions never cross hosts). The run is taken
compare-and-set (QUEUED -> STARTING, owned by this process) by the Runtime before the prompt
is sent; a failure before that fails the run with nothing sent; an unexpected failure after
it leaves the turn RECOVERY_REQUIRED, never re-run.

A database outage (docs/fleet.md). Taking a run waits for the store (bounded; every step is
idempotent or compare-and-set); a turn stopped before its prompt because the store went away
starts again in the same job (START_ATTEMPTS); when a job ends, a run still active in the
store (its end was not recorded) is settled by this worker (``_settle_unended``); a periodic
sweep settles the runs and adopts the jobs this process owns but no job of it is running
(:mod:`baton.fleet.sweep`). The worker judges its peers' heartbeats only after a lease of
its own (``healthy_since``).

Fenced (docs/fleet.md, "Fencing"). Every write of a run this worker took carries its claim;
when the store refuses one (RUN_CLAIM_LOST: a peer settled the run while this worker was
paused or cut off) or a heartbeat finds it LOST, the worker cancels its jobs, takes no more
work and ``baton worker`` exits 10 with one line (:meth:`FleetWorker.fence_off`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import procrastinate
from procrastinate.worker import Worker as EngineWorker

from baton.errors import BatonError, RunClaimLost, StoreConflict, StoreUnavailable
from baton.fleet.engine import (
    HANDLER_CONTEXT_KEY,
    TURN_TASK,
    AbortAsked,
    JobNotStarted,
    engine_app,
    ensure_engine_schema,
    session_lock,
    worker_queue,
)
from baton.fleet.engine_shutdown import INTERRUPT_REASON, GracefulShutdown, engine_timeout
from baton.fleet.limits import (
    HEARTBEAT_SECONDS,
    LEASE_SECONDS,
    MAX_CONCURRENCY,
    SETTLE_SECONDS,
    SHUTDOWN_GRACE_SECONDS,
)
from baton.fleet.queued import REDIRECT_PRIORITY, expire_queued, remaining_budget
from baton.fleet.recovery import settle_lost_workers
from baton.fleet.sweep import OrphanSweep
from baton.runtime.run import Run as RunHandle
from baton.runtime.runtime import RunRequest, RunResult, Runtime
from baton.runtime.turns.events import RunEvent
from baton.runtime.turns.outcome import exit_code_of, refusal_outcome
from baton.store import ACTIVE_RUN_STATUSES, Run, Store
from baton.store.database import utc_now
from baton.store.fleet import Submission
from baton.store.outage import status_written, until_stored
from baton.store.owner import current_host
from baton.wire.budget import TurnBudget

LOG = logging.getLogger("baton.fleet")

#: Seconds between two writes of a running turn's buffered events to the store. Bounds both
#: the delay a waiting submitter sees and the write rate of a streaming turn.
EVENT_FLUSH_SECONDS: Final = 0.1
#: Most events a turn holds for the store while it cannot write them (a database restart);
#: beyond it the oldest are dropped and counted (the run's items keep the output itself).
MAX_BUFFERED_EVENTS: Final = 10_000
#: The engine polls for jobs at least this often (seconds) besides LISTEN/NOTIFY, which it
#: uses first: a lost notification delays a job by at most this.
FETCH_POLL_SECONDS: Final = 1.0
#: How many times one job starts its turn when the store went away before the prompt was
#: sent (the Runtime raised STORE_UNAVAILABLE: nothing reached the agent), each after the
#: store answered again (a bounded wait). Bounds the work a flapping store costs one job;
#: past it the run is FAILED with STORE_UNAVAILABLE, nothing sent.
START_ATTEMPTS: Final = 3
#: Error code of a run whose turn could not start because the store kept going away.
STORE_LOST_BEFORE_START_CODE: Final = "STORE_UNAVAILABLE"
#: The interrupt reason a turn aborted through the engine (``baton cancel``) records.
ABORT_REASON: Final = "user"


@dataclass(frozen=True)
class JobReport:
    """One job's start or end, for the worker's own output (``baton worker`` prints a line
    per report): ``phase`` is ``started`` or ``ended``; an ended job has the run's status
    (and error code and message) when it ran, or ``skipped`` when it was not this worker's to
    run (cancelled, settled, handed to the session's holder)."""

    phase: str
    run_id: str
    session: str | None = None
    status: str | None = None
    error_code: str | None = None
    message: str | None = None
    duration_ms: int = 0
    skipped: bool = False


@dataclass(frozen=True)
class WorkerSettings:
    """How one worker runs."""

    url: str
    name: str
    queues: tuple[str, ...] = ("default",)
    concurrency: int = 1
    data_dir: str | None = None
    workdir: str | None = None
    heartbeat_seconds: float = HEARTBEAT_SECONDS
    lease_seconds: float = LEASE_SECONDS
    #: After SIGTERM, how long running turns have to finish before they are interrupted and
    #: settled (:mod:`baton.fleet.engine_shutdown`).
    shutdown_seconds: float = SHUTDOWN_GRACE_SECONDS
    #: The procrastinate release that installed an engine schema Baton never recorded
    #: (``--engine-schema-from``; :mod:`baton.fleet.engine_schema`).
    engine_schema_from: str | None = None


class EventRelay:
    """A running turn's events on their way to the store, written every
    EVENT_FLUSH_SECONDS (bounded by MAX_BUFFERED_EVENTS while the store cannot take them)."""

    def __init__(self, store: Store, run_id: str) -> None:
        self.store = store
        self.run_id = run_id
        self.pending: list[dict[str, Any]] = []
        self.dropped = 0
        self._task = asyncio.get_running_loop().create_task(self._flush_loop())

    def add(self, event: RunEvent) -> None:
        """Queue one event (called by the Runtime as it happens)."""
        if len(self.pending) >= MAX_BUFFERED_EVENTS:
            self.pending.pop(0)
            self.dropped += 1
        self.pending.append(event.to_dict())

    async def flush(self) -> None:
        """Write what is pending (off the event loop on PostgreSQL: :meth:`Store.offload`);
        on StoreUnavailable keep it for the next flush. RunClaimLost (another worker settled
        the run) drops it: nothing more of this run is written.

        Cancellation: the events taken for the write are lost with the cancelled call (its
        outcome unknown); the relay is being closed then."""
        if not self.pending:
            return
        batch = self.pending
        if self.dropped:
            batch = [{"type": "events_dropped", "count": self.dropped}, *batch]
        self.pending, dropped, self.dropped = [], self.dropped, 0
        try:
            await self.store.offload(lambda: self.store.append_run_events(self.run_id, batch))
        except StoreUnavailable:
            self.pending = [*(batch[1:] if dropped else batch), *self.pending]
            self.dropped += dropped
            return
        except RunClaimLost:
            self.pending = []

    async def _flush_loop(self) -> None:
        while True:
            await asyncio.sleep(EVENT_FLUSH_SECONDS)
            await self.flush()

    async def close(self) -> None:
        """Stop the loop and write the rest, waiting out a store outage (bounded: past it the
        rest is dropped; the run's record keeps its outcome). Cancellation: safe; the loop is
        stopped first."""
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        with contextlib.suppress(StoreUnavailable, RunClaimLost):
            await until_stored(self._flush_or_raise)

    async def _flush_or_raise(self) -> None:
        await self.flush()
        if self.pending:
            raise StoreUnavailable(f"the events of run {self.run_id} could not be written")


class FleetWorker:
    """One worker process's loop (see the module docstring)."""

    def __init__(
        self,
        settings: WorkerSettings,
        *,
        environ: Mapping[str, str] | None = None,
        on_job: Callable[[JobReport], None] | None = None,
    ):
        if not 1 <= settings.concurrency <= MAX_CONCURRENCY:
            raise ValueError(f"concurrency must be 1-{MAX_CONCURRENCY}")
        self.settings = settings
        self.environ = dict(os.environ if environ is None else environ)
        self.name = settings.name
        self.own_queue = worker_queue(settings.name)
        self.runtime: Runtime | None = None
        self.app: procrastinate.App | None = None
        self.engine_worker: EngineWorker | None = None
        #: Set when the store declared this worker LOST, or refused one of its writes because
        #: another worker settled its run (RUN_CLAIM_LOST): it stops its lanes and exits.
        self.lost = False
        #: Why it was fenced off (one line for the operator), once ``lost``.
        self.fenced_reason: str | None = None
        self._work: asyncio.Future[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        #: The runs and the engine's jobs this process is running now (job id -> run id).
        self.running_runs: set[str] = set()
        self.running_jobs: dict[int, str] = {}
        #: Since when (event-loop time) every heartbeat of this worker was written, or None
        #: after one failed: it judges its peers' heartbeats only after a whole lease of its
        #: own (a store outage stops every heartbeat; the peers get a lease to write theirs).
        self.healthy_since: float | None = None
        self._sweep = OrphanSweep()
        self._shutdown: GracefulShutdown | None = None
        self._adopted: set[asyncio.Future[None]] = set()
        #: Called with each job's start and end (``baton worker``'s lines); never raises here.
        self.on_job = on_job

    def _report(self, report: JobReport) -> None:
        if self.on_job is None:
            return
        try:
            self.on_job(report)
        except Exception as exc:  # the output went away: the work goes on
            LOG.warning("job report not shown: %s", type(exc).__name__)

    @property
    def store(self) -> Store:
        """The shared store (the Runtime's)."""
        assert self.runtime is not None and self.runtime.store is not None
        return self.runtime.store

    async def run(self) -> None:
        """Work until SIGTERM/SIGINT (running turns get ``shutdown_seconds`` to finish, then
        are interrupted and settled; a second signal interrupts them at once) or until
        declared LOST.

        Cancellation: running turns are cancelled; the Runtime's close settles them."""
        settings = self.settings
        ensure_engine_schema(settings.url, assume_from=settings.engine_schema_from)
        runtime = Runtime(data_dir=settings.data_dir, store=settings.url, environ=self.environ)
        async with runtime:
            self.runtime = runtime
            self._loop = asyncio.get_running_loop()
            self.store.claim_lost_listeners.append(self._on_claim_lost)
            self.store.register_worker(
                self.name,
                host=current_host(),
                queues=[*settings.queues, self.own_queue],
                concurrency=settings.concurrency,
            )
            self.healthy_since = asyncio.get_running_loop().time()
            app = engine_app(settings.url)
            self.app = app
            try:
                async with app.open_async():
                    engine_worker = EngineWorker(
                        app,
                        queues=[*settings.queues, self.own_queue],
                        concurrency=settings.concurrency,
                        name=self.name,
                        additional_context={HANDLER_CONTEXT_KEY: self.run_job},
                        update_heartbeat_interval=settings.heartbeat_seconds,
                        stalled_worker_timeout=settings.lease_seconds,
                        fetch_job_polling_interval=FETCH_POLL_SECONDS,
                        # Every outcome is the run's, in the store: no job row is kept.
                        delete_jobs="always",
                        shutdown_graceful_timeout=engine_timeout(settings.shutdown_seconds),
                        install_signal_handlers=False,
                    )
                    self.engine_worker = engine_worker
                    shutdown = GracefulShutdown(engine_worker.stop, settings.shutdown_seconds)
                    self._shutdown = shutdown
                    shutdown.install()
                    work = asyncio.ensure_future(engine_worker.run())  # type: ignore[no-untyped-call]
                    self._work = work
                    keepers = [
                        asyncio.ensure_future(self._heartbeat(work)),
                        asyncio.ensure_future(self._settle_loop()),
                    ]
                    try:
                        with contextlib.suppress(asyncio.CancelledError):
                            await work
                        if not self.lost:
                            work.result()
                    finally:
                        shutdown.uninstall()
                        for task in keepers:
                            task.cancel()
                        await asyncio.gather(*keepers, return_exceptions=True)
                        await asyncio.gather(*self._adopted, return_exceptions=True)
            finally:
                if not self.lost:
                    with contextlib.suppress(BatonError):
                        self.store.end_worker(self.name, "STOPPED")

    async def _heartbeat(self, work: asyncio.Future[None]) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(self.settings.heartbeat_seconds)
            try:
                await self.store.offload(lambda: self.store.worker_heartbeat(self.name))
            except StoreUnavailable as exc:
                self.healthy_since = None
                LOG.warning("heartbeat not recorded: %s", exc)
            except StoreConflict as exc:
                # Declared LOST: its turns were settled elsewhere; stop taking work.
                self.fence_off(f"the store declared it lost ({exc.message})")
                return
            else:
                if self.healthy_since is None:
                    self.healthy_since = loop.time()

    def _on_claim_lost(self, error: RunClaimLost) -> None:
        """A write of this worker was refused because another worker settled its run (the
        store calls this from the thread that wrote)."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(self.fence_off, error.message)

    def fence_off(self, reason: str) -> None:
        """Stop this worker for good: its claims are stale (a peer settled its turns while it
        was paused or cut off). Its running jobs are cancelled (their lanes stop; every write
        they still attempt is refused), it takes no more work and ``baton worker`` exits with
        its own code (docs/fleet.md, "Fencing"). Idempotent."""
        if self.lost:
            return
        self.lost = True
        self.fenced_reason = reason
        if self._work is not None:
            self._work.cancel()

    async def _settle_loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(SETTLE_SECONDS)
            healthy = self.healthy_since
            if healthy is not None and loop.time() - healthy >= self.settings.lease_seconds:
                await self._guarded("settling lost workers", self._settle_lost)
            await self._guarded("sweeping orphaned runs and jobs", self._sweep_orphans)

    async def _guarded(self, what: str, step: Any) -> None:
        """Run one periodic step; a failure (the store or the engine away) waits for the
        next pass."""
        try:
            await step()
        except (BatonError, OSError) as exc:
            LOG.warning("%s failed: %s", what, exc)
        except Exception as exc:  # the engine's own errors (a database restart)
            LOG.warning("%s failed: %s", what, type(exc).__name__)

    async def _settle_lost(self) -> None:
        settled = await settle_lost_workers(self.store, self.app, self.settings.lease_seconds)
        if settled:
            LOG.warning("settled the runs of lost workers: %s", ", ".join(settled))

    async def _sweep_orphans(self) -> None:
        """This worker's own loose ends (:mod:`baton.fleet.sweep`)."""
        settled = await self._sweep.settle_runs(self.store, self.running_runs)
        if settled:
            LOG.warning("settled orphaned runs: %s", ", ".join(settled))
        engine_worker = self.engine_worker
        if self.app is None or engine_worker is None or engine_worker.worker_id is None:
            return
        orphans = await self._sweep.orphaned_jobs(
            self.app, engine_worker.worker_id, self.running_jobs
        )
        for job_id, run_id in orphans:
            LOG.warning("adopting job %s (run %s): the engine lost its state", job_id, run_id)
            task = asyncio.ensure_future(self._adopt(job_id, run_id))
            self._adopted.add(task)
            task.add_done_callback(self._adopted.discard)

    async def _adopt(self, job_id: int, run_id: str | None) -> None:
        """Run an orphaned job's handler here (it does nothing unless its run is still
        QUEUED), then finish the job (which releases its session lock)."""
        assert self.app is not None
        manager = self.app.job_manager
        status = procrastinate.jobs.Status.FAILED
        try:
            if run_id is not None and run_id not in self.running_runs:
                try:
                    await self.run_job(run_id, job_id)
                    status = procrastinate.jobs.Status.SUCCEEDED
                except JobNotStarted:
                    # Nothing was taken or sent: back to the queue, as the engine would.
                    await manager.retry_job_by_id_async(job_id, retry_at=utc_now())
                    return
                except Exception as exc:
                    LOG.warning("adopted job %s failed: %s", job_id, type(exc).__name__)
            await manager.finish_job_by_id_async(job_id, status=status, delete_job=True)
        except Exception as exc:  # the engine or the store away again: the next pass adopts it
            LOG.warning("adopted job %s not finished: %s", job_id, type(exc).__name__)

    async def run_job(
        self, run_id: str, job_id: int, abort_asked: AbortAsked = lambda: False
    ) -> None:
        """Run the queued run ``run_id`` (one job of the engine; see the module docstring).

        Cancellation: when ``abort_asked()`` (``baton cancel``: the engine cancels an
        aborted job's task) the turn is interrupted through the run's normal interrupt path
        (session/cancel, the interrupt deadline) and this waits for its outcome; any other
        cancellation abandons the turn (INTERRUPTED or RECOVERY_REQUIRED, never re-run)."""
        self.running_jobs[job_id] = run_id
        self.running_runs.add(run_id)
        task = asyncio.current_task()
        turns: set[asyncio.Task[Any]] = set() if self._shutdown is None else self._shutdown.tasks
        if task is not None:
            turns.add(task)
        try:
            await self._run_job(run_id, abort_asked)
        except Exception as exc:
            if not self.lost:
                raise
            # Fenced off: the run was settled by a peer; what failed here is moot.
            LOG.debug("job %s of a fenced worker ended: %s", job_id, type(exc).__name__)
        finally:
            self.running_jobs.pop(job_id, None)
            self.running_runs.discard(run_id)
            if task is not None:
                turns.discard(task)

    async def _take(self, run_id: str) -> tuple[Submission, str | None] | None:
        """Take the queued run for this worker (safe to repeat: every step is idempotent or
        compare-and-set); its submission and the provider session to attach, or None when
        it is not this worker's to run (cancelled, settled, or its session's turn handed to
        the worker holding the session). StoreConflict when another worker took it."""
        store = self.store
        submission = store.get_submission(run_id)
        if store.get_run(run_id).status != "QUEUED":
            return None  # cancelled or settled before it started: never run
        attach: str | None = None
        if submission.session_name is not None:
            pinned = store.pin_session(
                submission.session_name, worker=self.name, queue=self.own_queue
            )
            if pinned.worker != self.name:
                await self._redirect(run_id, pinned.queue, submission.session_name)
                return None
            attach = pinned.provider_session_id
        store.take_submission(run_id, self.name)
        return submission, attach

    async def _run_job(self, run_id: str, abort_asked: AbortAsked) -> None:
        store = self.store
        try:
            taken = await until_stored(lambda: self._take(run_id))
        except StoreConflict:
            return  # another worker has it (a duplicate job): at most once
        except StoreUnavailable as exc:
            # Nothing was taken or sent: the engine runs the job again (JobNotStarted).
            raise JobNotStarted(run_id) from exc
        if taken is None:
            self._report(JobReport("ended", run_id, skipped=True))
            return
        submission, attach = taken
        run = store.get_run(run_id)
        asked = submission.request
        timeout = asked.get("timeout")
        if timeout is not None:
            # --timeout bounds the time the run spent queued too: the turn gets what is left.
            timeout = remaining_budget(float(timeout), run.created_at)
            if timeout is None:
                await expire_queued(store, run_id, float(asked["timeout"]))
                self._report(JobReport("ended", run_id, submission.session_name, "CANCELLED"))
                return
        self._report(JobReport("started", run_id, submission.session_name))
        request = RunRequest(
            prompt=run.prompt_text,
            agent=asked.get("agent"),
            agent_command=asked.get("agent_command"),
            env_keys=tuple(asked.get("env_keys") or ()),
            cwd=asked.get("cwd") or self.settings.workdir,
            policy=asked.get("policy") or "ask",
            allow_unattended=bool(asked.get("allow_unattended")),
            mode=asked.get("mode"),
            model=asked.get("model"),
            effort=asked.get("effort"),
            budget=TurnBudget(idle=asked.get("idle_timeout"), absolute=timeout),
            attach_session=attach,
            queued_run_id=run_id,
            workspace=asked.get("workspace"),
            base=asked.get("base"),
            require_clean=bool(asked.get("require_clean")),
            session=submission.session_name,
        )
        result = await self._start_turn(run_id, request, abort_asked)
        self._report_end(run_id, submission.session_name, result)
        if (
            result is not None
            and submission.session_name is not None
            and result.provider_session_id
            and result.status == "COMPLETED"
        ):
            session_name, provider_session_id = submission.session_name, result.provider_session_id

            async def pin() -> None:
                store.set_pinned_provider_session(session_name, provider_session_id)

            with contextlib.suppress(StoreUnavailable):
                await until_stored(pin)

    def _report_end(self, run_id: str, session: str | None, result: RunResult | None) -> None:
        if result is not None:
            self._report(
                JobReport(
                    "ended",
                    run_id,
                    session,
                    result.status,
                    result.error_code,
                    result.message,
                    result.duration_ms,
                )
            )
            return
        try:
            run = self.store.get_run(run_id)
        except BatonError:
            self._report(JobReport("ended", run_id, session))
            return
        self._report(
            JobReport(
                "ended",
                run_id,
                session,
                run.status,
                run.error_code,
                run.diagnostic or run.recovery_reason,
            )
        )

    async def _start_turn(
        self, run_id: str, request: RunRequest, abort_asked: AbortAsked
    ) -> RunResult | None:
        """Run the taken turn; its result, or None when it raised. However it ends, its run
        leaves the active statuses before this returns unless the store stays away past
        every bounded wait (then the sweep settles it, :mod:`baton.fleet.sweep`)."""
        assert self.runtime is not None
        for attempt in range(1, START_ATTEMPTS + 1):
            relay = EventRelay(self.store, run_id)
            try:
                result = await self._turn(request, relay, abort_asked)
            except StoreConflict:
                return None  # no longer ours when the Runtime came to take it: never run
            except StoreUnavailable as exc:
                # The Runtime raises it only before a prompt is sent. Wait for the store and
                # start again: the Runtime takes the run again only if no prompt of it was
                # sent (STARTING, this process's, no prompt reference).
                LOG.warning(
                    "run %s: the store went away before the prompt was sent (attempt %d of %d): %s",
                    run_id,
                    attempt,
                    START_ATTEMPTS,
                    exc,
                )
                if attempt == START_ATTEMPTS or not await self._store_back():
                    await self._settle_unended(run_id, None, exc)
                    return None
                continue
            except BatonError as exc:
                await self._fail_unstarted(
                    run_id, exc.code, exc.message, exit_code_of(refusal_outcome(exc)), relay
                )
                return None
            except Exception as exc:
                await self._settle_unended(run_id, None, exc)
                raise
            finally:
                await relay.close()
            await self._settle_unended(run_id, result, None)
            return result
        return None  # pragma: no cover - the loop returns on its last attempt

    async def _turn(
        self, request: RunRequest, relay: EventRelay, abort_asked: AbortAsked
    ) -> RunResult:
        """The turn's result, its handle known to the graceful shutdown while the turn runs (a
        stopping worker interrupts it, :mod:`baton.fleet.engine_shutdown`).

        Cancellation: as :func:`_until_ended`: a user's abort interrupts the turn and waits for
        its outcome; any other cancellation abandons it (recorded RECOVERY_REQUIRED)."""
        assert self.runtime is not None
        handle = await self.runtime.start(request, on_event=relay.add)
        runs = set() if self._shutdown is None else self._shutdown.runs
        runs.add(handle)
        try:
            if self._shutdown is not None and self._shutdown.interrupting:
                handle.interrupt_nowait(INTERRUPT_REASON)  # started as the worker stops
            return await _until_ended(handle, abort_asked)
        finally:
            runs.discard(handle)

    async def _store_back(self) -> bool:
        """Wait (bounded) until the store answers again; False when it did not."""

        async def read() -> None:
            self.store.list_workers()

        try:
            await until_stored(read)
        except StoreUnavailable:
            return False
        return True

    async def _settle_unended(
        self, run_id: str, result: RunResult | None, error: BaseException | None
    ) -> None:
        """The turn is over in this process: if its run is still active in the store (the
        writes of its end were lost with the store), record how it ended, waiting out the
        outage (bounded; past it the sweep settles it). With the turn's result that is the
        result's status. Without one: FAILED when the store went away before the prompt was
        sent (STARTING, no prompt reference), else RECOVERY_REQUIRED (the prompt may have
        gone out; never re-run)."""
        store = self.store
        try:
            run: Run = await until_stored(_reader(store, run_id))
            if run.status == "QUEUED" and error is not None:
                # The Runtime failed before it took the run: nothing was sent.
                await status_written(
                    store,
                    run_id,
                    "FAILED",
                    expected=("QUEUED",),
                    error_code=(
                        STORE_LOST_BEFORE_START_CODE
                        if isinstance(error, StoreUnavailable)
                        else "WORKER_FAILED"
                    ),
                    diagnostic=f"the turn could not start: {type(error).__name__}",
                )
                return
            if run.status not in ACTIVE_RUN_STATUSES:
                return
            if result is not None:
                await status_written(
                    store,
                    run_id,
                    result.status,
                    expected=ACTIVE_RUN_STATUSES,
                    stop_reason=result.stop_reason,
                    error_code=result.error_code,
                    diagnostic=result.message if result.status != "RECOVERY_REQUIRED" else None,
                    recovery_reason=(
                        result.message if result.status == "RECOVERY_REQUIRED" else None
                    ),
                )
            elif (
                isinstance(error, StoreUnavailable)
                and run.status == "STARTING"
                and run.prompt_ref is None
            ):
                await status_written(
                    store,
                    run_id,
                    "FAILED",
                    expected=("STARTING",),
                    error_code=STORE_LOST_BEFORE_START_CODE,
                    diagnostic=f"the store kept going away before the prompt was sent: {error}",
                )
            else:
                await status_written(
                    store,
                    run_id,
                    "RECOVERY_REQUIRED",
                    expected=ACTIVE_RUN_STATUSES,
                    error_code="WORKER_FAILED",
                    recovery_reason=(
                        f"the worker failed during the turn: {type(error).__name__}; the "
                        "prompt may have reached the agent, so it is not run again"
                    ),
                )
        except (StoreConflict, StoreUnavailable) as exc:
            LOG.warning("run %s not settled here (%s); the sweep will", run_id, exc.code)

    async def _redirect(self, run_id: str, queue: str, session: str) -> None:
        assert self.app is not None
        task = self.app.tasks[TURN_TASK]
        job_id = await task.configure(
            queue=queue, lock=session_lock(session), priority=REDIRECT_PRIORITY
        ).defer_async(run_id=run_id)
        self.store.set_submission_job(run_id, job_id)

    async def _fail_unstarted(
        self, run_id: str, code: str, message: str, exit_code: int, relay: EventRelay
    ) -> None:
        """The Runtime raised instead of returning a result: it failed before any prompt was
        sent (agent, policy, cwd, or taking the run, whose commit may have gone through). The
        result event carries the exit code `baton run` gives the same refusal (an agent that
        is not installed: 5; the caller's mistake: 2)."""
        store = self.store
        with contextlib.suppress(StoreConflict, StoreUnavailable):
            run = await store.update_run_status(
                run_id,
                "FAILED",
                expected=("QUEUED", "STARTING"),
                error_code=code,
                diagnostic=message,
            )
            relay.add(
                RunEvent(
                    "result",
                    run_id,
                    {
                        "status": run.status,
                        "exitCode": exit_code,
                        "errorCode": code,
                        "message": message,
                    },
                )
            )


async def _until_ended(handle: RunHandle, abort_asked: AbortAsked) -> RunResult:
    """The turn's result. A cancellation that is an abort asked for by a user (``baton
    cancel``) interrupts the turn through the run's own interrupt path and waits for its
    outcome (bounded by the run's interrupt deadline); any other cancellation abandons the
    run and propagates.

    Cancellation: see above; the run always ends before this returns or raises."""
    while True:
        try:
            return await handle.result()
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if not abort_asked() or handle.done:
                with contextlib.suppress(asyncio.CancelledError):
                    await handle.abandon()
                raise
            if task is not None:
                task.uncancel()
            LOG.info("run %s: abort asked; interrupting the turn", handle.id)
            handle.interrupt_nowait(ABORT_REASON)


def _reader(store: Store, run_id: str) -> Any:
    async def read() -> Run:
        return store.get_run(run_id)

    return read


def default_worker_name() -> str:
    """``HOST-PID``: unique among the workers of a fleet."""
    return f"{current_host()}-{os.getpid()}"


def queues_of(values: Sequence[str] | None) -> tuple[str, ...]:
    """The queues a worker reads: those named (comma-separated allowed), else ``default``."""
    names = [name.strip() for value in values or () for name in value.split(",")]
    return tuple(name for name in names if name) or ("default",)
