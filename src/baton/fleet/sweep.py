"""A live worker's own loose ends after its store or its job engine lost writes (a database
restart): runs it owns that no job of its process is running any more, and jobs the engine
marks as its own that its process never received or never finished.

The lease (:mod:`baton.fleet.recovery`) settles the work of a worker that stopped; nothing
settles the work of a worker that is alive except the worker itself, so every worker runs
:class:`OrphanSweep` periodically:

- **Runs.** A run this process owns (``owner``: it took it) in an active status
  (STARTING .. INTERRUPTING) that no job of this process is running is an orphan: the job's
  own settling write did not land within its bounded wait. It becomes RECOVERY_REQUIRED with
  RUN_ORPHANED (its prompt may have reached the agent: Baton never replays it).
- **Jobs.** A job the engine marks ``doing`` for this worker that no job of this process is
  running is an orphan: its fetch committed but the answer was lost with the connection, or
  its worker's final write (finished, or to be retried) did not land. The worker *adopts*
  it: runs the job's handler (which does nothing unless the run is still QUEUED, and takes it
  compare-and-set as always), then finishes the job, which releases its session lock.

Either is acted on only when two passes in a row found it (one pass apart,
:data:`~baton.fleet.limits.SETTLE_SECONDS`): a job just fetched and not yet started, or just
ended and being finished, is in neither set for a moment.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Final

import procrastinate

from baton.errors import RecordNotFound, StoreConflict
from baton.store import ACTIVE_RUN_STATUSES, Store

#: Error code of a run settled by its own worker's sweep (see the module docstring).
RUN_ORPHANED_CODE: Final = "RUN_ORPHANED"
#: Most runs, and most jobs, one pass looks at: bounds one pass's reads on a worker that owns
#: many (a worker runs at most MAX_CONCURRENCY jobs; more orphans wait for the next pass).
MAX_SWEPT: Final = 256

#: The engine's jobs marked as being run by one engine worker (procrastinate's table).
_DOING_JOBS: Final = (
    "SELECT id, args FROM procrastinate_jobs "
    "WHERE status = 'doing' AND worker_id = %(worker_id)s ORDER BY id LIMIT %(limit)s"
)


class OrphanSweep:
    """What one worker found unowned on its previous pass (see the module docstring)."""

    def __init__(self) -> None:
        self._suspect_runs: set[str] = set()
        self._suspect_jobs: set[int] = set()

    async def settle_runs(self, store: Store, running: Collection[str]) -> list[str]:
        """Settle this process's orphaned runs (``running``: the run ids its jobs are
        running now); the run ids settled."""
        owned = store.list_runs(owner=store.owner, status=ACTIVE_RUN_STATUSES, limit=MAX_SWEPT)
        orphans = {run.id for run in owned if run.id not in running}
        confirmed = orphans & self._suspect_runs
        self._suspect_runs = orphans - confirmed
        settled = []
        for run_id in sorted(confirmed):
            if await settle_orphaned_run(store, run_id):
                settled.append(run_id)
        return settled

    async def orphaned_jobs(
        self, app: procrastinate.App, engine_worker_id: int, running: Collection[int]
    ) -> list[tuple[int, str | None]]:
        """The engine's jobs marked as run by ``engine_worker_id`` that none of this
        process's jobs is running (``running``: their job ids), found on two passes in a row:
        ``(job id, run id)``."""
        rows = await app.connector.execute_query_all_async(
            _DOING_JOBS, worker_id=engine_worker_id, limit=MAX_SWEPT
        )
        found: dict[int, str | None] = {}
        for row in rows:
            job_id = int(row["id"])
            if job_id not in running:
                found[job_id] = job_row_run_id(row)
        confirmed = [
            (job_id, run_id) for job_id, run_id in found.items() if job_id in self._suspect_jobs
        ]
        self._suspect_jobs = set(found) - {job_id for job_id, _ in confirmed}
        return confirmed


async def settle_orphaned_run(store: Store, run_id: str) -> bool:
    """Move one orphaned run to RECOVERY_REQUIRED (compare-and-set from the active statuses);
    False when it needed nothing (it ended meanwhile, or is gone)."""
    try:
        await store.update_run_status(
            run_id,
            "RECOVERY_REQUIRED",
            expected=ACTIVE_RUN_STATUSES,
            error_code=RUN_ORPHANED_CODE,
            recovery_reason=(
                "its worker lost the connection to the store while the turn ran and could not "
                "record how it ended; the prompt may have reached the agent, so it is not run "
                "again"
            ),
        )
    except (StoreConflict, RecordNotFound):
        return False
    return True


def job_row_run_id(row: dict[str, Any]) -> str | None:
    """The run id a job's arguments name, or None."""
    run_id = (row.get("args") or {}).get("run_id")
    return run_id if isinstance(run_id, str) else None
