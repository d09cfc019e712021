"""Conversation records (issue 17): the status table edge by edge, claims and their owner,
runs in order, reconciliation of a dead owner and of a settled recovery, names unique."""

from __future__ import annotations

from itertools import product
from typing import Any

import pytest

from baton.errors import (
    SessionBusy,
    SessionNameTaken,
    SessionNotFound,
    SessionStatusTransitionInvalid,
    StoreConflict,
)
from baton.store import (
    CONVERSATION_STATUSES,
    INITIAL_SESSION_STATUS,
    SESSION_STATUS_TRANSITIONS,
    Store,
)
from baton.store.conversation_status import check_session_transition

#: The table as docs/sessions.md states it, edge by edge.
EXPECTED_EDGES = {
    ("IDLE", "ACTIVE"),
    ("IDLE", "CLOSED"),
    ("ACTIVE", "IDLE"),
    ("ACTIVE", "RECOVERY_REQUIRED"),
    ("ACTIVE", "CLOSED"),
    ("RECOVERY_REQUIRED", "IDLE"),
}
DEAD = "999999999:1"


def never_alive(_owner: str | None) -> bool:
    return False


@pytest.fixture
def store(store_target: Any) -> Store:
    """The store on each backend (PostgreSQL when BATON_TEST_POSTGRES_URL names a server)."""
    return store_target.open()  # type: ignore[no-any-return]


def idle(store: Store, name: str = "work", provider: str = "prov-1") -> None:
    store.create_conversation(name, "custom", "/tmp", agent_command=["agent", "--x"])
    store.release_conversation(
        name, "IDLE", provider_session_id=provider, capabilities={"resume": True}
    )


def test_the_table_is_the_documented_one_and_final_is_final() -> None:
    assert set(SESSION_STATUS_TRANSITIONS) == set(CONVERSATION_STATUSES)
    edges = {(a, b) for a, targets in SESSION_STATUS_TRANSITIONS.items() for b in targets}
    assert edges == EXPECTED_EDGES
    assert SESSION_STATUS_TRANSITIONS["CLOSED"] == frozenset()
    assert INITIAL_SESSION_STATUS == "ACTIVE"


@pytest.mark.parametrize(("current", "new"), list(product(sorted(CONVERSATION_STATUSES), repeat=2)))
def test_every_pair_is_allowed_exactly_when_the_table_says(current: str, new: str) -> None:
    if (current, new) in EXPECTED_EDGES:
        check_session_transition("s", current, new)
    else:
        with pytest.raises(SessionStatusTransitionInvalid):
            check_session_transition("s", current, new)


def test_create_is_claimed_by_its_creator_then_idle_with_the_provider_session(
    store: Store,
) -> None:
    created = store.create_conversation(
        "work",
        "custom",
        "/tmp",
        agent_command="agent --key sk-ant-api03-" + "a" * 40,
        env_keys=["OPENAI_API_KEY"],
        settings={"mode": "plan", "config": {"x": "1"}},
    )
    assert created.status == "ACTIVE" and created.owner == store.owner
    assert created.env_keys == ["OPENAI_API_KEY"]
    assert isinstance(created.agent_command, str) and "a" * 40 not in created.agent_command
    done = store.release_conversation(
        "work", "IDLE", provider_session_id="p1", capabilities={"resume": False, "load": True}
    )
    assert done.status == "IDLE" and done.owner is None
    assert done.provider_session_id == "p1"
    assert done.capabilities == {"resume": False, "load": True}
    assert done.settings == {"mode": "plan", "config": {"x": "1"}}


def test_names_are_unique_and_unknown_names_are_not_found(store: Store) -> None:
    idle(store)
    with pytest.raises(SessionNameTaken):
        store.create_conversation("work", "claude", "/tmp")
    with pytest.raises(SessionNotFound):
        store.get_conversation("nope")
    with pytest.raises(SessionNotFound):
        store.claim_conversation("nope")


def test_one_claim_wins_and_only_the_owner_attaches_and_ends_the_turn(
    store: Store, store_target: Any
) -> None:
    idle(store)
    other = store_target.open()
    other.owner = DEAD  # another process's view of the same store
    claimed = store.claim_conversation("work")
    assert claimed.status == "ACTIVE"
    with pytest.raises(StoreConflict):
        other.claim_conversation("work")
    run = store.create_run("hello")
    with pytest.raises(StoreConflict):
        other.attach_conversation_run("work", run.id)
    store.attach_conversation_run("work", run.id)
    assert store.get_conversation("work").active_run_id == run.id
    with pytest.raises(StoreConflict):
        other.release_conversation("work", "IDLE")
    assert store.release_conversation("work", "IDLE").status == "IDLE"


def test_runs_are_kept_in_order_and_history_can_take_the_last_n(store: Store) -> None:
    idle(store)
    ids = []
    for index in range(3):
        store.claim_conversation("work")
        run = store.create_run(f"prompt {index}")
        store.attach_conversation_run("work", run.id)
        store.release_conversation("work", "IDLE")
        ids.append(run.id)
    assert [r.id for r in store.conversation_runs("work")] == ids
    assert [r.id for r in store.conversation_runs("work", limit=2)] == ids[1:]
    assert store.turn_counts_by_conversation() == {"work": 3}


def test_a_dead_owners_turn_with_an_unsettled_run_is_recovery_required_until_settled(
    store: Store,
) -> None:
    idle(store)
    store.claim_conversation("work")
    run = store.create_run("hello", status="RUNNING")
    store.attach_conversation_run("work", run.id)
    # Alive (this process): nothing changes.
    assert store.reconcile_conversation("work", lambda _o: True).status == "ACTIVE"
    assert store.reconcile_conversation("work", never_alive).status == "RECOVERY_REQUIRED"
    # Still unsettled while the run is in flight or RECOVERY_REQUIRED.
    assert store.reconcile_conversation("work", never_alive).status == "RECOVERY_REQUIRED"


async def test_settling_the_run_makes_the_conversation_idle_again(store: Store) -> None:
    idle(store)
    store.claim_conversation("work")
    run = store.create_run("hello", status="RUNNING")
    store.attach_conversation_run("work", run.id)
    await store.update_run_status(run.id, "RECOVERY_REQUIRED")
    assert store.release_conversation("work", "RECOVERY_REQUIRED").status == ("RECOVERY_REQUIRED")
    with pytest.raises(StoreConflict):
        store.claim_conversation("work")
    assert store.reconcile_conversation("work", never_alive).status == "RECOVERY_REQUIRED"
    await store.update_run_status(run.id, "FAILED")  # `baton recover --mark-failed`
    assert store.reconcile_conversation("work", never_alive).status == "IDLE"


async def test_a_dead_owner_after_the_outcome_was_recorded_is_idle(store: Store) -> None:
    idle(store)
    store.claim_conversation("work")
    run = store.create_run("hello", status="RUNNING")
    store.attach_conversation_run("work", run.id)
    await store.update_run_status(run.id, "COMPLETED")
    assert store.reconcile_conversation("work", never_alive).status == "IDLE"


def test_a_creation_that_never_finished_is_closed(store: Store) -> None:
    store.create_conversation("half", "custom", "/tmp")
    settled = store.reconcile_conversation("half", never_alive)
    assert settled.status == "CLOSED" and settled.note is not None


def test_close_is_final_and_only_from_idle(store: Store) -> None:
    idle(store)
    store.claim_conversation("work")
    with pytest.raises(StoreConflict):
        store.close_conversation("work")
    store.release_conversation("work", "IDLE")
    closed = store.close_conversation("work", note="closed locally")
    assert closed.status == "CLOSED" and closed.note == "closed locally"
    with pytest.raises(SessionStatusTransitionInvalid):
        store.close_conversation("work")
    with pytest.raises(StoreConflict):
        store.claim_conversation("work")


def test_remove_is_refused_while_active_and_keeps_the_runs(store: Store) -> None:
    idle(store)
    store.claim_conversation("work")
    run = store.create_run("hello")
    store.attach_conversation_run("work", run.id)
    with pytest.raises(SessionBusy):
        store.delete_conversation("work")
    store.release_conversation("work", "IDLE")
    store.delete_conversation("work")
    assert store.find_conversation("work") is None
    assert store.get_run(run.id).id == run.id
    idle(store)  # the name is free again
    assert store.conversation_runs("work") == []


def test_listing_is_most_recent_first_and_filters(store: Store) -> None:
    idle(store, "a")
    idle(store, "b")
    store.claim_conversation("a")
    store.release_conversation("a", "IDLE")
    assert [c.name for c in store.list_conversations()] == ["a", "b"]
    store.close_conversation("b")
    assert [c.name for c in store.list_conversations(status="CLOSED")] == ["b"]
    assert [c.name for c in store.list_conversations(cwd="/elsewhere")] == []


async def test_prompted_means_a_prompt_may_have_reached_the_provider(store: Store) -> None:
    idle(store)
    assert not store.conversation_prompted("work")
    store.claim_conversation("work")
    setup_failure = store.create_run("never sent", status="STARTING")
    store.attach_conversation_run("work", setup_failure.id)
    await store.update_run_status(setup_failure.id, "FAILED")
    store.release_conversation("work", "IDLE")
    assert not store.conversation_prompted("work")
    store.claim_conversation("work")
    sent = store.create_run("sent", status="STARTING")
    store.attach_conversation_run("work", sent.id)
    await store.update_run_status(sent.id, "RUNNING")
    assert store.conversation_prompted("work")
