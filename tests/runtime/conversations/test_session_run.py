"""A conversation's turn as a run handle (``Conversations.start -> SessionRun``): the run id
at once from the handle (never from an event), the same RunHandle protocol as a local run,
early close interrupts, and the result only after the conversation is released."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from baton.errors import RunEventsUnavailable, SessionBusy
from baton.runtime.conversations import (
    Conversations,
    NewConversation,
    PromptOptions,
    SessionRun,
)
from baton.runtime.run import EVENTS_CLOSED, RunHandle
from baton.runtime.runtime import Runtime
from baton.runtime.turns.events import RunEvent


@pytest.fixture
async def conversations(tmp_path: Path) -> AsyncIterator[Conversations]:
    runtime = Runtime(data_dir=tmp_path / "data", interrupt_timeout=2.0)
    await runtime.open()
    state = tmp_path / "agent-state"
    state.mkdir()
    found = Conversations(runtime)
    command = [sys.executable, "-m", "baton.agents.scripted", "--state-dir", str(state)]
    await found.create(NewConversation(name="s", agent_command=command, cwd=str(tmp_path)))
    yield found
    await runtime.close()


async def test_start_returns_the_turns_handle_with_its_run_id_at_once(
    conversations: Conversations,
) -> None:
    run = await conversations.start("s", "echo hello")
    assert isinstance(run, SessionRun) and run.session == "s"
    store = conversations.runtime.store
    # The run exists, the conversation names it, before any event was read.
    assert store.get_run(run.id).status in ("CREATED", "STARTING")
    assert store.get_conversation("s").active_run_id == run.id
    assert conversations.running("s") is not None
    async with run.events() as events:
        seen = [event async for event in events]
    assert seen[0].type == "run_started" and seen[-1].type == "result"
    assert {event.run_id for event in seen} == {run.id}
    result = await run.result()
    assert (result.run_id, result.status) == (run.id, "COMPLETED")
    assert result.text.strip() == "hello"
    # The result comes after the conversation's release.
    assert run.done and store.get_conversation("s").status == "IDLE"
    assert run.provider_session_id == result.provider_session_id is not None
    assert run.capabilities is not None and isinstance(run.stderr_tail(), str)


async def test_a_waiting_turn_gets_its_handle_once_its_run_exists(
    conversations: Conversations,
) -> None:
    first = await conversations.start("s", "wait_for_cancel 20")
    second_start = asyncio.ensure_future(conversations.start("s", "echo second"))
    await asyncio.sleep(0.2)
    assert not second_start.done()  # in the session's queue: no run yet
    assert await first.interrupt("user")
    assert (await first.result()).status == "INTERRUPTED"
    second = await second_start
    assert second.id != first.id
    assert (await second.result()).status == "COMPLETED"


async def test_a_refusal_before_the_run_is_raised_by_start(conversations: Conversations) -> None:
    first = await conversations.start("s", "wait_for_cancel 20")
    with pytest.raises(SessionBusy):
        await conversations.start("s", "echo impatient", PromptOptions(wait=False))
    await first.interrupt("user")
    await first.result()


async def test_cancelling_a_waiting_start_withdraws_the_prompt(
    conversations: Conversations,
) -> None:
    first = await conversations.start("s", "wait_for_cancel 20")
    waiting = asyncio.ensure_future(conversations.start("s", "echo withdrawn"))
    await asyncio.sleep(0.2)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    await first.interrupt("user")
    await first.result()
    turns = await conversations.history("s")
    assert "echo withdrawn" not in [turn.prompt for turn in turns]
    assert conversations.queue.waiting("s") == 0


async def test_breaking_out_of_a_turns_events_interrupts_it(conversations: Conversations) -> None:
    run = await conversations.start("s", "wait_for_cancel 20")
    async with run.events() as events:
        async for event in events:
            if event.type == "text":
                break
    assert run.done  # the close waited for the turn and the conversation's release
    result = await run.result()
    assert result.status == "INTERRUPTED", result
    assert result.message is not None and EVENTS_CLOSED in result.message
    assert conversations.runtime.store.get_conversation("s").status == "IDLE"


async def test_a_turn_with_a_callback_has_no_stream(conversations: Conversations) -> None:
    seen: list[RunEvent] = []
    run = await conversations.start("s", "echo cb", on_event=seen.append)
    with pytest.raises(RunEventsUnavailable):
        run.events()
    assert (await run.result()).status == "COMPLETED"
    assert seen[0].run_id == run.id and seen[-1].type == "result"


async def test_a_session_turn_is_driven_through_the_run_handle_protocol(
    conversations: Conversations,
) -> None:
    handle: RunHandle = await conversations.start("s", "wait_for_cancel 20")
    assert await handle.interrupt("user")
    async with handle.events() as events:
        seen = [event async for event in events]
    result = await handle.result()
    assert result.run_id == handle.id == seen[-1].run_id and seen[-1].type == "result"
    assert result.status == "INTERRUPTED"
