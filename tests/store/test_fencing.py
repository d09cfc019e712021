"""Fencing in the store (issue 33, docs/fleet.md "Fencing"), on both backends: a process's
claim on a run (owner, epoch) rides with every write it makes for the run, a status write by
another process moves the epoch on, and every later write of the stale holder is refused
with RUN_CLAIM_LOST, writing nothing. The end-to-end cases (a real worker stopped or cut off)
are in tests/fleet/test_fencing.py."""

from __future__ import annotations

from typing import Any

import pytest

from baton.errors import RunClaimLost, StoreConflict
from baton.store import NewItem, Store

#: The owner string of "another process" (a peer worker on another host).
PEER = "4242:1@peer-host"


@pytest.fixture
def stores(store_target: Any) -> tuple[Store, Store]:
    """The holder (this process) and a peer (another owner) on the same store."""
    holder = store_target.open()
    peer = store_target.open()
    peer.owner = PEER
    return holder, peer


async def _taken(holder: Store, peer: Store) -> str:
    submission, _ = peer.create_submission("hi", queue="q", request={})
    run = await holder.update_run_status(
        submission.run_id, "STARTING", expected=("QUEUED",), owner=holder.owner
    )
    assert run.epoch == 1  # the take moved the claim on from the submitter's
    assert holder.claims[run.id] == 1
    return run.id


async def test_the_holders_writes_carry_its_claim_and_keep_the_epoch(
    stores: tuple[Store, Store],
) -> None:
    holder, peer = stores
    run_id = await _taken(holder, peer)
    await holder.update_run_status(run_id, "RUNNING", expected=("STARTING",))
    holder.append_items(run_id, [NewItem("text", {"text": "out"})], after=0)
    holder.append_run_events(run_id, [{"type": "status"}])
    holder.set_pending_questions(run_id, 0)
    done = await holder.update_run_status(run_id, "COMPLETED", expected=("RUNNING",))
    assert (done.status, done.epoch, done.owner) == ("COMPLETED", 1, holder.owner)
    assert run_id not in holder.claims  # the holder ended it: nothing left to fence
    assert [item.seq for item in holder.list_items(run_id)] == [1]


async def test_a_settle_by_another_process_fences_every_later_write_of_the_holder(
    stores: tuple[Store, Store],
) -> None:
    holder, peer = stores
    run_id = await _taken(holder, peer)
    await holder.update_run_status(run_id, "RUNNING", expected=("STARTING",))
    told: list[RunClaimLost] = []
    holder.claim_lost_listeners.append(told.append)
    settled = await peer.update_run_status(
        run_id, "RECOVERY_REQUIRED", error_code="WORKER_LOST", recovery_reason="lost"
    )
    assert settled.epoch == 2
    before = holder.get_run(run_id)
    writes: list[Any] = [
        lambda: holder.append_items(run_id, [NewItem("text", {"text": "late"})], after=0),
        lambda: holder.append_run_events(run_id, [{"type": "late"}]),
        lambda: holder.set_pending_questions(run_id, 1),
        lambda: holder.set_run_session(run_id, session_id="ses-x"),
    ]
    for write in writes:
        with pytest.raises(RunClaimLost):
            write()
    with pytest.raises(RunClaimLost):
        await holder.update_run_status(run_id, "COMPLETED")
    with pytest.raises(RunClaimLost):
        await holder.record_interaction(run_id, 1, {}, [], request_ref=None)
    with pytest.raises(RunClaimLost):
        await holder.record_observation("BATON_RESOLUTION", {}, run_id=run_id)
    assert len(told) == 7 and all(error.code == "RUN_CLAIM_LOST" for error in told)
    assert isinstance(told[0], StoreConflict)
    after = holder.get_run(run_id)
    assert after == before  # nothing of the holder's writes landed
    assert holder.list_items(run_id) == []
    assert holder.run_events(run_id) == []
    assert holder.list_interactions(run_id) == []
    assert holder.list_observations(run_id=run_id) == []
    # The peer's own later writes are not fenced (it holds no claim): recovery settles it.
    assert (await peer.update_run_status(run_id, "FAILED")).epoch == 3


async def test_a_take_whose_answer_was_lost_is_held_again_from_the_record(
    stores: tuple[Store, Store],
) -> None:
    holder, peer = stores
    run_id = await _taken(holder, peer)
    holder.claims.clear()  # as if the take's commit was cut off before its answer
    holder.hold_claim(run_id, holder.get_run(run_id).epoch)
    await peer.update_run_status(run_id, "RECOVERY_REQUIRED", recovery_reason="lost")
    with pytest.raises(RunClaimLost):
        holder.append_items(run_id, [NewItem("text", {"text": "late"})])


async def test_writes_of_two_runs_do_not_wait_for_each_other(
    store_target: Any, stores: tuple[Store, Store]
) -> None:
    """No store-wide write lock on PostgreSQL: while one transaction holds run A (its row
    locked, as every write of A does), a write of run B from another connection goes through."""
    if store_target.backend != "postgresql":
        pytest.skip("SQLite has one write lock per file by design")
    import threading

    holder, peer = stores
    run_a = await _taken(holder, peer)
    run_b = await _taken(holder, peer)
    other = store_target.open()
    done = threading.Event()

    def write_b() -> None:
        other.append_items(run_b, [NewItem("text", {"text": "b"})])
        done.set()

    with holder._tx() as conn:
        holder._fence(conn, run_a)  # run A's row is locked until this transaction ends
        thread = threading.Thread(target=write_b)
        thread.start()
        assert done.wait(60), "a write of run B waited for run A's transaction"
    thread.join(60)
    assert [item.content for item in other.list_items(run_b)] == [{"text": "b"}]
