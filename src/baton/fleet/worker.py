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
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import procrastinate

from baton.errors import BatonError, StoreConflict, StoreUnavailable
from baton.fleet.engine import (
    HANDLER_CONTEXT_KEY,
    TURN_TASK,
    JobNotStarted,
    engine_app,
    ensure_engine_schema,
    session_lock,
    worker_queue,
)
from baton.fleet.limits import HEARTBEAT_SECONDS, LEASE_SECONDS, MAX_CONCURRENCY, SETTLE_SECONDS
from baton.fleet.queued import REDIRECT_PRIORITY
from baton.fleet.recovery import settle_lost_workers
from baton.runtime.runtime import RunRequest, Runtime
from baton.runtime.turns.events import RunEvent
from baton.store import ACTIVE_RUN_STATUSES, Store
from baton.store.owner import current_host

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

    def flush(self) -> None:
        """Write what is pending; on StoreUnavailable keep it for the next flush."""
        if not self.pending:
            return
        batch = self.pending
        if self.dropped:
            batch = [{"type": "events_dropped", "count": self.dropped}, *batch]
        try:
            self.store.append_run_events(self.run_id, batch)
        except StoreUnavailable:
            return
        self.pending = []
        self.dropped = 0

    async def _flush_loop(self) -> None:
        while True:
            await asyncio.sleep(EVENT_FLUSH_SECONDS)
            self.flush()

    async def close(self) -> None:
        """Stop the loop and write the rest. Cancellation: safe; the rest is written first."""
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self.flush()


class FleetWorker:
    """One worker process's loop (see the module docstring)."""

    def __init__(self, settings: WorkerSettings, *, environ: Mapping[str, str] | None = None):
        if not 1 <= settings.concurrency <= MAX_CONCURRENCY:
            raise ValueError(f"concurrency must be 1-{MAX_CONCURRENCY}")
        self.settings = settings
        self.environ = dict(os.environ if environ is None else environ)
        self.name = settings.name
        self.own_queue = worker_queue(settings.name)
        self.runtime: Runtime | None = None
        self.app: procrastinate.App | None = None
        #: Set when the store declared this worker LOST: it stops taking work.
        self.lost = False

    @property
    def store(self) -> Store:
        """The shared store (the Runtime's)."""
        assert self.runtime is not None and self.runtime.store is not None
        return self.runtime.store

    async def run(self) -> None:
        """Work until SIGTERM/SIGINT (running turns finish first) or until declared LOST.

        Cancellation: running turns are cancelled; the Runtime's close settles them."""
        settings = self.settings
        ensure_engine_schema(settings.url)
        runtime = Runtime(data_dir=settings.data_dir, store=settings.url, environ=self.environ)
        async with runtime:
            self.runtime = runtime
            self.store.register_worker(
                self.name,
                host=current_host(),
                queues=[*settings.queues, self.own_queue],
                concurrency=settings.concurrency,
            )
            app = engine_app(settings.url)
            self.app = app
            try:
                async with app.open_async():
                    work = asyncio.ensure_future(
                        app.run_worker_async(
                            queues=[*settings.queues, self.own_queue],
                            concurrency=settings.concurrency,
                            name=self.name,
                            additional_context={HANDLER_CONTEXT_KEY: self.run_job},
                            update_heartbeat_interval=settings.heartbeat_seconds,
                            stalled_worker_timeout=settings.lease_seconds,
                            fetch_job_polling_interval=FETCH_POLL_SECONDS,
                            delete_jobs="never",
                            install_signal_handlers=True,
                        )
                    )
                    keepers = [
                        asyncio.ensure_future(self._heartbeat(work)),
                        asyncio.ensure_future(self._settle_loop()),
                    ]
                    try:
                        await work
                    finally:
                        for task in keepers:
                            task.cancel()
                        await asyncio.gather(*keepers, return_exceptions=True)
            finally:
                if not self.lost:
                    with contextlib.suppress(BatonError):
                        self.store.end_worker(self.name, "STOPPED")

    async def _heartbeat(self, work: asyncio.Future[None]) -> None:
        while True:
            await asyncio.sleep(self.settings.heartbeat_seconds)
            try:
                self.store.worker_heartbeat(self.name)
            except StoreUnavailable as exc:
                LOG.warning("heartbeat not recorded: %s", exc)
            except StoreConflict:
                # Declared LOST: its turns were settled elsewhere; stop taking work.
                LOG.error("worker %s was declared lost; stopping", self.name)
                self.lost = True
                work.cancel()
                return

    async def _settle_loop(self) -> None:
        while True:
            await asyncio.sleep(SETTLE_SECONDS)
            try:
                settled = await settle_lost_workers(
                    self.store, self.app, self.settings.lease_seconds
                )
            except (BatonError, OSError) as exc:
                LOG.warning("settling lost workers failed: %s", exc)
                continue
            except Exception as exc:  # the engine's own errors (a database restart)
                LOG.warning("settling lost workers failed: %s", type(exc).__name__)
                continue
            if settled:
                LOG.warning("settled the runs of lost workers: %s", ", ".join(settled))

    async def run_job(self, run_id: str, job_id: int) -> None:
        """Run the queued run ``run_id`` (one job of the engine; see the module docstring).

        Cancellation: the Runtime interrupts the turn; its run ends INTERRUPTED or
        RECOVERY_REQUIRED, never re-run."""
        store = self.store
        try:
            submission = store.get_submission(run_id)
            if store.get_run(run_id).status != "QUEUED":
                return  # cancelled or settled before it started: never run
            attach: str | None = None
            if submission.session_name is not None:
                pinned = store.pin_session(
                    submission.session_name, worker=self.name, queue=self.own_queue
                )
                if pinned.worker != self.name:
                    await self._redirect(run_id, pinned.queue, submission.session_name)
                    return
                attach = pinned.provider_session_id
            store.take_submission(run_id, self.name)
        except StoreConflict:
            return  # another worker has it (a duplicate job): at most once
        except StoreUnavailable as exc:
            # Nothing was taken or sent: the engine runs the job again (JobNotStarted).
            raise JobNotStarted(run_id) from exc
        run = store.get_run(run_id)
        asked = submission.request
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
            idle_timeout=asked.get("idle_timeout"),
            timeout=asked.get("timeout"),
            attach_session=attach,
            queued_run_id=run_id,
        )
        relay = EventRelay(store, run_id)
        try:
            assert self.runtime is not None
            result = await self.runtime.run(request, on_event=relay.add)
        except StoreConflict:
            return  # no longer QUEUED when the Runtime came to take it: never run
        except StoreUnavailable as exc:
            # The Runtime raises only before a prompt is sent: the engine runs the job again,
            # and the Runtime takes the run again only if no prompt of it was sent.
            raise JobNotStarted(run_id) from exc
        except BatonError as exc:
            await self._fail_unstarted(run_id, exc.code, exc.message, relay)
            return
        except Exception as exc:
            await self._settle_after_crash(run_id, exc)
            raise
        finally:
            await relay.close()
        if (
            submission.session_name is not None
            and result.provider_session_id
            and result.status == "COMPLETED"
        ):
            store.set_pinned_provider_session(submission.session_name, result.provider_session_id)

    async def _redirect(self, run_id: str, queue: str, session: str) -> None:
        assert self.app is not None
        task = self.app.tasks[TURN_TASK]
        job_id = await task.configure(
            queue=queue, lock=session_lock(session), priority=REDIRECT_PRIORITY
        ).defer_async(run_id=run_id)
        self.store.set_submission_job(run_id, job_id)

    async def _fail_unstarted(
        self, run_id: str, code: str, message: str, relay: EventRelay
    ) -> None:
        """The Runtime raised instead of returning a result: it failed before any prompt was
        sent (agent, policy, cwd, or taking the run, whose commit may have gone through)."""
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
                    {"status": run.status, "exitCode": 1, "errorCode": code, "message": message},
                )
            )

    async def _settle_after_crash(self, run_id: str, exc: Exception) -> None:
        """An unexpected failure: a started turn's outcome is unknown (RECOVERY_REQUIRED)."""
        with contextlib.suppress(BatonError):
            run = self.store.get_run(run_id)
            if run.status in ACTIVE_RUN_STATUSES:
                await self.store.update_run_status(
                    run_id,
                    "RECOVERY_REQUIRED",
                    expected=ACTIVE_RUN_STATUSES,
                    error_code="WORKER_FAILED",
                    recovery_reason=f"the worker failed during the turn: {type(exc).__name__}",
                )
            elif run.status == "QUEUED":
                await self.store.update_run_status(
                    run_id, "FAILED", expected=("QUEUED",), error_code="WORKER_FAILED"
                )


def default_worker_name() -> str:
    """``HOST-PID``: unique among the workers of a fleet."""
    return f"{current_host()}-{os.getpid()}"


def queues_of(values: Sequence[str] | None) -> tuple[str, ...]:
    """The queues a worker reads: those named (comma-separated allowed), else ``default``."""
    names = [name.strip() for value in values or () for name in value.split(",")]
    return tuple(name for name in names if name) or ("default",)
