"""Output commands through a real pipe: the exact frames and the stop reason."""

from __future__ import annotations

from typing import Any

from baton.agents.scripted.frames import available_commands


def chunk(text: str, kind: str = "agent_message_chunk") -> dict[str, Any]:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}}


async def test_plain_text_is_echoed(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    assert await agent.prompt(session, "Summarize the repository; then stop.") == {
        "stopReason": "end_turn"
    }
    assert agent.updates(session) == [chunk("Summarize the repository; then stop.")]


async def test_echo_think_plan_usage_title_commands(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    script = "echo hello world\nthink pondering; plan A | B | C | D\nusage 7 100; title My\\; title\ncommands"
    assert await agent.prompt(session, script) == {"stopReason": "end_turn"}
    assert agent.updates(session) == [
        chunk("hello world"),
        chunk("pondering", "agent_thought_chunk"),
        {
            "sessionUpdate": "plan",
            "entries": [
                {"content": "A", "priority": "high", "status": "completed"},
                {"content": "B", "priority": "medium", "status": "in_progress"},
                {"content": "C", "priority": "medium", "status": "pending"},
                {"content": "D", "priority": "medium", "status": "pending"},
            ],
        },
        {"sessionUpdate": "usage_update", "used": 7, "size": 100},
        {"sessionUpdate": "session_info_update", "title": "My; title"},
        available_commands(),
    ]
    names = [c["name"] for c in agent.updates(session)[-1]["availableCommands"]]
    assert "stream" in names and "client_request" in names


async def test_defaults_and_escapes(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    await agent.prompt(session, "echo; echo two\\nlines\\tand\\\\; plan; usage")
    assert agent.updates(session)[:2] == [chunk(""), chunk("two\nlines\tand\\")]
    assert [e["content"] for e in agent.updates(session)[2]["entries"]] == [
        "Read the prompt",
        "Run the script",
        "Report back",
    ]
    assert agent.updates(session)[3] == {
        "sessionUpdate": "usage_update",
        "used": 42,
        "size": 200000,
    }


async def test_stream_exact_chunks(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    assert await agent.prompt(session, "stream 5000") == {"stopReason": "end_turn"}
    updates = agent.updates(session)
    assert len(updates) == 5000
    assert updates[0] == chunk("chunk 1\n")
    assert updates[-1] == chunk("chunk 5000\n")
    assert agent.text(session) == "".join(f"chunk {i}\n" for i in range(1, 5001))
    assert agent.conn.skipped_frames == 0


async def test_stream_with_delay_and_zero(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    assert await agent.prompt(session, "stream 3 5; stream 0; echo done") == {
        "stopReason": "end_turn"
    }
    assert agent.text(session) == "chunk 1\nchunk 2\nchunk 3\ndone"


async def test_prompt_text_blocks_are_joined(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    request_id = await agent.conn.send_request(
        "session/prompt",
        {
            "sessionId": session,
            "prompt": [
                {"type": "text", "text": "echo a"},
                {"type": "resource_link", "uri": "file:///x", "name": "x"},
                {"type": "text", "text": "echo b"},
            ],
        },
    )
    assert await agent.conn.await_response(request_id, timeout=20) == {"stopReason": "end_turn"}
    assert agent.text(session) == "ab"
