"""The batch and batch-cell state machines, as tables (docs/batches.md), enforced in one place.

A **cell** (one task x agent x repeat) is PENDING until its run exists, RUNNING while it runs,
then takes its run's ending: COMPLETED, FAILED, INTERRUPTED (a cancelled batch interrupted
it), LOST, or RECOVERY_REQUIRED, whose outcome is unknown: it is reported and never rerun
silently; only ``resume --retry-ambiguous`` takes it back to RUNNING, as a new run recorded
on the cell (``baton recover --mark-failed`` of its run makes it FAILED). A cell that was not
started because the batch stopped (``--max-cost`` reached, cancelled) is SKIPPED with the
reason; ``resume`` takes it back to PENDING. A cell refused before any run existed (an
unknown profile, a workspace that could not be made) is FAILED without a run.

A **batch** is RUNNING from its creation (and after a resume); COMPLETED when every cell
ended; STOPPED when ``--max-cost`` stopped it starting cells; CANCELLED by ``baton batch
cancel``. ``resume`` takes a STOPPED, CANCELLED or COMPLETED batch back to RUNNING.

:func:`check_cell_transition` and :func:`check_batch_transition` are the only checks, called
by :class:`baton.store.batches.BatchRecords` inside each write's transaction. A state never
moves to itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal, get_args

from baton.errors import BatchStateInvalid

CellState = Literal[
    "PENDING",
    "RUNNING",
    "COMPLETED",
    "FAILED",
    "INTERRUPTED",
    "RECOVERY_REQUIRED",
    "LOST",
    "SKIPPED",
]
BatchState = Literal["RUNNING", "COMPLETED", "STOPPED", "CANCELLED"]

CELL_STATES: Final[tuple[CellState, ...]] = get_args(CellState)
BATCH_STATES: Final[tuple[BatchState, ...]] = get_args(BatchState)

#: Where a running cell may end: its run's ending.
_ENDINGS: Final[frozenset[CellState]] = frozenset(
    {"COMPLETED", "FAILED", "INTERRUPTED", "RECOVERY_REQUIRED", "LOST"}
)

#: From each cell state, the states a cell may move to next.
CELL_TRANSITIONS: Final[Mapping[CellState, frozenset[CellState]]] = {
    "PENDING": frozenset({"RUNNING", "SKIPPED", "FAILED"}),
    "SKIPPED": frozenset({"PENDING"}),
    "RUNNING": _ENDINGS,
    # Its outcome is unknown: rerun only when asked (a new run), or settled as failed.
    "RECOVERY_REQUIRED": frozenset({"RUNNING", "FAILED"}),
    "COMPLETED": frozenset(),
    "FAILED": frozenset(),
    "INTERRUPTED": frozenset(),
    "LOST": frozenset(),
}

#: Cells whose state will not change without the user (ended, or skipped until a resume).
SETTLED_CELL_STATES: Final[frozenset[CellState]] = frozenset(
    {"COMPLETED", "FAILED", "INTERRUPTED", "LOST", "RECOVERY_REQUIRED", "SKIPPED"}
)

#: From each batch state, the states a batch may move to next.
BATCH_TRANSITIONS: Final[Mapping[BatchState, frozenset[BatchState]]] = {
    "RUNNING": frozenset({"COMPLETED", "STOPPED", "CANCELLED"}),
    "STOPPED": frozenset({"RUNNING", "CANCELLED"}),
    "CANCELLED": frozenset({"RUNNING"}),
    "COMPLETED": frozenset({"RUNNING"}),
}

#: The run statuses a cell takes from its run (a run cancelled before it started, on a
#: fleet, counts as interrupted).
CELL_STATE_OF_RUN: Final[Mapping[str, CellState]] = {
    "COMPLETED": "COMPLETED",
    "FAILED": "FAILED",
    "INTERRUPTED": "INTERRUPTED",
    "CANCELLED": "INTERRUPTED",
    "RECOVERY_REQUIRED": "RECOVERY_REQUIRED",
    "LOST": "LOST",
}


def check_cell_transition(where: str, current: str, new: str) -> None:
    """Raise :class:`~baton.errors.BatchStateInvalid` unless a cell in ``current`` may move
    to ``new``."""
    allowed = CELL_TRANSITIONS.get(current)  # type: ignore[call-overload]
    if allowed is None or new not in allowed:
        targets = ", ".join(sorted(allowed or ())) or "nothing"
        raise BatchStateInvalid(
            f"{where} cannot move from {current} to {new} (from {current}: {targets})"
        )


def check_batch_transition(batch_id: str, current: str, new: str) -> None:
    """Raise :class:`~baton.errors.BatchStateInvalid` unless a batch in ``current`` may move
    to ``new``."""
    allowed = BATCH_TRANSITIONS.get(current)  # type: ignore[call-overload]
    if allowed is None or new not in allowed:
        targets = ", ".join(sorted(allowed or ())) or "nothing"
        raise BatchStateInvalid(
            f"batch {batch_id} cannot move from {current} to {new} (from {current}: {targets})"
        )
