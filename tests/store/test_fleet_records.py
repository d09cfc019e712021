"""The queue's records in the store (submissions, workers, pinned sessions, run events), on
both backends."""

from __future__ import annotations

from typing import Any

import pytest

from baton.errors import RecordNotFound, StoreConflict
from baton.store import Store
from baton.store.owner import current_owner, owner_alive, owner_host


@pytest.fixture
def store(store_target: Any) -> Store:
    return store_target.open()  # type: ignore[no-any-return]


def test_a_submission_is_a_queued_run_with_its_request(store: Store) -> None:
    submission, created = store.create_submission(
        "hello", queue="q1", request={"agent": "claude"}, idempotency_key="k-1"
    )
    assert created
    run = store.get_run(submission.run_id)
    assert (run.status, run.prompt_text, run.owner) == ("QUEUED", "hello", current_owner())
    assert (submission.queue, submission.request, submission.worker) == (
        "q1",
        {"agent": "claude"},
        None,
    )
    again, created_again = store.create_submission(
        "something else", queue="q2", request={}, idempotency_key="k-1"
    )
    assert (again, created_again) == (submission, False)
    assert len(store.list_runs()) == 1  # one key, one run
    store.set_submission_job(submission.run_id, 42)
    taken = store.take_submission(submission.run_id, "w1")
    assert (taken.job_id, taken.worker) == (42, "w1")
    with pytest.raises(StoreConflict):
        store.take_submission(submission.run_id, "w2")
    assert [s.run_id for s in store.submissions_taken_by("w1")] == [submission.run_id]
    with pytest.raises(RecordNotFound):
        store.get_submission(store.create_run("not queued").id)


async def test_a_claimed_run_names_its_new_owner(store: Store) -> None:
    submission, _ = store.create_submission("p", queue="q", request={})
    claimed = await store.update_run_status(
        submission.run_id, "STARTING", expected="QUEUED", owner="123:4@elsewhere"
    )
    assert claimed.owner == "123:4@elsewhere"
    assert [r.id for r in store.list_runs(owner="123:4@elsewhere")] == [submission.run_id]
    assert store.list_runs(owner="nobody") == []


def test_workers_heartbeat_and_end(store: Store) -> None:
    worker = store.register_worker("w1", host="h1", queues=["a", "b"], concurrency=4)
    assert (worker.queues, worker.concurrency, worker.state) == (["a", "b"], 4, "RUNNING")
    store.worker_heartbeat("w1")
    assert store.get_worker("w1").heartbeat_at >= worker.heartbeat_at
    assert store.end_worker("w1", "LOST")
    assert not store.end_worker("w1", "STOPPED")  # compare-and-set: it is LOST now
    with pytest.raises(StoreConflict):
        store.worker_heartbeat("w1")  # a worker declared lost must stop
    assert [w.state for w in store.list_workers()] == ["LOST"]
    store.register_worker("w1", host="h1", queues=["a"], concurrency=1)  # restarted
    assert store.get_worker("w1").state == "RUNNING"


def test_a_session_is_pinned_once(store: Store) -> None:
    pinned = store.pin_session("s1", worker="w1", queue="host-w1")
    assert store.pin_session("s1", worker="w2", queue="host-w2") == pinned  # the first holds
    store.set_pinned_provider_session("s1", "prov-1")
    assert store.get_pinned_session("s1").provider_session_id == "prov-1"
    assert [p.name for p in store.list_pinned_sessions()] == ["s1"]
    assert store.find_pinned_session("nope") is None


def test_run_events_in_order(store: Store) -> None:
    submission, _ = store.create_submission("p", queue="q", request={})
    run_id = submission.run_id
    store.append_run_events(run_id, [{"type": "a"}, {"type": "b"}])
    store.append_run_events(run_id, [{"type": "c"}])
    assert store.run_events(run_id) == [(0, {"type": "a"}), (1, {"type": "b"}), (2, {"type": "c"})]
    assert store.run_events(run_id, after=1) == [(2, {"type": "c"})]


def test_owner_names_its_host() -> None:
    assert owner_host(current_owner()) is not None
    assert owner_host("123:4") is None
    assert owner_alive("999999:1@a-host-that-is-not-this-one")  # the heartbeat decides
    assert not owner_alive(f"999999:1@{owner_host(current_owner())}")
