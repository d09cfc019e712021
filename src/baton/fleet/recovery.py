"""What happens to the turns of a worker that stopped heartbeating: the application's decision
about a stalled job, which the job engine leaves to it (docs/fleet.md, "At most once").

Every worker runs :func:`settle_lost_workers` periodically. A worker whose heartbeat is older
than the lease is moved RUNNING -> LOST (compare-and-set: one settler wins), then:

- its turns in flight (STARTING .. INTERRUPTING, owned by its process) become
  RECOVERY_REQUIRED with WORKER_LOST: the prompt may have reached the agent, so Baton never
  replays it; ``baton recover`` settles it;
- the runs it took but had not started (still QUEUED) become FAILED with
  WORKER_LOST_BEFORE_START: nothing was sent, nothing is replayed automatically either
  (submit again).

The engine's stalled jobs (procrastinate's own heartbeats) whose run was taken by a worker
Baton declared LOST are finished as failed, never retried, which also releases their session
locks; their runs are settled as above. Baton's lease decides, not the engine's view alone.
A worker that was declared LOST while alive (a paused host) learns it at its next heartbeat
or its next write for a settled run, which the store refuses: settling moved the run's claim
on (the epoch, :mod:`baton.store.database`, "Fencing"), and the stale worker stops.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Final

import procrastinate

from baton.durable.timestamps import format_timestamp
from baton.errors import RecordNotFound, StoreConflict
from baton.store import ACTIVE_RUN_STATUSES, Store
from baton.store.database import utc_now

#: Error code of a turn in flight on a worker that was lost.
WORKER_LOST_CODE: Final = "WORKER_LOST"
#: Error code of a run a lost worker had taken but not started (nothing was sent).
WORKER_LOST_BEFORE_START_CODE: Final = "WORKER_LOST_BEFORE_START"


async def settle_run(store: Store, run_id: str, worker: str) -> str | None:
    """Settle one run of a lost worker (see the module docstring); its new status, or None
    when it needed nothing (already ended, or another settler won)."""
    try:
        run = store.get_run(run_id)
    except RecordNotFound:
        return None
    try:
        if run.status in ACTIVE_RUN_STATUSES:
            await store.update_run_status(
                run_id,
                "RECOVERY_REQUIRED",
                expected=ACTIVE_RUN_STATUSES,
                error_code=WORKER_LOST_CODE,
                recovery_reason=(
                    f"worker {worker} stopped heartbeating during the turn; the prompt may "
                    "have reached the agent, so it is not run again"
                ),
            )
            return "RECOVERY_REQUIRED"
        if run.status == "QUEUED":
            await store.update_run_status(
                run_id,
                "FAILED",
                expected=("QUEUED",),
                error_code=WORKER_LOST_BEFORE_START_CODE,
                diagnostic=f"worker {worker} was lost before it started the turn (nothing was sent)",
            )
            return "FAILED"
    except StoreConflict:
        return None
    return None


async def settle_lost_workers(
    store: Store,
    app: procrastinate.App | None,
    lease_seconds: float,
    *,
    now: datetime | None = None,
) -> list[str]:
    """Declare workers past their lease LOST and settle their runs and jobs; the run ids
    settled."""
    cutoff = format_timestamp((now or utc_now()) - timedelta(seconds=lease_seconds))
    settled: list[str] = []
    for worker in store.list_workers():
        if worker.state != "RUNNING" or worker.heartbeat_at >= cutoff:
            continue
        if not store.end_worker(worker.name, "LOST"):
            continue  # another worker settled it first
        for run in store.list_runs(owner=worker.owner, status=ACTIVE_RUN_STATUSES):
            if await settle_run(store, run.id, worker.name) is not None:
                settled.append(run.id)
        for submission in store.submissions_taken_by(worker.name):
            if await settle_run(store, submission.run_id, worker.name) is not None:
                settled.append(submission.run_id)
    if app is not None:
        settled.extend(await _settle_stalled_jobs(store, app, lease_seconds))
    return settled


async def _settle_stalled_jobs(
    store: Store, app: procrastinate.App, lease_seconds: float
) -> list[str]:
    """Finish the engine's stalled jobs whose run's worker Baton declared LOST (its own
    lease decides, not the engine's view alone), settling their runs as above."""
    settled: list[str] = []
    manager: Any = app.job_manager
    for job in await manager.get_stalled_jobs(seconds_since_heartbeat=lease_seconds):
        run_id = job.task_kwargs.get("run_id")
        submission = store.find_submission(run_id) if isinstance(run_id, str) else None
        if submission is None or submission.worker is None:
            continue  # not taken: nothing of it ran; its holder, if alive, goes on
        try:
            holder = store.get_worker(submission.worker)
        except RecordNotFound:
            continue
        if holder.state != "LOST":
            continue
        # Deleted once finished, like every job (the run's record keeps WORKER_LOST).
        await manager.finish_job_by_id_async(
            job.id, status=procrastinate.jobs.Status.FAILED, delete_job=True
        )
        if await settle_run(store, submission.run_id, holder.name) is not None:
            settled.append(submission.run_id)
    return settled
