"""Running a batch's cells through one :class:`~baton.runtime.runtime.Runtime`, at most
``jobs`` at a time, each through :meth:`Runtime.start` in its own workspace.

Exactly once. A cell's run is recorded on the cell (:meth:`Store.start_cell_run`) right after
:meth:`Runtime.start` returns its handle, with no await in between: the run's task, which
sets the agent's session up and sends the prompt, has not taken its first step yet. So a
cell that has no run after a crash never had its prompt sent and is started by ``resume``;
a cell with a run is never started again: its run's ending (read from the store, where the
startup reconciliation made an interrupted one RECOVERY_REQUIRED) becomes the cell's.

Stopping. ``max_cost`` stops *starting* cells once the reported cost of the batch's cells
reaches it (running ones finish; the rest are SKIPPED with the reason, the batch STOPPED).
A cancel (:meth:`BatchRunner.cancel`, or ``baton batch cancel`` from another process, seen
within :data:`CANCEL_POLL_SECONDS`) stops starting cells and interrupts the running ones
(session/cancel and the interrupt deadline, as Ctrl-C in ``baton run``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from baton.batches.results import cost_totals, fields_of_record, fields_of_result
from baton.batches.spec import BatchSpec, Cell
from baton.errors import BatchBusy, BatchError, BatonError, StoreConflict
from baton.runtime.run import Run
from baton.runtime.runtime import RunRequest, RunResult, Runtime
from baton.runtime.turns.events import RunEvent
from baton.store.batch_states import CELL_STATE_OF_RUN, CellState
from baton.store.batches import BatchCell, BatchRecords
from baton.store.models import ACTIVE_RUN_STATUSES
from baton.store.owner import owner_alive
from baton.wire.budget import TurnBudget
from baton.wire.version import parse_protocol_choice

#: How often a running batch reads its own record to see a cancel from another process
#: (seconds). Bounds how long cells keep starting after ``baton batch cancel``.
CANCEL_POLL_SECONDS: Final = 0.5
#: The interrupt reason recorded on the runs a cancelled batch stops.
BATCH_CANCELLED: Final = "batch_cancelled"
#: The event types that count as the agent's first output (time to first output).
OUTPUT_EVENTS: Final = frozenset({"text", "thought", "tool_call", "plan"})


@dataclass
class Progress:
    """Where a batch is: counts of its cells, the reported cost so far, an ETA."""

    total: int
    done: int = 0
    running: int = 0
    failed: int = 0
    ambiguous: int = 0
    skipped: int = 0
    cost: dict[str, float] = field(default_factory=dict)
    started_at: float = field(default_factory=time.monotonic)
    #: Cells this invocation ended (the ETA's rate; cells ended before a resume are not).
    ended_here: int = 0
    remaining_here: int = 0

    def eta_seconds(self) -> float | None:
        """Seconds until the last cell ends at the rate so far, or None before any ended."""
        if self.ended_here == 0:
            return None
        elapsed = time.monotonic() - self.started_at
        return elapsed / self.ended_here * max(self.remaining_here, 0)


@dataclass(frozen=True)
class CellEnd:
    """One cell's run ended (or it could not start): what ``--json`` prints per run."""

    cell: BatchCell
    fields: dict[str, Any]


@dataclass(frozen=True)
class BatchSummary:
    """How a run (or resume) of a batch ended."""

    batch_id: str
    state: str
    stop_reason: str | None
    counts: dict[str, int]
    cost: dict[str, float]
    #: Cells whose run ended RECOVERY_REQUIRED (reported, not rerun).
    ambiguous: list[int]
    #: Cells this invocation started a run for.
    started: int
    wall_ms: int


class BatchRunner:
    """Runs one batch's cells (see the module docstring). Built by :class:`baton.Batch`."""

    def __init__(
        self,
        runtime: Runtime,
        batch_id: str,
        spec: BatchSpec,
        *,
        jobs: int,
        max_cost: float | None,
        retry_ambiguous: bool = False,
        on_cell_end: Callable[[CellEnd], None] | None = None,
        on_progress: Callable[[Progress], None] | None = None,
        fleet_queue: str | None = None,
    ) -> None:
        self.runtime = runtime
        #: Queue the cells on the fleet (this queue) instead of running them here.
        self.fleet_queue = fleet_queue
        #: The queued cells' handles, by cell (the fleet variant).
        self._queued: dict[int, Any] = {}
        #: Cells whose run is still queued or running on a worker when a resume began.
        self._unsettled: list[BatchCell] = []
        self.batch_id = batch_id
        self.spec = spec
        self.jobs = max(1, jobs)
        self.max_cost = max_cost
        self.retry_ambiguous = retry_ambiguous
        self.on_cell_end = on_cell_end
        self.on_progress = on_progress
        self._running: dict[int, Run] = {}
        self._cancelled = False
        self._stop_reason: str | None = None
        self._started = 0
        self.progress = Progress(total=0)

    @property
    def store(self) -> Any:
        return self.runtime.store

    @property
    def batches(self) -> BatchRecords:
        """The batch records over the runtime's store."""
        return BatchRecords(self.runtime.store)

    async def run(self) -> BatchSummary:
        """Run every cell that never started (and, with ``retry_ambiguous``, rerun the
        RECOVERY_REQUIRED ones), then settle the batch's state.

        Cancellation: cancelling the caller interrupts the running cells (as
        :meth:`cancel`), waits for them to settle (shielded), records the batch CANCELLED and
        re-raises; cells not started stay PENDING for a resume."""
        began = time.monotonic()
        if self.fleet_queue is not None:
            from baton.batches.queued_cells import check_fleet_spec

            self._fleet_url()
            check_fleet_spec(self.spec)
        record = self.batches.get_batch(self.batch_id)
        busy = record.owner is not None and record.owner != self.batches.owner
        if busy and owner_alive(record.owner):
            raise BatchBusy(
                f"batch {self.batch_id} is being run by another Baton process "
                f"({record.owner}); `baton batch cancel {self.batch_id}` stops it"
            )
        try:
            self.batches.claim_batch(
                self.batch_id,
                record.owner,
                max_cost=None if self.max_cost is None else f"{self.max_cost:g}",
            )
        except StoreConflict as exc:
            raise BatchBusy(exc.message) from exc
        if record.state != "RUNNING":
            self.batches.set_batch_state(self.batch_id, "RUNNING")
        try:
            self._settle_from_store()
            todo = self._to_start()
            self._count(todo)
            cancelled_by_caller = False
            watcher = asyncio.ensure_future(self._watch_cancel())
            try:
                await self._start_all(todo)
            except asyncio.CancelledError:
                cancelled_by_caller = True
                self._cancelled = True
                await asyncio.shield(self._stop_running())
                raise
            finally:
                watcher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watcher
                if cancelled_by_caller:
                    self._finish(began)
            return self._finish(began)
        finally:
            self.batches.release_batch(self.batch_id)

    async def cancel(self) -> None:
        """Stop starting cells and interrupt the running ones (they end INTERRUPTED when the
        agent answers the cancel in time). Returns at once; :meth:`run` returns once they
        settled."""
        self._cancelled = True
        await self._stop_running()

    # --- the cells -------------------------------------------------------------------------

    def _settle_from_store(self) -> None:
        """Cells recorded RUNNING (a killed batch process) or RECOVERY_REQUIRED take their
        run's ending as the store has it (a reconciled run is RECOVERY_REQUIRED; one settled
        with `baton recover --mark-failed` FAILED)."""
        for cell in self.batches.batch_cells(self.batch_id):
            if cell.state not in ("RUNNING", "RECOVERY_REQUIRED") or cell.run_id is None:
                continue
            run = self.store.find_run(cell.run_id)
            if run is None:
                continue
            if run.status in ACTIVE_RUN_STATUSES or run.status == "QUEUED":
                if self.fleet_queue is not None and cell.state == "RUNNING":
                    self._unsettled.append(cell)  # a worker has it: follow it
                continue
            ending = CELL_STATE_OF_RUN.get(run.status, "FAILED")
            if ending == cell.state:
                continue
            self.batches.set_cell_state(
                self.batch_id, cell.index, ending, result=fields_of_record(run)
            )

    def _to_start(self) -> list[BatchCell]:
        todo: list[BatchCell] = []
        for cell in self.batches.batch_cells(self.batch_id):
            if cell.state == "SKIPPED":
                self.batches.set_cell_state(self.batch_id, cell.index, "PENDING")
                todo.append(cell)
            elif cell.state == "PENDING" or (
                cell.state == "RECOVERY_REQUIRED" and self.retry_ambiguous
            ):
                todo.append(cell)
        return todo

    def _count(self, todo: list[BatchCell]) -> None:
        cells = self.batches.batch_cells(self.batch_id)
        progress = Progress(total=len(cells), remaining_here=len(todo))
        retried = {cell.index for cell in todo}
        for cell in cells:
            if cell.index in retried:
                continue
            self._tally(progress, cell.state)
        progress.cost = cost_totals(cells)
        self.progress = progress
        self._report()

    @staticmethod
    def _tally(progress: Progress, state: str) -> None:
        if state in ("COMPLETED", "FAILED", "INTERRUPTED", "LOST", "RECOVERY_REQUIRED"):
            progress.done += 1
        if state in ("FAILED", "LOST", "INTERRUPTED"):
            progress.failed += 1
        if state == "RECOVERY_REQUIRED":
            progress.ambiguous += 1
        if state == "SKIPPED":
            progress.skipped += 1

    def _report(self) -> None:
        if self.on_progress is not None:
            self.on_progress(self.progress)

    async def _start_all(self, todo: list[BatchCell]) -> None:
        slots = asyncio.Semaphore(self.jobs)
        tasks: set[asyncio.Task[None]] = set()
        followers = [asyncio.ensure_future(self._follow_cell(cell)) for cell in self._unsettled]
        tasks.update(followers)
        try:
            for cell in todo:
                await slots.acquire()
                if self._should_stop():
                    slots.release()
                    break
                task = asyncio.ensure_future(self._run_cell(cell))
                tasks.add(task)
                task.add_done_callback(lambda _t: slots.release())
                # Let the cell start (its run recorded) before the next is considered.
                await asyncio.sleep(0)
            if tasks:
                await asyncio.gather(*tasks)
        except asyncio.CancelledError:
            if tasks:
                self._cancelled = True
                await asyncio.shield(self._stop_running())
                await asyncio.shield(asyncio.gather(*tasks, return_exceptions=True))
            raise
        self._skip_rest()

    def _should_stop(self) -> bool:
        if self._cancelled:
            return True
        if self.max_cost is None:
            return False
        totals = self.progress.cost
        if not totals:
            return False
        currency, spent = next(iter(totals.items()))
        if spent >= self.max_cost:
            self._stop_reason = (
                f"max-cost reached: {spent:g} {currency} reported, cap {self.max_cost:g}"
            )
            return True
        return False

    def _skip_rest(self) -> None:
        """Cells not started (a stop or a cancel) are SKIPPED with the reason."""
        reason = self._stop_reason or ("cancelled" if self._cancelled else None)
        if reason is None:
            return
        for cell in self.batches.batch_cells(self.batch_id):
            if cell.state == "PENDING":
                self.batches.set_cell_state(self.batch_id, cell.index, "SKIPPED", reason=reason)
                self.progress.skipped += 1
        self._report()

    async def _run_cell(self, cell: BatchCell) -> None:
        """Start one cell's run, record it on the cell, wait for its end, record that."""
        spec_cell = Cell(cell.index, cell.task, cell.agent, cell.repeat)
        request = self.request_for(spec_cell)
        first_output: list[float] = []
        started = time.monotonic()

        def on_event(event: RunEvent) -> None:
            if not first_output and event.type in OUTPUT_EVENTS:
                first_output.append(time.monotonic())

        if self.fleet_queue is not None:
            await self._queue_cell(cell, spec_cell, started)
            return
        try:
            run = await self.runtime.start(request, on_event=on_event)
        except BatonError as exc:
            # Refused before a run existed: nothing reached an agent; the cell failed.
            self.batches.set_cell_state(
                self.batch_id,
                cell.index,
                "FAILED",
                reason=f"{exc.code}: {exc.message}",
                result={"status": "FAILED", "errorCode": exc.code, "message": exc.message[:500]},
            )
            self._ended(cell.index, None)
            return
        # No await between the handle and this write (see the module docstring).
        try:
            self.batches.start_cell_run(self.batch_id, cell.index, run.id)
        except BatonError:
            # The cell changed under this process (it should not): the run's task has not
            # begun, so this stop is noted before any prompt is sent; then it is reported.
            run.interrupt_nowait(BATCH_CANCELLED)
            raise
        self._started += 1
        self._running[cell.index] = run
        self.progress.running += 1
        self._report()
        if self._cancelled:
            run.interrupt_nowait(BATCH_CANCELLED)
        try:
            result = await run.result()
        except BatonError as exc:
            result = RunResult(run.id, "FAILED", None, 1, error_code=exc.code, message=exc.message)
        finally:
            self._running.pop(cell.index, None)
            self.progress.running -= 1
        fields = fields_of_result(
            result,
            wall_ms=int((time.monotonic() - started) * 1000),
            first_output_ms=(int((first_output[0] - started) * 1000) if first_output else None),
        )
        ending: CellState = CELL_STATE_OF_RUN.get(result.status, "FAILED")
        self.batches.set_cell_state(self.batch_id, cell.index, ending, result=fields)
        self._ended(cell.index, fields)

    async def _queue_cell(self, cell: BatchCell, spec_cell: Cell, started: float) -> None:
        """The fleet variant of one cell: submit it (idempotently), record its run, follow it."""
        from baton.batches.queued_cells import idempotency_key, submission_for
        from baton.fleet.queued import submit

        assert self.fleet_queue is not None
        key = idempotency_key(self.batch_id, cell.index, len(cell.runs) + 1)
        submission = submission_for(self.spec, spec_cell, queue=self.fleet_queue, key=key)
        handle = await submit(self._fleet_url(), submission)
        self.batches.start_cell_run(self.batch_id, cell.index, handle.id)
        self._started += 1
        await self._follow_handle(cell.index, handle, started)

    async def _follow_cell(self, cell: BatchCell) -> None:
        """Follow a cell whose queued run a worker may still be running (a resume)."""
        from baton.fleet.queued import QueuedRun

        assert cell.run_id is not None
        await self._follow_handle(
            cell.index, QueuedRun(self._fleet_url(), cell.run_id), time.monotonic()
        )

    async def _follow_handle(self, index: int, handle: Any, started: float) -> None:
        from baton.batches.queued_cells import follow_queued

        self._queued[index] = handle
        self.progress.running += 1
        self._report()
        if self._cancelled:
            await handle.interrupt(BATCH_CANCELLED)
        try:
            result, first = await follow_queued(handle)
        finally:
            self._queued.pop(index, None)
            self.progress.running -= 1
        fields = fields_of_result(
            result,
            wall_ms=int((time.monotonic() - started) * 1000),
            first_output_ms=int((first - started) * 1000) if first is not None else None,
        )
        ending: CellState = CELL_STATE_OF_RUN.get(result.status, "FAILED")
        self.batches.set_cell_state(self.batch_id, index, ending, result=fields)
        self._ended(index, fields)

    def _fleet_url(self) -> str:
        url = self.runtime.store_location.url
        if url is None:
            raise BatchError("a fleet batch needs a shared store (--store postgresql://...)")
        return url

    def _ended(self, index: int, fields: dict[str, Any] | None) -> None:
        cells = self.batches.batch_cells(self.batch_id)
        cell = cells[index]
        self.progress.ended_here += 1
        self.progress.remaining_here -= 1
        self._tally(self.progress, cell.state)
        self.progress.cost = cost_totals(cells)
        if self.on_cell_end is not None:
            self.on_cell_end(CellEnd(cell, dict(cell.result or fields or {})))
        self._report()

    def request_for(self, cell: Cell) -> RunRequest:
        """The run request of one cell (its task, its agent, the batch's run settings)."""
        task = self.spec.task(cell.task)
        agent = self.spec.agent(cell.agent)
        settings = self.spec.run
        worktree = task.workspace == "worktree"
        return RunRequest(
            prompt=task.prompt,
            agent=agent.profile,
            agent_command=agent.command,
            env_keys=agent.env,
            cwd=task.repo if worktree else task.cwd,
            policy=agent.policy or settings.policy,
            allow_unattended=settings.allow_unattended,
            mode=agent.mode,
            model=agent.model,
            effort=agent.effort,
            config=dict(agent.options),
            budget=TurnBudget(idle=settings.idle_timeout, absolute=settings.timeout),
            attachments=task.attachments,
            protocol=(
                parse_protocol_choice(agent.protocol, source=f"agent {agent.id} protocol")
                if agent.protocol is not None
                else None
            ),
            workspace="worktree" if worktree else None,
            base=task.base if worktree else None,
            require_clean=settings.require_clean if worktree else False,
        )

    async def _watch_cancel(self) -> None:
        """Polls the batch's record for a cancel from another process."""
        while not self._cancelled:
            await asyncio.sleep(CANCEL_POLL_SECONDS)
            if self.batches.get_batch(self.batch_id).state == "CANCELLED":
                self._cancelled = True
                await self._stop_running()

    async def _stop_running(self) -> None:
        for run in list(self._running.values()):
            await run.interrupt(BATCH_CANCELLED)
        for handle in list(self._queued.values()):
            # Not taken yet: CANCELLED; taken: its job aborted, the worker interrupts the turn.
            await handle.interrupt(BATCH_CANCELLED)

    def _finish(self, began: float) -> BatchSummary:
        cells = self.batches.batch_cells(self.batch_id)
        counts: dict[str, int] = {}
        for cell in cells:
            counts[cell.state] = counts.get(cell.state, 0) + 1
        record = self.batches.get_batch(self.batch_id)
        if record.state == "RUNNING":
            if self._cancelled:
                record = self.batches.set_batch_state(
                    self.batch_id, "CANCELLED", stop_reason="cancelled"
                )
            elif self._stop_reason is not None:
                record = self.batches.set_batch_state(
                    self.batch_id, "STOPPED", stop_reason=self._stop_reason
                )
            elif all(cell.state not in ("PENDING", "RUNNING") for cell in cells):
                record = self.batches.set_batch_state(self.batch_id, "COMPLETED")
        return BatchSummary(
            batch_id=self.batch_id,
            state=record.state,
            stop_reason=record.stop_reason,
            counts=counts,
            cost=cost_totals(cells),
            ambiguous=[cell.index for cell in cells if cell.state == "RECOVERY_REQUIRED"],
            started=self._started,
            wall_ms=int((time.monotonic() - began) * 1000),
        )
