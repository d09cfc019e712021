"""Fault commands through a real pipe, against Baton's Connection."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from baton.connection.core import READ_CHUNK_BYTES
from baton.errors import AgentRequestError, FrameTooLarge, TransportClosed

#: The cap the fault tests give the client connection.
CAP = 64 * 1024


async def test_garbage_is_skipped_and_counted(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    assert agent.conn.skipped_frames == 0
    assert await agent.prompt(session, "garbage 13; echo still fine") == {"stopReason": "end_turn"}
    assert agent.conn.skipped_frames == 13
    assert agent.text(session) == "still fine"
    assert agent.conn.violation_count == 0


@pytest.mark.parametrize("size", [CAP - 1, CAP])
async def test_bigframe_up_to_the_cap_arrives_whole(spawn: Any, size: int) -> None:
    agent = await spawn(max_frame_bytes=CAP)
    session = await agent.start()
    assert await agent.prompt(session, f"bigframe {size}") == {"stopReason": "end_turn"}
    raw = agent.notifications[-1]
    text = raw["params"]["update"]["content"]["text"]
    assert set(text) == {"x"}
    import orjson

    assert len(orjson.dumps(raw)) == size


async def test_bigframe_over_the_cap_closes_the_connection(spawn: Any) -> None:
    agent = await spawn(max_frame_bytes=CAP)
    session = await agent.start()
    request_id = await agent.send_prompt(session, f"bigframe {CAP + 1}")
    reason = await agent.conn.drained()
    assert isinstance(reason, FrameTooLarge)
    assert reason.cap == CAP
    with pytest.raises(FrameTooLarge):
        await agent.conn.await_response(request_id, timeout=20)


async def test_bigframe_suffixes_and_minimum(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    assert await agent.prompt(session, "bigframe 1k") == {"stopReason": "end_turn"}
    with pytest.raises(AgentRequestError) as caught:
        await agent.prompt(session, "bigframe 10")
    assert caught.value.rpc_code == -32602
    assert "at least" in caught.value.agent_message


async def test_endless_is_rejected_after_cap_plus_one_chunk(spawn: Any) -> None:
    agent = await spawn(max_frame_bytes=CAP)
    session = await agent.start()
    await agent.send_prompt(session, "endless")
    reason = await agent.conn.drained()
    assert isinstance(reason, FrameTooLarge)
    assert CAP < reason.seen <= CAP + READ_CHUNK_BYTES
    # Nobody reads stdout any more, yet the agent still notices stdin EOF and exits: its
    # stdout then ends (asyncio only reports the exit once that pipe reached EOF).
    assert agent.process.stdin is not None and agent.process.stdout is not None
    agent.process.stdin.close()
    stdout = agent.process.stdout

    async def until_eof() -> None:
        while await stdout.read(1024 * 1024):
            pass

    await asyncio.wait_for(until_eof(), 20)
    assert await agent.exit_code() == 0


async def test_unknown_id_is_a_violation(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    assert await agent.prompt(session, "unknown_id; unknown_id abc") == {"stopReason": "end_turn"}
    assert [v.kind for v in agent.conn.violations] == ["unknown_response_id"] * 2
    assert "999999999" in agent.conn.violations[0].message
    assert "'abc'" in agent.conn.violations[1].message


async def test_crash_mid_turn(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    request_id = await agent.send_prompt(session, "echo before; crash 7; echo never")
    assert await agent.exit_code() == 7
    with pytest.raises(TransportClosed):
        await agent.conn.await_response(request_id, timeout=20)
    assert agent.text(session) == "before"


async def test_crash_default_code(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    await agent.send_prompt(session, "crash")
    assert await agent.exit_code() == 1


async def test_hang_answers_nothing(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    request_id = await agent.send_prompt(session, "echo last words; hang")
    await agent.until(lambda: agent.text(session) == "last words")
    list_id = await agent.conn.send_request("session/list", {})
    assert agent.process.stdin is not None
    agent.process.stdin.close()
    assert await agent.exit_code() == 0
    for pending in (request_id, list_id):
        with pytest.raises(TransportClosed):
            await agent.conn.await_response(pending, timeout=20)


async def test_stderr_flood_exact_bytes(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    before = len(agent.stderr)
    assert await agent.prompt(session, "stderr_flood 300k; echo ok") == {"stopReason": "end_turn"}
    assert agent.text(session) == "ok"
    await agent.conn.close()
    assert agent.process.stdin is not None
    agent.process.stdin.close()
    assert await agent.exit_code() == 0
    assert agent._stderr_task is not None
    await agent._stderr_task
    flood = bytes(agent.stderr[before:])
    assert len(flood) == 300 * 1024
    assert flood.startswith(b"scripted-agent: stderr flood ")


@pytest.mark.parametrize(
    ("script", "method", "params"),
    [
        ("client_request fs/read_text_file notes.txt", "fs/read_text_file", {"path": "notes.txt"}),
        ("client_request fs/read_text_file", "fs/read_text_file", {"path": "README.md"}),
        (
            "client_request fs/write_text_file out.txt two words",
            "fs/write_text_file",
            {"path": "out.txt", "content": "two words"},
        ),
        (
            "client_request terminal/create ls -la",
            "terminal/create",
            {"command": "ls", "args": ["-la"]},
        ),
    ],
)
async def test_client_request_is_refused_by_baton(
    spawn: Any, script: str, method: str, params: dict[str, Any]
) -> None:
    agent = await spawn()
    session = await agent.start()
    assert await agent.prompt(session, script) == {"stopReason": "end_turn"}
    sent = next(m for m in agent.tap.inbound if m.get("method") == method)
    assert sent["id"] == 0
    expected = {"sessionId": session, **params}
    if "path" in params:
        expected["path"] = str(agent.cwd / params["path"])
    if method == "terminal/create":
        expected["cwd"] = str(agent.cwd)
    assert sent["params"] == expected
    report = agent.text(session)
    assert report.startswith(f"client_request {method}: error -32601 Method not found: {method}")


async def test_client_request_answered_by_a_handler(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()

    async def read(request: Any) -> dict[str, Any]:
        return {"content": "hello"}

    agent.conn.on_request("fs/read_text_file", read)
    await agent.prompt(session, "client_request fs/read_text_file a.txt")
    assert agent.text(session) == 'client_request fs/read_text_file: result {"content":"hello"}'


async def test_client_request_paths_stay_inside_cwd(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    with pytest.raises(AgentRequestError) as caught:
        await agent.prompt(session, "client_request fs/read_text_file ../../etc/passwd")
    assert caught.value.rpc_code == -32602
    assert not any(m.get("method") == "fs/read_text_file" for m in agent.tap.inbound)
