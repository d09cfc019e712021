"""The run-status transition table, exhaustively: every (from, to) pair through the store."""

from __future__ import annotations

from itertools import product
from typing import Any

import pytest

from baton.errors import RunStatusTransitionInvalid, StoreConflict
from baton.store import (
    FINAL_RUN_STATUSES,
    INITIAL_RUN_STATUSES,
    RUN_STATUS_TRANSITIONS,
    Store,
)
from baton.store.models import RUN_STATUSES
from baton.store.run_status import check_run_transition

#: The table as the issue states it, written out edge by edge (so a change to the table in the
#: code must be a change here too).
EXPECTED_EDGES = {
    ("QUEUED", "STARTING"),
    ("QUEUED", "RUNNING"),
    ("STARTING", "RUNNING"),
    ("RUNNING", "AWAITING_APPROVAL"),
    ("RUNNING", "INTERRUPTING"),
    ("AWAITING_APPROVAL", "RUNNING"),
    ("AWAITING_APPROVAL", "INTERRUPTING"),
    ("RECOVERY_REQUIRED", "FAILED"),
    # Issue 22: a queued run cancelled before anything started it; nothing else is cancelled.
    ("QUEUED", "CANCELLED"),
} | {
    (start, outcome)
    for start in ("QUEUED", "STARTING", "RUNNING", "AWAITING_APPROVAL", "INTERRUPTING")
    for outcome in ("COMPLETED", "FAILED", "INTERRUPTED", "RECOVERY_REQUIRED", "LOST")
}


def test_every_status_has_a_row_and_the_table_is_the_documented_one() -> None:
    assert set(RUN_STATUS_TRANSITIONS) == set(RUN_STATUSES)
    edges = {(a, b) for a, targets in RUN_STATUS_TRANSITIONS.items() for b in targets}
    assert edges == EXPECTED_EDGES


def test_final_statuses_have_no_way_out_and_no_status_moves_to_itself() -> None:
    for status in FINAL_RUN_STATUSES:
        assert RUN_STATUS_TRANSITIONS[status] == frozenset()
    for status, targets in RUN_STATUS_TRANSITIONS.items():
        assert status not in targets


@pytest.fixture
def store(store_target: Any) -> Store:
    """The store on each backend: the table is enforced the same way on both."""
    return store_target.open()  # type: ignore[no-any-return]


async def _run_in(store: Store, status: str) -> str:
    """A run in ``status``, reached along the table's own edges."""
    path = {
        "QUEUED": [],
        "STARTING": ["STARTING"],
        "RUNNING": ["RUNNING"],
        "AWAITING_APPROVAL": ["RUNNING", "AWAITING_APPROVAL"],
        "INTERRUPTING": ["RUNNING", "INTERRUPTING"],
        "RECOVERY_REQUIRED": ["RECOVERY_REQUIRED"],
    }.get(status, [status])
    run = store.create_run("p")
    for step in path:
        await store.update_run_status(run.id, step)  # type: ignore[arg-type]
    assert store.get_run(run.id).status == status
    return run.id


@pytest.mark.parametrize(("current", "new"), sorted(product(RUN_STATUSES, RUN_STATUSES)))
async def test_every_pair_through_the_store(store: Store, current: str, new: str) -> None:
    run_id = await _run_in(store, current)
    if (current, new) in EXPECTED_EDGES:
        moved = await store.update_run_status(run_id, new)  # type: ignore[arg-type]
        assert moved.status == new
        return
    with pytest.raises(RunStatusTransitionInvalid) as info:
        await store.update_run_status(run_id, new)  # type: ignore[arg-type]
    assert info.value.code == "RUN_STATUS_TRANSITION_INVALID"
    assert isinstance(info.value, StoreConflict)  # callers that settle races still catch it
    assert store.get_run(run_id).status == current  # nothing written


def test_the_checker_names_the_edge_and_the_allowed_ones() -> None:
    with pytest.raises(RunStatusTransitionInvalid, match="already COMPLETED"):
        check_run_transition("run-1", "COMPLETED", "RUNNING")
    with pytest.raises(RunStatusTransitionInvalid, match="from RECOVERY_REQUIRED: FAILED"):
        check_run_transition("run-1", "RECOVERY_REQUIRED", "RUNNING")
    with pytest.raises(RunStatusTransitionInvalid, match="unknown status"):
        check_run_transition("run-1", "WEIRD", "RUNNING")


@pytest.mark.parametrize("status", sorted(RUN_STATUSES))
def test_initial_statuses(store: Store, status: str) -> None:
    if status in INITIAL_RUN_STATUSES:
        assert store.create_run("p", status=status).status == status  # type: ignore[arg-type]
    else:
        with pytest.raises(RunStatusTransitionInvalid, match="cannot be created"):
            store.create_run("p", status=status)  # type: ignore[arg-type]
        assert store.list_runs() == []


async def test_a_cancelled_run_ended_without_starting(store: Store) -> None:
    run = store.create_run("p")
    cancelled = await store.update_run_status(run.id, "CANCELLED", expected="QUEUED")
    assert cancelled.status == "CANCELLED"
    assert cancelled.started_at is None
    assert cancelled.ended_at is not None
    with pytest.raises(RunStatusTransitionInvalid, match="already CANCELLED"):
        await store.update_run_status(run.id, "STARTING")


async def test_open_questions_move_a_running_run_through_awaiting_approval(store: Store) -> None:
    run_id = await _run_in(store, "RUNNING")
    first = store.set_pending_questions(run_id, 1)
    assert (first.status, first.pending_questions) == ("AWAITING_APPROVAL", 1)
    assert store.set_pending_questions(run_id, 2).status == "AWAITING_APPROVAL"
    assert store.set_pending_questions(run_id, 1).status == "AWAITING_APPROVAL"
    back = store.set_pending_questions(run_id, 0)
    assert (back.status, back.pending_questions) == ("RUNNING", 0)
    store.set_pending_questions(run_id, 1)
    ended = await store.update_run_status(run_id, "INTERRUPTED")
    assert (ended.status, ended.pending_questions) == ("INTERRUPTED", 0)  # cleared at the end
    assert store.set_pending_questions(run_id, 3).pending_questions == 0  # ended: stays zero
    with pytest.raises(ValueError):
        store.set_pending_questions(run_id, -1)


async def test_questions_outside_running_change_only_the_count(store: Store) -> None:
    starting = await _run_in(store, "STARTING")
    assert store.set_pending_questions(starting, 1).status == "STARTING"
    interrupting = await _run_in(store, "AWAITING_APPROVAL")
    await store.update_run_status(interrupting, "INTERRUPTING")
    moved = store.set_pending_questions(interrupting, 0)
    assert (moved.status, moved.pending_questions) == ("INTERRUPTING", 0)


async def test_a_question_opened_before_running_makes_the_run_wait_once_running(
    store: Store,
) -> None:
    run_id = await _run_in(store, "STARTING")
    store.set_pending_questions(run_id, 1)  # the agent asked while RUNNING was being written
    moved = await store.update_run_status(run_id, "RUNNING", expected="STARTING")
    assert (moved.status, moved.pending_questions) == ("AWAITING_APPROVAL", 1)
    assert store.set_pending_questions(run_id, 0).status == "RUNNING"
