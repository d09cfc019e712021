"""Forking a conversation (issue 29) against the scripted agent, through the library: the fork
is a conversation of its own (record, provider session opened by session/fork, history from
the fork point), `at_turn` only where the agent advertises Baton's fork extension, refused
with a stable code where session/fork is not advertised."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from baton.errors import (
    InvalidArgument,
    SessionForkAtTurnUnsupported,
    SessionForkNotAdvertised,
    SessionNameTaken,
)
from baton.journal import Journal
from baton.runtime.conversations import Conversations, NewConversation
from baton.runtime.runtime import Runtime

FORK = ("--cap", "sessionCapabilities.fork={}")
FORK_AT_TURN = ("--cap", 'sessionCapabilities.fork={"_meta":{"baton.forkAtTurn":true}}')


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


def agent_prompts(state: Path, session_id: str) -> list[str]:
    """The prompts the scripted agent holds in a session's context (its state file)."""
    data = json.loads((state / f"{session_id}.json").read_text())
    return [
        entry["content"]["text"]
        for entry in data["history"]
        if entry.get("sessionUpdate") == "user_message_chunk"
    ]


def outbound(data_dir: Path, method: str) -> list[dict[str, object]]:
    journal = Journal.in_data_dir(data_dir)
    return [
        record.message()
        for server in journal.servers()
        for record in journal.records(server)
        if record.metadata.method == method and record.direction == "outbound"
    ]


async def _with_turns(conversations: Conversations, state: Path, *flags: str) -> None:
    await conversations.create(
        NewConversation(name="parent", agent_command=agent(state, *flags), cwd=str(state.parent))
    )
    for text in ("echo one", "echo two", "echo three"):
        assert (await conversations.prompt("parent", text)).status == "COMPLETED"


async def test_a_fork_is_a_session_of_its_own_holding_the_parents_context(
    conversations: Conversations, state: Path
) -> None:
    await _with_turns(conversations, state, *FORK)
    parent = await conversations.get("parent")
    assert parent.capabilities["fork"] is True and parent.capabilities["forkAtTurn"] is False
    fork = await conversations.fork("parent", "child")
    assert fork.status == "IDLE" and fork.forked_from == "parent" and fork.fork_turns == 3
    assert fork.provider_session_id not in (None, parent.provider_session_id)
    assert agent_prompts(state, str(fork.provider_session_id)) == [
        "echo one",
        "echo two",
        "echo three",
    ]
    [sent] = outbound(conversations.runtime.data_dir, "session/fork")
    assert sent["params"]["sessionId"] == parent.provider_session_id  # type: ignore[index]
    assert "_meta" not in sent["params"]  # type: ignore[operator]
    # Its own turns go to its own provider session; the parent's are untouched.
    child_turn = await conversations.prompt("child", "echo four")
    assert child_turn.provider_session_id == fork.provider_session_id
    assert agent_prompts(state, str(parent.provider_session_id))[-1] == "echo three"
    history = await conversations.history("child")
    assert [(t.prompt, t.inherited_from) for t in history] == [
        ("echo one", "parent"),
        ("echo two", "parent"),
        ("echo three", "parent"),
        ("echo four", None),
    ]
    assert [t.prompt for t in await conversations.history("child", limit=2)] == [
        "echo three",
        "echo four",
    ]
    assert len(await conversations.history("parent")) == 3
    with pytest.raises(SessionNameTaken):
        await conversations.fork("parent", "child")


async def test_a_fork_at_an_earlier_turn_where_the_agent_advertises_it(
    conversations: Conversations, state: Path
) -> None:
    await _with_turns(conversations, state, *FORK_AT_TURN)
    fork = await conversations.fork("parent", "early", at_turn=1)
    assert fork.fork_turns == 1
    assert agent_prompts(state, str(fork.provider_session_id)) == ["echo one"]
    [sent] = outbound(conversations.runtime.data_dir, "session/fork")
    assert sent["params"]["_meta"] == {"baton.forkAtTurn": 1}  # type: ignore[index]
    assert [t.prompt for t in await conversations.history("early")] == ["echo one"]
    with pytest.raises(InvalidArgument, match="has 3 turns"):
        await conversations.fork("parent", "late", at_turn=4)
    assert await conversations.list() and "late" not in {c.name for c in await conversations.list()}


async def test_at_turn_is_refused_before_anything_starts_without_the_extension(
    conversations: Conversations, state: Path
) -> None:
    await _with_turns(conversations, state, *FORK)
    with pytest.raises(SessionForkAtTurnUnsupported, match="leave out --at-turn"):
        await conversations.fork("parent", "early", at_turn=2)
    assert outbound(conversations.runtime.data_dir, "session/fork") == []
    assert {c.name for c in await conversations.list()} == {"parent"}


async def test_not_advertised_is_refused_with_the_next_step(
    conversations: Conversations, state: Path
) -> None:
    await _with_turns(conversations, state)
    assert (await conversations.get("parent")).capabilities["fork"] is False
    with pytest.raises(SessionForkNotAdvertised, match="baton session new") as caught:
        await conversations.fork("parent", "child")
    assert caught.value.code == "SESSION_FORK_NOT_ADVERTISED"
    assert outbound(conversations.runtime.data_dir, "session/fork") == []
    assert {c.name for c in await conversations.list()} == {"parent"}


async def test_a_record_without_the_advertisement_is_decided_by_the_live_agent(
    conversations: Conversations, state: Path
) -> None:
    """A record an older Baton made has no ``fork`` entry: the agent's own answer decides,
    and the refusal is the same stable code, with no record or session left behind."""
    await _with_turns(conversations, state)
    store = conversations.runtime.store
    with store._tx() as conn:
        conn.execute("UPDATE conversations SET capabilities = '{}' WHERE name = 'parent'")
    with pytest.raises(SessionForkNotAdvertised):
        await conversations.fork("parent", "child")
    assert outbound(conversations.runtime.data_dir, "session/fork") == []
    assert {c.name for c in await conversations.list()} == {"parent"}
