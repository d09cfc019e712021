"""The suite-wide outbound schema check (tests/conftest.py) can fail: an off-schema frame
written through any Connection is caught."""

from __future__ import annotations

from baton.connection import Connection, memory_pipe


async def test_an_off_schema_outbound_frame_is_caught(outbound_schema_check: list[str]) -> None:
    _to_agent_r, to_agent_w = memory_pipe()
    to_client_r, _to_client_w = memory_pipe()
    conn = Connection(to_client_r, to_agent_w)
    conn.start()
    await conn.notify("session/cancel", {})  # no sessionId
    await conn.notify("session/cancel", {"sessionId": "s"})
    await conn.close()
    assert len(outbound_schema_check) == 1
    assert "sessionId" in outbound_schema_check[0]
    outbound_schema_check.clear()  # caught as expected: the teardown check passes
