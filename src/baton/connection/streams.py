"""The two byte-stream shapes a connection needs, and an in-memory pipe that has them.

``asyncio.StreamReader`` and ``asyncio.StreamWriter`` (a subprocess's stdout and stdin) satisfy
these protocols; :func:`memory_pipe` gives tests the same surface with real backpressure.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Protocol

from baton.errors import TransportClosed


class ByteReader(Protocol):
    """Something to read bytes from. ``read`` returns ``b""`` at end of stream.

    Cancelling ``read`` must lose no bytes (asyncio.StreamReader guarantees this).
    """

    async def read(self, n: int = -1) -> bytes: ...


class ByteWriter(Protocol):
    """Something to write bytes to, with backpressure through ``drain``."""

    def write(self, data: bytes) -> None: ...

    async def drain(self) -> None: ...

    def close(self) -> None: ...

    def is_closing(self) -> bool: ...


#: Bytes a memory pipe buffers before ``drain`` blocks the writer (its backpressure point).
MEMORY_PIPE_HIGH_WATER = 256 * 1024


class _PipeState:
    def __init__(self, high_water: int) -> None:
        self.chunks: deque[bytes] = deque()
        self.size = 0
        self.closed = False
        self.high_water = high_water
        self.readable = asyncio.Event()
        self.writable = asyncio.Event()
        self.writable.set()


class MemoryReader:
    """The read end of :func:`memory_pipe`."""

    def __init__(self, state: _PipeState) -> None:
        self._state = state

    async def read(self, n: int = -1) -> bytes:
        """Return up to ``n`` buffered bytes, waiting for some; ``b""`` once closed and empty."""
        state = self._state
        while not state.chunks:
            if state.closed:
                return b""
            state.readable.clear()
            await state.readable.wait()
        chunk = state.chunks.popleft()
        if 0 < n < len(chunk):
            state.chunks.appendleft(chunk[n:])
            chunk = chunk[:n]
        state.size -= len(chunk)
        if state.size < state.high_water:
            state.writable.set()
        return chunk


class MemoryWriter:
    """The write end of :func:`memory_pipe`."""

    def __init__(self, state: _PipeState) -> None:
        self._state = state

    def write(self, data: bytes) -> None:
        """Buffer ``data``; raise TransportClosed after close."""
        state = self._state
        if state.closed:
            raise TransportClosed("write to a closed memory pipe")
        if data:
            state.chunks.append(bytes(data))
            state.size += len(data)
            state.readable.set()
            if state.size >= state.high_water:
                state.writable.clear()

    async def drain(self) -> None:
        """Wait until the reader has taken the buffer below the high-water mark."""
        state = self._state
        while not state.writable.is_set():
            if state.closed:
                raise TransportClosed("memory pipe closed while draining")
            await state.writable.wait()

    def close(self) -> None:
        """Close: the reader sees end of stream after the buffered bytes."""
        state = self._state
        state.closed = True
        state.readable.set()
        state.writable.set()

    def is_closing(self) -> bool:
        """True once closed."""
        return self._state.closed


def memory_pipe(high_water: int = MEMORY_PIPE_HIGH_WATER) -> tuple[MemoryReader, MemoryWriter]:
    """A one-way in-memory byte pipe with backpressure. Call inside a running event loop."""
    state = _PipeState(high_water)
    return MemoryReader(state), MemoryWriter(state)
