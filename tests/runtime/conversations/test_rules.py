"""Conversation rules without an agent: names, the turn queue (FIFO, bounded, cancel-safe),
the attach decision and the refusals."""

from __future__ import annotations

import asyncio

import pytest

from baton.errors import (
    SessionBusy,
    SessionClosed,
    SessionNameInvalid,
    SessionNotResumable,
    SessionRecoveryRequired,
)
from baton.runtime.conversations import TurnQueue, check_session_name, generate_session_name
from baton.runtime.conversations.decisions import plan_attach, refuse_unless_promptable
from baton.store import Conversation


def record(**changes: object) -> Conversation:
    base: dict[str, object] = {
        "id": "cnv-1",
        "name": "work",
        "profile": "custom",
        "agent_command": "agent",
        "env_keys": [],
        "cwd": "/tmp",
        "settings": {},
        "provider_session_id": "p-1",
        "capabilities": {"resume": True, "load": True},
        "status": "IDLE",
        "owner": None,
        "active_run_id": None,
        "note": None,
        "created_at": "t",
        "last_used_at": "t",
        "updated_at": "t",
    }
    base.update(changes)
    return Conversation(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["a", "fix-login", "v1.2_x", "A" * 64, "9lives"])
def test_good_names(name: str) -> None:
    assert check_session_name(name) == name


@pytest.mark.parametrize("name", ["", "-x", ".hidden", "a b", "a/b", "A" * 65, "é", None, 3])
def test_bad_names_say_the_rule(name: object) -> None:
    with pytest.raises(SessionNameInvalid, match="letters, digits"):
        check_session_name(name)


def test_generated_names_follow_the_rules_and_skip_taken_ones() -> None:
    seen: list[str] = []

    def taken(name: str) -> bool:
        seen.append(name)
        return len(seen) < 3

    name = generate_session_name(taken)
    assert name == seen[-1] and len(seen) == 3
    assert check_session_name(name).startswith("session-")
    with pytest.raises(SessionNameInvalid):
        generate_session_name(lambda _n: True)


async def test_the_queue_is_fifo_and_hands_the_turn_on() -> None:
    queue = TurnQueue()
    order: list[int] = []

    async def prompt(n: int) -> None:
        async with queue.turn("s"):
            order.append(n)
            await asyncio.sleep(0)

    tasks = [asyncio.ensure_future(prompt(n)) for n in range(5)]
    await asyncio.gather(*tasks)
    assert order == [0, 1, 2, 3, 4]
    assert not queue.busy("s") and queue.waiting("s") == 0


async def test_no_wait_and_the_bound_are_session_busy() -> None:
    queue = TurnQueue(max_waiting=1)
    release = asyncio.Event()

    async def hold() -> None:
        async with queue.turn("s"):
            await release.wait()

    holder = asyncio.ensure_future(hold())
    await asyncio.sleep(0)
    with pytest.raises(SessionBusy, match="in this process"):
        async with queue.turn("s", wait=False):
            pass
    waiter = asyncio.ensure_future(hold())
    await asyncio.sleep(0)
    with pytest.raises(SessionBusy, match="already wait"):
        async with queue.turn("s"):
            pass
    with pytest.raises(SessionBusy):  # the line is full, timeout or not
        async with queue.turn("s", timeout=0.01):
            pass
    release.set()
    await asyncio.gather(holder, waiter)
    async with queue.turn("other", wait=False):
        assert queue.busy("other")


async def test_a_timed_out_waiter_leaves_the_line() -> None:
    queue = TurnQueue()
    release = asyncio.Event()

    async def hold() -> None:
        async with queue.turn("s"):
            await release.wait()

    holder = asyncio.ensure_future(hold())
    await asyncio.sleep(0)
    with pytest.raises(SessionBusy, match="after waiting"):
        async with queue.turn("s", timeout=0.01):
            pass
    assert queue.waiting("s") == 0
    release.set()
    await holder
    assert not queue.busy("s")


async def test_a_cancelled_waiter_never_stalls_the_queue() -> None:
    queue = TurnQueue()
    release = asyncio.Event()
    ran: list[str] = []

    async def hold(tag: str) -> None:
        async with queue.turn("s"):
            ran.append(tag)
            await release.wait()

    first = asyncio.ensure_future(hold("first"))
    await asyncio.sleep(0)
    cancelled = asyncio.ensure_future(hold("cancelled"))
    last = asyncio.ensure_future(hold("last"))
    await asyncio.sleep(0)
    release.set()
    await first  # its exit handed the turn to "cancelled", which has not run yet ...
    cancelled.cancel()  # ... and leaves now: "last" must still get the turn
    await last
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    assert ran == ["first", "last"]
    assert not queue.busy("s") and queue.waiting("s") == 0


async def test_a_waiter_cancelled_in_line_leaves_it() -> None:
    queue = TurnQueue()
    release = asyncio.Event()
    ran: list[str] = []

    async def hold(tag: str) -> None:
        async with queue.turn("s"):
            ran.append(tag)
            await release.wait()

    first = asyncio.ensure_future(hold("first"))
    await asyncio.sleep(0)
    gone = asyncio.ensure_future(hold("gone"))
    await asyncio.sleep(0)
    assert queue.waiting("s") == 1
    gone.cancel()
    with pytest.raises(asyncio.CancelledError):
        await gone
    assert queue.waiting("s") == 0
    release.set()
    await first
    assert ran == ["first"] and not queue.busy("s")


def test_attach_plan_prefers_attached_then_resume_then_load() -> None:
    assert plan_attach(record(), attached_here=True).method == "attached"
    assert plan_attach(record(), attached_here=False).method == "session/resume"
    loadable = record(capabilities={"resume": False, "load": True})
    assert plan_attach(loadable, attached_here=False).method == "session/load"
    with pytest.raises(SessionNotResumable, match="resume nor loadSession"):
        plan_attach(record(capabilities={}), attached_here=False)
    # Never prompted: no context to lose, a fresh session/new (whatever the capabilities).
    assert plan_attach(record(capabilities={}), attached_here=False, prompted=False).method == (
        "session/new"
    )
    assert plan_attach(record(), attached_here=True, prompted=False).method == "attached"
    with pytest.raises(SessionNotResumable, match="no provider session"):
        plan_attach(record(provider_session_id=None), attached_here=True)


def test_closed_and_recovery_required_are_refused_naming_what_to_do() -> None:
    refuse_unless_promptable(record())
    refuse_unless_promptable(record(status="ACTIVE"))
    with pytest.raises(SessionClosed):
        refuse_unless_promptable(record(status="CLOSED"))
    with pytest.raises(SessionRecoveryRequired, match="baton recover run-9"):
        refuse_unless_promptable(record(status="RECOVERY_REQUIRED"), "run-9")
