"""The real steering answers (issue 29), replayed: claude-agent-acp 0.101.0 and codex-acp 2.6.0
answered ``_session/steering`` ``injected`` to a turn the qualification mock held open
(tests/qualification/test_steering.py, ``make qualify`` with ``BATON_QUALIFY_RECORD=1``).
Baton's request must still be exactly what the adapters were sent, and their answer, replayed
over a connection, must read as the outcome it was."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, Final

import orjson
import pytest

from baton.connection import Connection, memory_pipe
from baton.connection.streams import MemoryReader, MemoryWriter
from baton.wire.extensions import steering
from baton.wire.framing import FrameDecoder

FIXTURES: Final = Path(__file__).parents[1] / "fixtures" / "adapters"
#: The adapters whose steering answer was captured.
CAPTURED: Final = ("claude-agent-acp-0.101.0", "codex-acp-2.6.0")


def _load(adapter: str) -> tuple[dict[str, Any], dict[str, Any]]:
    lines = (FIXTURES / adapter / "steering.jsonl").read_text().splitlines()
    frames = [json.loads(line) for line in lines]
    assert [f["direction"] for f in frames] == ["outbound", "inbound"]
    return frames[0]["message"], frames[1]["message"]


async def _answer_once(
    reader: MemoryReader, writer: MemoryWriter, answer: dict[str, Any], got: list[Any]
) -> None:
    decoder = FrameDecoder(1024 * 1024)
    while chunk := await reader.read(65536):
        for line in decoder.feed(chunk):
            if line:
                request = orjson.loads(line)
                got.append(request)
                writer.write(orjson.dumps({**answer, "id": request["id"]}) + b"\n")


@pytest.mark.parametrize("adapter", CAPTURED)
async def test_the_captured_answer_replays_as_its_outcome(adapter: str) -> None:
    request, answer = _load(adapter)
    params = request["params"]
    text = params["prompt"][0]["text"]
    # What Baton sends today is what the adapter was sent.
    assert steering.steer_params(params["sessionId"], text) == params
    to_agent_r, to_agent_w = memory_pipe()
    to_client_r, to_client_w = memory_pipe()
    conn: Connection[None] = Connection(to_client_r, to_agent_w)
    conn.on_any_notification(lambda message, ref: None)
    conn.start()
    got: list[Any] = []
    agent = asyncio.create_task(_answer_once(to_agent_r, to_client_w, answer, got))
    try:
        result = await asyncio.wait_for(conn.request(steering.METHOD, params), 10)
    finally:
        await conn.close()
        to_client_w.close()
        agent.cancel()
    assert [m["method"] for m in got] == [steering.METHOD]
    parsed = steering.parse_steer_result(result)
    assert parsed.outcome == answer["result"]["outcome"] == steering.INJECTED
    assert parsed.known and parsed.reason is None
