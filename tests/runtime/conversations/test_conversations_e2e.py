"""Conversations end to end against the scripted agent (issue 17): one provider session across
turns and across Runtime instances, resume else load else SESSION_NOT_RESUMABLE, one active
turn per conversation (FIFO), recovery refuses prompts until settled, close."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from baton.errors import (
    SessionBusy,
    SessionClosed,
    SessionNameTaken,
    SessionNotResumable,
    SessionRecoveryRequired,
)
from baton.journal import Journal
from baton.runtime.conversations import (
    Conversations,
    NewConversation,
    PromptOptions,
    SessionSetupFailed,
)
from baton.runtime.runtime import Runtime
from baton.runtime.turns.events import RunEvent


def agent(state: Path, *flags: str) -> list[str]:
    return [sys.executable, "-m", "baton.agents.scripted", "--state-dir", str(state), *flags]


@pytest.fixture
def state(tmp_path: Path) -> Path:
    path = tmp_path / "agent-state"
    path.mkdir()
    return path


@pytest.fixture
async def conversations(tmp_path: Path) -> AsyncIterator[Conversations]:
    runtime = Runtime(data_dir=tmp_path / "data", interrupt_timeout=1.0)
    await runtime.open()
    yield Conversations(runtime)
    await runtime.close()


def outbound(data_dir: Path, method: str) -> int:
    journal = Journal.in_data_dir(data_dir)
    return sum(
        1
        for server in journal.servers()
        for record in journal.records(server)
        if record.metadata.method == method and record.direction == "outbound"
    )


def attached_by(events: list[RunEvent]) -> object:
    [session] = [e for e in events if e.type == "session"]
    return session.data["attachedBy"], session.data["replayedUpdates"]


async def test_turns_share_one_provider_session_kept_attached_in_this_process(
    conversations: Conversations, tmp_path: Path, state: Path
) -> None:
    record = await conversations.create(
        NewConversation(name="work", agent_command=agent(state), cwd=str(tmp_path))
    )
    assert record.status == "IDLE" and record.provider_session_id is not None
    assert record.capabilities == {
        "resume": True,
        "load": True,
        "close": True,
        "list": True,
        "fork": False,
        "forkAtTurn": False,
    }
    events: list[RunEvent] = []
    first = await conversations.prompt("work", "echo one", on_event=events.append)
    second = await conversations.prompt("work", "echo two", on_event=events.append)
    assert (first.status, first.text, second.text) == ("COMPLETED", "one", "two")
    assert first.provider_session_id == second.provider_session_id == record.provider_session_id
    sessions = [e for e in events if e.type == "session"]
    assert [s.data["attachedBy"] for s in sessions] == ["attached", "attached"]
    data_dir = conversations.runtime.data_dir
    assert outbound(data_dir, "session/new") == 1
    assert outbound(data_dir, "session/resume") == outbound(data_dir, "session/load") == 0
    turns = await conversations.history("work")
    assert [(t.prompt, t.reply) for t in turns] == [("echo one", "one"), ("echo two", "two")]
    assert [t.run_id for t in await conversations.history("work", limit=1)] == [second.run_id]
    view = await conversations.show("work")
    assert view.attached_here and [r.id for r in view.runs] == [first.run_id, second.run_id]
    assert (await conversations.get("work")).status == "IDLE"
    with pytest.raises(SessionNameTaken):
        await conversations.create(NewConversation(name="work", agent_command=agent(state)))


async def test_a_new_runtime_resumes_else_loads_with_the_replay_kept_apart(
    tmp_path: Path, state: Path
) -> None:
    data = tmp_path / "data"
    for name, flags in (
        ("resumable", ()),
        ("loadable", ("--cap", "sessionCapabilities.resume=omit")),
    ):
        async with Runtime(data_dir=data) as runtime:
            conversations = Conversations(runtime)
            await conversations.create(
                NewConversation(name=name, agent_command=agent(state, *flags), cwd=str(tmp_path))
            )
            assert (await conversations.prompt(name, "echo before")).status == "COMPLETED"
        async with Runtime(data_dir=data) as runtime:
            events: list[RunEvent] = []
            later = await Conversations(runtime).prompt(name, "echo after", on_event=events.append)
            assert (later.status, later.text) == ("COMPLETED", "after")
            method, replayed = attached_by(events)
            if name == "resumable":
                assert (method, replayed) == ("session/resume", 0)
            else:
                # The first turn (its prompt and its reply) replayed, and not in this run.
                assert method == "session/load" and isinstance(replayed, int) and replayed >= 2
                assert [e.data.get("text") for e in events if e.type == "text"] == ["after"]


async def test_an_agent_without_resume_or_load_is_refused_before_any_process_starts(
    tmp_path: Path, state: Path
) -> None:
    data = tmp_path / "data"
    flags = ("--cap", "sessionCapabilities.resume=omit", "--cap", "loadSession=omit")
    async with Runtime(data_dir=data) as runtime:
        conversations = Conversations(runtime)
        await conversations.create(
            NewConversation(name="stuck", agent_command=agent(state, *flags), cwd=str(tmp_path))
        )
        assert (await conversations.prompt("stuck", "echo context")).status == "COMPLETED"
    async with Runtime(data_dir=data) as runtime:
        conversations = Conversations(runtime)
        with pytest.raises(
            SessionNotResumable, match=r"neither sessionCapabilities\.resume nor loadSession"
        ):
            await conversations.prompt("stuck", "echo lost context")
        assert runtime._lanes == {}
        assert (await conversations.get("stuck")).status == "IDLE"


async def test_later_prompts_wait_their_turn_in_order_or_fail_busy_without_waiting(
    conversations: Conversations, tmp_path: Path, state: Path
) -> None:
    await conversations.create(
        NewConversation(name="q", agent_command=agent(state), cwd=str(tmp_path))
    )
    started = asyncio.Event()
    first = asyncio.ensure_future(
        conversations.prompt("q", "stream 3 100", on_event=lambda _e: started.set())
    )
    await started.wait()
    later = [asyncio.ensure_future(conversations.prompt("q", f"echo {n}")) for n in range(3)]
    with pytest.raises(SessionBusy):
        await conversations.prompt("q", "echo impatient", PromptOptions(wait=False))
    results = await asyncio.gather(first, *later)
    assert all(r.status == "COMPLETED" for r in results)
    turns = await conversations.history("q")
    assert [t.prompt for t in turns] == ["stream 3 100", "echo 0", "echo 1", "echo 2"]


async def test_a_crashed_turn_refuses_prompts_until_recovered_then_attaches_again(
    conversations: Conversations, tmp_path: Path, state: Path
) -> None:
    await conversations.create(
        NewConversation(name="c", agent_command=agent(state), cwd=str(tmp_path))
    )
    crashed = await conversations.prompt("c", "echo partial; crash 3")
    assert crashed.status == "RECOVERY_REQUIRED"
    assert (await conversations.get("c")).status == "RECOVERY_REQUIRED"
    with pytest.raises(SessionRecoveryRequired, match=crashed.run_id):
        await conversations.prompt("c", "echo next")
    assert outbound(conversations.runtime.data_dir, "session/prompt") == 1  # never replayed
    store = conversations.runtime.store
    assert store is not None
    await store.update_run_status(crashed.run_id, "FAILED")  # `baton recover --mark-failed`
    events: list[RunEvent] = []
    again = await conversations.prompt("c", "echo next", on_event=events.append)
    assert (again.status, again.text) == ("COMPLETED", "next")
    assert attached_by(events) == ("session/resume", 0)
    assert again.provider_session_id == crashed.provider_session_id


async def test_close_sends_session_close_when_attached_and_then_refuses_prompts(
    conversations: Conversations, tmp_path: Path, state: Path
) -> None:
    await conversations.create(
        NewConversation(name="done", agent_command=agent(state), cwd=str(tmp_path))
    )
    closed = await conversations.close("done")
    assert closed.status == "CLOSED" and closed.note == "closed with session/close"
    assert outbound(conversations.runtime.data_dir, "session/close") == 1
    with pytest.raises(SessionClosed):
        await conversations.prompt("done", "echo more")
    assert (await conversations.close("done")).status == "CLOSED"


async def test_close_in_another_process_never_starts_the_agent(tmp_path: Path, state: Path) -> None:
    data = tmp_path / "data"
    async with Runtime(data_dir=data) as runtime:
        await Conversations(runtime).create(
            NewConversation(name="far", agent_command=agent(state), cwd=str(tmp_path))
        )
    async with Runtime(data_dir=data) as runtime:
        closed = await Conversations(runtime).close("far")
        assert runtime._lanes == {}
    assert closed.status == "CLOSED"
    assert closed.note is not None and "provider keeps the session" in closed.note


async def test_a_failed_creation_leaves_no_record(tmp_path: Path) -> None:
    async with Runtime(data_dir=tmp_path / "data") as runtime:
        conversations = Conversations(runtime)
        with pytest.raises(SessionSetupFailed) as failure:
            await conversations.create(
                NewConversation(
                    name="broken",
                    agent_command=[sys.executable, "-c", "import sys; sys.exit(3)"],
                    cwd=str(tmp_path),
                )
            )
        assert failure.value.result.status == "FAILED"
        assert await conversations.list() == []


async def test_the_session_handle_is_the_same_machinery(
    conversations: Conversations, tmp_path: Path, state: Path
) -> None:
    session = await conversations.session(agent_command=agent(state), cwd=str(tmp_path))
    assert session.name.startswith("session-")
    events = [event async for event in session.events("echo hi")]
    assert events[-1].type == "result" and events[-1].data["status"] == "COMPLETED"
    controls = session.controls()
    assert controls.provider_session_id == (await session.record()).provider_session_id
    assert [t.reply for t in await session.history()] == ["hi"]
    assert not session.cancel()
    assert (await session.close()).status == "CLOSED"
    reopened = await conversations.session(session.name)
    assert (await reopened.record()).status == "CLOSED"


async def test_a_never_prompted_session_elsewhere_opens_a_fresh_provider_session(
    tmp_path: Path, state: Path
) -> None:
    """Real adapters (claude-agent-acp 0.23.1, codex-acp 0.16.0) keep a session only once it
    was prompted: resuming an unprompted one fails. With no turn there is nothing to lose."""
    data = tmp_path / "data"
    flags = ("--cap", "sessionCapabilities.resume=omit", "--cap", "loadSession=omit")
    async with Runtime(data_dir=data) as runtime:
        created = await Conversations(runtime).create(
            NewConversation(name="fresh", agent_command=agent(state, *flags), cwd=str(tmp_path))
        )
    async with Runtime(data_dir=data) as runtime:
        conversations = Conversations(runtime)
        events: list[RunEvent] = []
        first = await conversations.prompt("fresh", "echo first", on_event=events.append)
        assert (first.status, first.text) == ("COMPLETED", "first")
        assert attached_by(events) == (None, 0)
        assert first.provider_session_id != created.provider_session_id
        record = await conversations.get("fresh")
        assert record.provider_session_id == first.provider_session_id
        events.clear()
        second = await conversations.prompt("fresh", "echo second", on_event=events.append)
        assert attached_by(events) == ("attached", 0)
        assert second.provider_session_id == first.provider_session_id
    async with Runtime(data_dir=data) as runtime:
        # Prompted now: without resume or load it is refused rather than started afresh.
        with pytest.raises(SessionNotResumable):
            await Conversations(runtime).prompt("fresh", "echo third")
