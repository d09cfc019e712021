"""A connection wired to a scripted peer over in-memory pipes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest

from baton.connection import Connection, memory_pipe
from baton.connection.streams import MemoryReader, MemoryWriter
from baton.wire.framing import FrameDecoder


class Peer:
    """The agent side of the pipe: writes raw bytes, reads what Baton sent."""

    def __init__(self, reader: MemoryReader, writer: MemoryWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.decoder = FrameDecoder(64 * 1024 * 1024)
        self.pending: list[bytes] = []

    def send(self, message: dict[str, Any]) -> None:
        self.writer.write(orjson.dumps(message) + b"\n")

    def send_raw(self, data: bytes) -> None:
        self.writer.write(data)

    async def recv(self) -> dict[str, Any]:
        while not self.pending:
            chunk = await self.reader.read(65536)
            assert chunk, "Baton closed its side"
            self.pending.extend(line for line in self.decoder.feed(chunk) if line)
        message: dict[str, Any] = orjson.loads(self.pending.pop(0))
        return message

    def close(self) -> None:
        self.writer.close()


@pytest.fixture
async def pair() -> AsyncIterator[tuple[Connection, Peer]]:
    to_agent_r, to_agent_w = memory_pipe()
    to_client_r, to_client_w = memory_pipe()
    conn = Connection(to_client_r, to_agent_w, max_frame_bytes=64 * 1024)
    conn.start()
    peer = Peer(to_agent_r, to_client_w)
    yield conn, peer
    await conn.close()
