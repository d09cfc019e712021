"""Baton's typed client against the SDK agents, below the runtime: the v2 initialize exchange
and ``load_session`` as ``session/resume`` with ``replayFrom`` (the runtime attaches with a plain
resume, so the replay is checked here)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from baton.connection import Connection
from baton.connection.client import AcpClient
from baton.wire.version import ProtocolChoice

#: Generous bound on one wait (never a timing assertion).
WAIT = 30.0


async def test_initialize_and_resume_with_replay(sdk_agent: list[str], tmp_path: Path) -> None:
    process = await asyncio.create_subprocess_exec(
        *sdk_agent,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        cwd=tmp_path,
    )
    assert process.stdout is not None and process.stdin is not None
    conn = Connection(process.stdout, process.stdin)
    updates: list[dict[str, Any]] = []
    idle = asyncio.Event()

    def on_update(message: dict[str, Any], _ref: object) -> None:
        update = message["params"]["update"]
        updates.append(update)
        if update.get("sessionUpdate") == "state_update" and update.get("state") == "idle":
            idle.set()

    conn.on_any_notification(on_update)
    conn.start()
    try:
        # The explicit opt-in: auto offers 1 (issue 29), which these v2-only agents refuse.
        client = AcpClient(conn, protocol=ProtocolChoice(2))
        initialized = await client.initialize()
        assert initialized.protocol_version == 2 and client.codec.version == 2
        assert initialized.agent_info is not None and initialized.agent_info.version
        assert initialized.capabilities.mcp_stdio and initialized.capabilities.session_resume
        opened = await client.new_session(str(tmp_path))
        request_id = await client.send_prompt(opened.session_id, [{"type": "text", "text": "text"}])
        ack = await conn.await_response(request_id, timeout=WAIT)
        assert isinstance(ack["messageId"], str)
        await asyncio.wait_for(idle.wait(), WAIT)
        live = [u for u in updates if u["sessionUpdate"] == "agent_message_chunk"]
        updates.clear()
        await client.load_session(opened.session_id, str(tmp_path))
        replayed = [u for u in updates if u["sessionUpdate"] == "agent_message_chunk"]
        assert replayed == live
        assert updates[-1] == {"sessionUpdate": "state_update", "state": "idle"}
    finally:
        await conn.close()
        if process.returncode is None:
            process.kill()
        await process.wait()
