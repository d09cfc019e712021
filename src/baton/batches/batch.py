"""``baton.Batch``: build, run, follow, resume, cancel and export a batch from Python.

>>> async with Runtime() as runtime:                                     # doctest: +SKIP
...     batch = Batch.create(runtime, load_spec("eval.toml"))
...     summary = await batch.run(jobs=4, on_cell_end=print)
...     print(batch.export("csv"))

A batch is a record in the runtime's store (docs/batches.md): :meth:`Batch.open` finds it
again in another process, after a crash too, and :meth:`Batch.run` on it is the resume.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, Literal

from baton.batches.results import cell_row, export_csv, export_jsonl, table_text
from baton.batches.runner import BatchRunner, BatchSummary, CellEnd, Progress
from baton.batches.spec import BatchSpec
from baton.errors import UsageError
from baton.runtime.runtime import Runtime
from baton.store.batches import BatchCell, BatchRecord, BatchRecords
from baton.store.owner import owner_alive

ExportFormat = Literal["jsonl", "csv"]


def default_jobs() -> int:
    """``--jobs``'s default: the cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


class Batch:
    """A batch recorded in a :class:`~baton.runtime.runtime.Runtime`'s store."""

    def __init__(self, runtime: Runtime, record: BatchRecord) -> None:
        self._runtime = runtime
        self._record = record
        self.spec = BatchSpec.from_json(record.spec, source=f"batch {record.id}")
        self._runner: BatchRunner | None = None

    @classmethod
    def create(cls, runtime: Runtime, spec: BatchSpec) -> Batch:
        """Record a new batch of ``spec`` (every cell PENDING). The runtime must be open."""
        record = BatchRecords(runtime.store).create_batch(
            spec.to_json(),
            spec.digest,
            [(cell.task, cell.agent, cell.repeat) for cell in spec.cells()],
            name=spec.name,
            max_cost=None if spec.max_cost is None else f"{spec.max_cost:g}",
        )
        return cls(runtime, record)

    @classmethod
    def open(cls, runtime: Runtime, batch_id: str) -> Batch:
        """The recorded batch ``batch_id`` (or a unique prefix); BatchNotFound if none."""
        return cls(runtime, BatchRecords(runtime.store).get_batch(batch_id))

    @property
    def id(self) -> str:
        """The batch's id."""
        return self._record.id

    @property
    def record(self) -> BatchRecord:
        """The batch's record as the store has it now."""
        self._record = BatchRecords(self._runtime.store).get_batch(self._record.id)
        return self._record

    def cells(self) -> list[BatchCell]:
        """The cells as the store has them now, in matrix order."""
        return BatchRecords(self._runtime.store).batch_cells(self.id)

    async def run(
        self,
        *,
        jobs: int | None = None,
        max_cost: float | None = None,
        retry_ambiguous: bool = False,
        on_cell_end: Callable[[CellEnd], None] | None = None,
        on_progress: Callable[[Progress], None] | None = None,
        fleet_queue: str | None = None,
    ) -> BatchSummary:
        """Run (or resume) the batch: start every cell that never started, ``jobs`` at a time
        (default: the cores), each through :meth:`Runtime.start` in its own workspace; a cell
        whose run ended RECOVERY_REQUIRED is reported, and rerun (a new run recorded on it)
        only with ``retry_ambiguous``. ``max_cost`` (default: the spec's) stops starting
        cells once the reported cost reaches it. ``on_cell_end`` gets each cell as its run
        ends; ``on_progress`` the counts after every start and end. ``fleet_queue`` queues
        the cells on the fleet's workers (that queue; the runtime's store must be PostgreSQL)
        instead of running them in this process (docs/batches.md, "On the fleet").

        Raises BatchBusy when another live process runs it.

        Cancellation: cancelling the caller interrupts the running cells (session/cancel,
        the interrupt deadline), waits for them to settle, records the batch CANCELLED and
        re-raises; cells not started stay PENDING, so :meth:`run` later resumes them."""
        if jobs is not None and jobs < 1:
            raise UsageError("jobs must be 1 or more")
        record = self.record
        if max_cost is None:
            max_cost = float(record.max_cost) if record.max_cost is not None else None
        self._runner = BatchRunner(
            self._runtime,
            self.id,
            self.spec,
            jobs=jobs or default_jobs(),
            max_cost=max_cost,
            retry_ambiguous=retry_ambiguous,
            on_cell_end=on_cell_end,
            on_progress=on_progress,
            fleet_queue=fleet_queue,
        )
        try:
            return await self._runner.run()
        finally:
            self._runner = None

    async def cancel(self) -> None:
        """Cancel the batch: no cell starts any more, running ones are interrupted. Works
        from any process: the one running it sees the record change (within
        ``CANCEL_POLL_SECONDS``); here, at once. Not a wait.

        Cancellation: safe; the record is written before the first await."""
        store = self._runtime.store
        record = self.record
        if record.state in ("RUNNING", "STOPPED"):
            BatchRecords(store).set_batch_state(self.id, "CANCELLED", stop_reason="cancelled")
        # A live runner (here or in another process) skips its own pending cells: a cell it
        # is starting right now must not change under it.
        runner_alive = self._runner is not None or (
            record.owner is not None and owner_alive(record.owner)
        )
        if not runner_alive:
            for cell in self.cells():
                if cell.state == "PENDING":
                    BatchRecords(store).set_cell_state(
                        self.id, cell.index, "SKIPPED", reason="cancelled"
                    )
        if self._runner is not None:
            await self._runner.cancel()

    def rows(self) -> list[dict[str, Any]]:
        """One result row per cell (docs/batches.md, "Results"; ``unknown`` where the agent
        reported nothing)."""
        return [cell_row(cell) for cell in self.cells()]

    def table(self) -> str:
        """The results as a text table."""
        return table_text(self.rows())

    def export(self, fmt: ExportFormat) -> str:
        """The results as JSONL (one object per cell) or CSV."""
        if fmt == "jsonl":
            return export_jsonl(self.rows())
        if fmt == "csv":
            return export_csv(self.rows())
        raise UsageError(f"unknown export format {fmt!r}; jsonl or csv")
