"""Turn control through a real pipe: cancel, ignore_cancel, late updates, stop reasons, slow,
queued prompts and stdin EOF."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from baton.errors import AgentRequestError, BudgetExpired, TransportClosed


def ticks(agent: Any, session: str) -> int:
    return sum(
        1
        for u in agent.updates(session)
        if u["sessionUpdate"] == "agent_message_chunk"
        and u["content"]["text"].startswith(("waiting for cancel", "ignoring cancel"))
    )


async def test_wait_for_cancel_answers_cancelled(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    request_id = await agent.send_prompt(session, "wait_for_cancel 5; echo never")
    await agent.until(lambda: ticks(agent, session) >= 2)
    await agent.cancel(session)
    assert await agent.conn.await_response(request_id, timeout=20) == {"stopReason": "cancelled"}
    assert agent.updates(session)[0]["content"]["text"] == "waiting for cancel 1\n"
    assert "never" not in agent.text(session)


async def test_silent_wait_for_cancel(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    request_id = await agent.send_prompt(session, "wait_for_cancel 0")
    # A round trip proves the prompt is being handled before the cancel goes out.
    await agent.conn.request("session/list", {}, timeout=20)
    await agent.cancel(session)
    assert await agent.conn.await_response(request_id, timeout=20) == {"stopReason": "cancelled"}
    assert agent.updates(session) == []


async def test_cancel_request_cancels_the_prompt(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    request_id = await agent.send_prompt(session, "wait_for_cancel 5")
    await agent.until(lambda: ticks(agent, session) >= 1)
    await agent.conn.cancel_request(request_id)
    assert await agent.conn.await_response(request_id, timeout=20) == {"stopReason": "cancelled"}


async def test_ignore_cancel_never_answers(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    request_id = await agent.send_prompt(session, "ignore_cancel 5")
    await agent.until(lambda: ticks(agent, session) >= 1)
    await agent.cancel(session)
    # The agent still answers everything else.
    other = await agent.new_session()
    assert await agent.prompt(other["sessionId"], "echo alive") == {"stopReason": "end_turn"}
    seen = ticks(agent, session)
    # At stdin EOF the agent exits without ever answering the silenced prompt.
    assert agent.process.stdin is not None
    agent.process.stdin.close()
    assert await agent.exit_code() == 0
    with pytest.raises(TransportClosed):
        await agent.conn.await_response(request_id, timeout=20)
    assert ticks(agent, session) == seen


async def test_late_update_after_the_response(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    request_id = await agent.send_prompt(session, "late_update; echo body; late_update again")
    assert await agent.conn.await_response(request_id, timeout=20) == {"stopReason": "end_turn"}
    await agent.until(lambda: len(agent.updates(session)) == 3)
    # The frames in arrival order: the chunk, the prompt response, then the late updates.
    frames = agent.tap.inbound[-4:]
    assert frames[0]["params"]["update"]["content"]["text"] == "body"
    assert frames[1] == {"jsonrpc": "2.0", "id": request_id, "result": {"stopReason": "end_turn"}}
    assert [f["params"]["update"]["content"]["text"] for f in frames[2:]] == [
        "late update",
        "again",
    ]


@pytest.mark.parametrize("reason", ["max_tokens", "refusal", "max_turn_requests", "banana"])
async def test_stop_reason(spawn: Any, reason: str) -> None:
    agent = await spawn()
    session = await agent.start()
    assert await agent.prompt(session, f"echo a; stop {reason}; echo b") == {"stopReason": reason}
    assert agent.text(session) == "a"


async def test_slow_then_continue_and_cancel_ends_slow(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    assert await agent.prompt(session, "slow 0.01; echo after") == {"stopReason": "end_turn"}
    request_id = await agent.send_prompt(session, "echo started; slow 3600; echo never")
    await agent.until(lambda: agent.text(session).endswith("started"))
    await agent.cancel(session)
    assert await agent.conn.await_response(request_id, timeout=20) == {"stopReason": "cancelled"}
    assert agent.text(session) == "afterstarted"


async def test_prompts_queue_per_session(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    first = await agent.send_prompt(session, "echo 1; slow 0.05; echo 2")
    second = await agent.send_prompt(session, "echo 3")
    assert await agent.conn.await_response(first, timeout=20) == {"stopReason": "end_turn"}
    assert await agent.conn.await_response(second, timeout=20) == {"stopReason": "end_turn"}
    assert agent.text(session) == "123"


async def test_cancel_cancels_queued_prompts_too(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    first = await agent.send_prompt(session, "wait_for_cancel 5")
    second = await agent.send_prompt(session, "echo queued")
    await agent.until(lambda: ticks(agent, session) >= 1)
    await agent.cancel(session)
    assert await agent.conn.await_response(first, timeout=20) == {"stopReason": "cancelled"}
    assert await agent.conn.await_response(second, timeout=20) == {"stopReason": "cancelled"}
    assert "queued" not in agent.text(session)


async def test_stdin_eof_cancels_running_turns_and_exits(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    request_id = await agent.send_prompt(session, "wait_for_cancel 5")
    await agent.until(lambda: ticks(agent, session) >= 1)
    assert agent.process.stdin is not None
    agent.process.stdin.close()
    assert await agent.exit_code() == 0
    assert await agent.conn.await_response(request_id, timeout=20) == {"stopReason": "cancelled"}


async def test_eof_ignore_keeps_running(spawn: Any) -> None:
    agent = await spawn("--eof", "ignore")
    session = await agent.start()
    request_id = await agent.send_prompt(session, "wait_for_cancel 5")
    await agent.until(lambda: ticks(agent, session) >= 1)
    assert agent.process.stdin is not None
    agent.process.stdin.close()
    count = ticks(agent, session)
    # Still streaming after EOF: like real adapters, it must be killed.
    await agent.until(lambda: ticks(agent, session) >= count + 3)
    assert agent.process.returncode is None
    with pytest.raises(BudgetExpired):  # still unanswered (and still pending)
        await agent.conn.await_response(request_id, timeout=0.1)


async def test_script_errors_answer_invalid_params(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    with pytest.raises(AgentRequestError) as caught:
        await agent.prompt(session, "echo fine\nstream lots")
    assert caught.value.rpc_code == -32602
    assert caught.value.data == {"code": "SCRIPT_ERROR", "reason": "bad_integer", "line": 2}
    assert agent.updates(session) == []  # nothing ran


async def test_unknown_session_and_bad_params(spawn: Any) -> None:
    agent = await spawn()
    await agent.start()
    with pytest.raises(AgentRequestError) as caught:
        await agent.prompt("no-such-session", "echo x")
    assert caught.value.rpc_code == -32002
    with pytest.raises(AgentRequestError) as caught:
        await agent.conn.request("session/new", {"cwd": "relative", "mcpServers": []}, timeout=20)
    assert caught.value.rpc_code == -32602
    with pytest.raises(AgentRequestError) as caught:
        await agent.conn.request("no/such/method", {}, timeout=20)
    assert caught.value.rpc_code == -32601


async def test_work_runs_to_its_end_after_stdin_eof(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    first = await agent.send_prompt(session, "stream 20000; slow 0.05; echo done")
    second = await agent.send_prompt(session, "echo queued")
    assert agent.process.stdin is not None
    agent.process.stdin.close()
    assert await agent.exit_code() == 0
    assert await agent.conn.await_response(first, timeout=20) == {"stopReason": "end_turn"}
    assert await agent.conn.await_response(second, timeout=20) == {"stopReason": "end_turn"}
    assert len(agent.updates(session)) == 20002
    assert agent.text(session).endswith("chunk 20000\ndonequeued")


async def test_a_permission_pending_at_eof_counts_as_cancelled(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    never = asyncio.Event()

    async def stuck(request: Any) -> dict[str, Any]:
        await never.wait()
        return {}

    agent.answer = stuck
    request_id = await agent.send_prompt(session, "write a.txt x; echo after")
    await agent.until(lambda: len(agent.permission_requests) == 1)
    assert agent.process.stdin is not None
    agent.process.stdin.close()
    assert await agent.exit_code() == 0
    assert await agent.conn.await_response(request_id, timeout=20) == {"stopReason": "end_turn"}
    assert agent.updates(session)[1]["rawOutput"] == {"outcome": "cancelled"}
    assert agent.text(session) == "after"
    assert not (agent.cwd / "a.txt").exists()
