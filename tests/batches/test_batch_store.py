"""The batch records (store migration 9) and their state tables: cells move only along
CELL_TRANSITIONS, batches along BATCH_TRANSITIONS, a cell's runs are kept in order; on both
backends (PostgreSQL with a server: ``make test-fleet``, or BATON_TEST_POSTGRES_URL)."""

from __future__ import annotations

import pytest

from baton.errors import BatchNotFound, BatchStateInvalid, StoreConflict
from baton.store import MIGRATIONS, Store
from baton.store.batch_states import (
    BATCH_STATES,
    BATCH_TRANSITIONS,
    CELL_STATES,
    CELL_TRANSITIONS,
)
from baton.store.batches import BatchRecords
from baton.store.dialect import postgres_ddl
from baton.store.migrations import _BATCH_CELL_STATES, _BATCH_STATES
from conftest import StoreTarget


def _run(store: Store) -> str:
    return store.create_run("prompt", status="STARTING").id


def test_the_state_tables_match_the_schema() -> None:
    assert set(CELL_TRANSITIONS) == set(CELL_STATES) == set(_BATCH_CELL_STATES)
    assert set(BATCH_TRANSITIONS) == set(BATCH_STATES) == set(_BATCH_STATES)
    for table in (CELL_TRANSITIONS, BATCH_TRANSITIONS):
        for state, targets in table.items():
            assert state not in targets and targets <= set(table)


def test_cells_follow_their_table_and_keep_every_run(store_target: StoreTarget) -> None:
    with store_target.open() as store:
        batch = BatchRecords(store).create_batch(
            {"x": 1}, "sha256:0", [("t", "a", 1), ("t", "a", 2)], name="n"
        )
        assert batch.state == "RUNNING" and batch.owner == store.owner
        first, second = _run(store), _run(store)
        BatchRecords(store).start_cell_run(batch.id, 0, first)
        BatchRecords(store).set_cell_state(
            batch.id, 0, "RECOVERY_REQUIRED", result={"status": "RECOVERY_REQUIRED"}
        )
        with pytest.raises(BatchStateInvalid, match="RECOVERY_REQUIRED to COMPLETED"):
            BatchRecords(store).set_cell_state(batch.id, 0, "COMPLETED")
        BatchRecords(store).start_cell_run(batch.id, 0, second)  # --retry-ambiguous
        BatchRecords(store).set_cell_state(batch.id, 0, "COMPLETED", result={"status": "COMPLETED"})
        with pytest.raises(BatchStateInvalid):
            BatchRecords(store).start_cell_run(batch.id, 0, _run(store))
        BatchRecords(store).set_cell_state(batch.id, 1, "SKIPPED", reason="max-cost reached")
        with pytest.raises(BatchStateInvalid):
            BatchRecords(store).start_cell_run(batch.id, 1, _run(store))
        cells = BatchRecords(store).batch_cells(batch.id)
        assert cells[0].runs == (first, second) and cells[0].run_id == second
        assert cells[0].result == {"status": "COMPLETED"}
        assert cells[1].state == "SKIPPED" and cells[1].reason == "max-cost reached"
        assert BatchRecords(store).batch_of_run(first) == (batch.id, 0)


def test_batches_follow_their_table_and_are_found_by_prefix(store_target: StoreTarget) -> None:
    with store_target.open() as store:
        batch = BatchRecords(store).create_batch({}, "sha256:0", [("t", "a", 1)])
        assert BatchRecords(store).get_batch(batch.id[:12]).id == batch.id
        with pytest.raises(BatchNotFound):
            BatchRecords(store).get_batch("batch-none")
        stopped = BatchRecords(store).set_batch_state(
            batch.id, "STOPPED", stop_reason="max-cost reached"
        )
        assert stopped.stop_reason == "max-cost reached"
        with pytest.raises(BatchStateInvalid):
            BatchRecords(store).set_batch_state(batch.id, "COMPLETED")
        assert BatchRecords(store).set_batch_state(batch.id, "RUNNING").stop_reason is None
        BatchRecords(store).release_batch(batch.id)
        BatchRecords(store).claim_batch(batch.id, None, max_cost="1")
        with pytest.raises(StoreConflict):
            BatchRecords(store).claim_batch(batch.id, "someone-else", max_cost=None)
        assert BatchRecords(store).get_batch(batch.id).max_cost == "1"
        BatchRecords(store).create_batch({}, "sha256:1", [("t", "a", 1)])
        assert (
            len(BatchRecords(store).list_batches()) == 2
            and len(BatchRecords(store).list_batches(limit=1)) == 1
        )


def test_the_batch_tables_render_for_postgresql() -> None:
    [migration] = [
        m for m in MIGRATIONS if any(isinstance(s, str) and "CREATE TABLE batches" in s for s in m)
    ]
    for step in migration:
        rendered = postgres_ddl(step)
        assert "STRICT" not in rendered
