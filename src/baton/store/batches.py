"""The ``batches``, ``batch_cells`` and ``batch_runs`` tables: a batch's spec and state, its
cells (task x agent x repeat) with the result of each one's last run, and every run each cell
started (docs/batches.md). The state tables are :mod:`baton.store.batch_states`; every state
write here checks them inside its transaction, compare-and-set on the state read.

Use it as ``BatchRecords(store)`` over any open store (SQLite or PostgreSQL). A cell's run is
recorded in the same transaction that makes it RUNNING
(:meth:`BatchRecords.start_cell_run`), and the batch runner writes it before the run's first
step can run: so after a crash a cell without a run never had its prompt sent, and a cell
with one is never started again without ``--retry-ambiguous``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from baton.errors import BatchNotFound, StoreConflict
from baton.store.batch_states import (
    BatchState,
    CellState,
    check_batch_transition,
    check_cell_transition,
)
from baton.store.database import StoreDatabase, new_id


@dataclass(frozen=True, slots=True)
class BatchRecord:
    """One batch: its spec (canonical JSON), the spec's hash, state and why it stopped."""

    id: str
    name: str | None
    spec_hash: str
    spec: dict[str, Any]
    state: BatchState
    stop_reason: str | None
    #: The cost cap in force (a decimal string, the agents' currency), or None.
    max_cost: str | None
    #: The Baton process running it (see baton.store.owner), or None.
    owner: str | None
    created_at: str
    updated_at: str


@dataclass(frozen=True, slots=True)
class BatchCell:
    """One cell of a batch and its last run's result."""

    batch_id: str
    index: int
    task: str
    agent: str
    repeat: int
    state: CellState
    #: Why it is SKIPPED, or why it FAILED without a run.
    reason: str | None
    #: Its last run (None before its run exists).
    run_id: str | None
    #: Its last run's result fields (docs/batches.md, "Results"), once it ended.
    result: dict[str, Any] | None
    updated_at: str
    #: Every run it started, oldest first.
    runs: tuple[str, ...] = field(default=())


_BATCH_COLUMNS = (
    "id, name, spec_hash, spec, state, stop_reason, max_cost, owner, created_at, updated_at"
)
_CELL_COLUMNS = "batch_id, cell, task, agent, repeat, state, reason, run_id, result, updated_at"


def _batch(row: Any) -> BatchRecord:
    return BatchRecord(
        row[0], row[1], row[2], orjson.loads(row[3]), row[4], row[5], row[6], row[7], row[8], row[9]
    )


def _cell(row: Any, runs: Sequence[str] = ()) -> BatchCell:
    return BatchCell(
        row[0],
        row[1],
        row[2],
        row[3],
        row[4],
        row[5],
        row[6],
        row[7],
        None if row[8] is None else orjson.loads(row[8]),
        row[9],
        tuple(runs),
    )


class BatchRecords:
    """Batches and their cells, over a :class:`baton.store.Store` (``BatchRecords(store)``).
    Not mixed into the Store: only what works with batches imports this module (a plain
    `baton run` stays within its import budget)."""

    def __init__(self, store: StoreDatabase) -> None:
        self._store = store

    @property
    def owner(self) -> str:
        """This process's owner string (the store's)."""
        return self._store.owner

    @property
    def _conn(self) -> Any:
        return self._store._conn

    def _tx(self) -> Any:
        return self._store._tx()

    def _now(self) -> str:
        return self._store._now()

    def _text(self, value: str | None) -> str | None:
        return self._store._text(value)

    def _json(self, value: Any, what: str) -> str:
        return self._store._json(value, what)

    def create_batch(
        self,
        spec: Mapping[str, Any],
        spec_hash: str,
        cells: Sequence[tuple[str, str, int]],
        *,
        name: str | None = None,
        max_cost: str | None = None,
    ) -> BatchRecord:
        """Record a RUNNING batch owned by this process, with its cells PENDING."""
        batch_id = new_id("batch")
        now = self._now()
        with self._tx() as conn:
            conn.execute(
                f"INSERT INTO batches ({_BATCH_COLUMNS}) VALUES "
                "(?, ?, ?, ?, 'RUNNING', NULL, ?, ?, ?, ?)",
                (
                    batch_id,
                    self._text(name),
                    spec_hash,
                    self._json(dict(spec), "batch spec"),
                    max_cost,
                    self.owner,
                    now,
                    now,
                ),
            )
            conn.executemany(
                f"INSERT INTO batch_cells ({_CELL_COLUMNS}) VALUES "
                "(?, ?, ?, ?, ?, 'PENDING', NULL, NULL, NULL, ?)",
                [
                    (batch_id, index, task, agent, repeat, now)
                    for index, (task, agent, repeat) in enumerate(cells)
                ],
            )
        return self.get_batch(batch_id)

    def find_batch(self, batch_id: str) -> BatchRecord | None:
        """The batch ``batch_id`` (or the one batch whose id starts with it), or None.
        StoreConflict when the prefix names several."""
        row = self._conn.execute(
            f"SELECT {_BATCH_COLUMNS} FROM batches WHERE id = ?", (batch_id,)
        ).fetchone()
        if row is not None:
            return _batch(row)
        rows = self._conn.execute(
            f"SELECT {_BATCH_COLUMNS} FROM batches WHERE substr(id, 1, ?) = ? LIMIT 2",
            (len(batch_id), batch_id),
        ).fetchall()
        if len(rows) > 1:
            raise StoreConflict(f"{batch_id!r} names more than one batch; give more of its id")
        return _batch(rows[0]) if rows else None

    def get_batch(self, batch_id: str) -> BatchRecord:
        """The batch ``batch_id`` (or a unique prefix); BatchNotFound when there is none."""
        found = self.find_batch(batch_id)
        if found is None:
            raise BatchNotFound(f"no batch {batch_id!r}")
        return found

    def list_batches(self, *, limit: int | None = None) -> list[BatchRecord]:
        """Batches, newest first."""
        sql = f"SELECT {_BATCH_COLUMNS} FROM batches ORDER BY created_at DESC, id DESC"
        params: tuple[Any, ...] = ()
        if limit is not None:
            sql += " LIMIT ?"
            params = (limit,)
        return [_batch(row) for row in self._conn.execute(sql, params)]

    def batch_cells(self, batch_id: str) -> list[BatchCell]:
        """A batch's cells, in matrix order, each with every run it started."""
        runs: dict[int, list[str]] = {}
        for cell, run_id in self._conn.execute(
            "SELECT cell, run_id FROM batch_runs WHERE batch_id = ? ORDER BY cell, attempt",
            (batch_id,),
        ):
            runs.setdefault(cell, []).append(run_id)
        return [
            _cell(row, runs.get(row[1], ()))
            for row in self._conn.execute(
                f"SELECT {_CELL_COLUMNS} FROM batch_cells WHERE batch_id = ? ORDER BY cell",
                (batch_id,),
            )
        ]

    def batch_of_run(self, run_id: str) -> tuple[str, int] | None:
        """The (batch id, cell) that started ``run_id``, or None."""
        row = self._conn.execute(
            "SELECT batch_id, cell FROM batch_runs WHERE run_id = ?", (run_id,)
        ).fetchone()
        return None if row is None else (row[0], row[1])

    # --- state writes ----------------------------------------------------------------------

    def set_batch_state(
        self, batch_id: str, state: BatchState, *, stop_reason: str | None = None
    ) -> BatchRecord:
        """Move the batch to ``state`` (checked against the table); ``stop_reason`` says why
        (cleared when it runs again)."""
        with self._tx() as conn:
            row = conn.execute(
                f"SELECT state FROM batches WHERE id = ?{self._store._row_lock}", (batch_id,)
            ).fetchone()
            if row is None:
                raise BatchNotFound(f"no batch {batch_id!r}")
            check_batch_transition(batch_id, row[0], state)
            updated = conn.execute(
                "UPDATE batches SET state = ?, stop_reason = ?, updated_at = ? "
                "WHERE id = ? AND state = ?",
                (state, self._text(stop_reason), self._now(), batch_id, row[0]),
            )
            if updated.rowcount != 1:
                raise StoreConflict(f"batch {batch_id} changed meanwhile")
        return self.get_batch(batch_id)

    def claim_batch(
        self, batch_id: str, previous_owner: str | None, *, max_cost: str | None
    ) -> None:
        """Make this process the batch's runner, compare-and-set on the owner read (another
        resume that claimed it first wins), with the cost cap now in force."""
        same_owner = "owner IS NULL" if previous_owner is None else "owner = ?"
        params: tuple[Any, ...] = (self.owner, max_cost, self._now(), batch_id)
        if previous_owner is not None:
            params += (previous_owner,)
        with self._tx() as conn:
            updated = conn.execute(
                "UPDATE batches SET owner = ?, max_cost = ?, updated_at = ? "
                f"WHERE id = ? AND {same_owner}",
                params,
            )
            if updated.rowcount != 1:
                raise StoreConflict(f"batch {batch_id} was claimed by another process")

    def release_batch(self, batch_id: str) -> None:
        """This process no longer runs the batch."""
        with self._tx() as conn:
            conn.execute(
                "UPDATE batches SET owner = NULL, updated_at = ? WHERE id = ? AND owner = ?",
                (self._now(), batch_id, self.owner),
            )

    def set_cell_state(
        self,
        batch_id: str,
        cell: int,
        state: CellState,
        *,
        reason: str | None = None,
        result: Mapping[str, Any] | None = None,
    ) -> None:
        """Move one cell to ``state`` (checked against the table), with why, or its run's
        result fields (kept when None is given)."""
        with self._tx() as conn:
            current = self._cell_state(conn, batch_id, cell)
            check_cell_transition(f"cell {cell} of batch {batch_id}", current, state)
            conn.execute(
                "UPDATE batch_cells SET state = ?, reason = ?, "
                "result = COALESCE(?, result), updated_at = ? "
                "WHERE batch_id = ? AND cell = ? AND state = ?",
                (
                    state,
                    self._text(reason),
                    None if result is None else self._json(dict(result), "cell result"),
                    self._now(),
                    batch_id,
                    cell,
                    current,
                ),
            )

    def start_cell_run(self, batch_id: str, cell: int, run_id: str) -> None:
        """The cell's new run exists: the cell is RUNNING it (from PENDING, or from
        RECOVERY_REQUIRED for ``--retry-ambiguous``), and the run is recorded on it."""
        now = self._now()
        with self._tx() as conn:
            current = self._cell_state(conn, batch_id, cell)
            check_cell_transition(f"cell {cell} of batch {batch_id}", current, "RUNNING")
            row = conn.execute(
                "SELECT COUNT(*) FROM batch_runs WHERE batch_id = ? AND cell = ?",
                (batch_id, cell),
            ).fetchone()
            conn.execute(
                "INSERT INTO batch_runs (batch_id, cell, attempt, run_id, created_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (batch_id, cell, int(row[0]) + 1, run_id, now),
            )
            conn.execute(
                "UPDATE batch_cells SET state = 'RUNNING', reason = NULL, run_id = ?, "
                "result = NULL, updated_at = ? WHERE batch_id = ? AND cell = ?",
                (run_id, now, batch_id, cell),
            )

    def _cell_state(self, conn: Any, batch_id: str, cell: int) -> str:
        row = conn.execute(
            f"SELECT state FROM batch_cells WHERE batch_id = ? AND cell = ?{self._store._row_lock}",
            (batch_id, cell),
        ).fetchone()
        if row is None:
            raise BatchNotFound(f"batch {batch_id} has no cell {cell}")
        return str(row[0])


__all__ = ["BatchCell", "BatchRecord", "BatchRecords"]
