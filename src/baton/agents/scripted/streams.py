"""The agent's byte streams: a raw writer for stdout and stderr, and a reader thread for stdin.

Writes are synchronous ``os.write`` calls in slices of :data:`WRITE_SLICE_BYTES` on the file
descriptor, so the agent can emit bytes a JSON-RPC library never would (garbage, a line that
never ends, a frame of any size) and a stream flood costs a few hundred system calls. A write
blocks while the pipe is full: the client's backpressure is the agent's. Async callers yield to
the event loop between slices, so stdin (a session/cancel) is still handled during a flood.

stdin is read by a daemon thread with blocking reads, which works for pipes, terminals and
regular files alike (``python -m baton.agents.scripted < requests.jsonl``). The thread splits
lines with Baton's bounded :class:`~baton.wire.framing.FrameDecoder` and hands batches to the
event loop through a queue of at most :data:`MAX_QUEUED_INPUT_BATCHES` batches, so a client that
writes faster than the agent handles cannot grow the agent's memory without bound.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import sys
import threading
from collections.abc import Callable, Iterable
from typing import Final

import orjson

from baton.errors import FrameTooLarge
from baton.wire.framing import FrameDecoder
from baton.wire.jsonrpc import Message

#: Bytes handed to one ``os.write``. Large enough that a flood is a few hundred system calls,
#: small enough that a cancel is noticed within one slice.
WRITE_SLICE_BYTES: Final = 512 * 1024

#: Bytes asked of stdin per read.
READ_CHUNK_BYTES: Final = 256 * 1024

#: Input batches queued for the event loop before the reader thread waits: the bound on memory
#: held for unhandled client input is this many reads of :data:`READ_CHUNK_BYTES` (plus one
#: partial frame in the decoder).
MAX_QUEUED_INPUT_BATCHES: Final = 64


class OutputClosed(Exception):
    """The reader of the agent's stdout went away."""


class RawWriter:
    """Writes bytes to a file descriptor in large slices, exactly as given.

    After :meth:`freeze` every write is silently dropped: the agent looks hung. When the reader
    goes away, ``on_closed`` is called once and :class:`OutputClosed` is raised.
    """

    def __init__(self, fd: int, on_closed: Callable[[], None] | None = None) -> None:
        self._fd = fd
        #: Called once when the reader goes away.
        self.on_closed = on_closed
        self.closed = False
        self.frozen = False
        self.bytes_written = 0
        #: A dialect's rewrite of every message sent (the v2 surface), or None (v1 as built).
        self.translate: Callable[[Message], list[Message]] | None = None

    def freeze(self) -> None:
        """Drop every later write."""
        self.frozen = True

    def write(self, data: bytes) -> None:
        """Write all of ``data``, blocking while the pipe is full."""
        if self.frozen:
            return
        if self.closed:
            raise OutputClosed("output already closed")
        view = memoryview(data)
        fd = self._fd
        while view:
            try:
                written = os.write(fd, view[:WRITE_SLICE_BYTES])
            except BlockingIOError:
                # A descriptor shared with a non-blocking stdin (one terminal for both).
                select.select([], [fd], [])
                continue
            except OSError as exc:
                self._close()
                raise OutputClosed(f"writing failed: {type(exc).__name__}") from exc
            view = view[written:]
            self.bytes_written += written

    def write_if_ready(self, data: bytes, timeout: float) -> int:
        """Write at most :data:`select.PIPE_BUF` bytes of ``data`` if the descriptor becomes
        writable within ``timeout`` seconds; return the bytes written (0 if it did not).

        A pipe with room for PIPE_BUF bytes takes them without blocking, so a caller looping on
        this keeps control even when the reader has stopped reading.
        """
        if self.frozen:
            return 0
        if self.closed:
            raise OutputClosed("output already closed")
        try:
            _readable, writable, _failed = select.select([], [self._fd], [], timeout)
            if not writable:
                return 0
            written = os.write(self._fd, data[: select.PIPE_BUF])
        except BlockingIOError:
            return 0
        except OSError as exc:
            self._close()
            raise OutputClosed(f"writing failed: {type(exc).__name__}") from exc
        self.bytes_written += written
        return written

    def send(self, message: Message) -> None:
        """Write one JSON-RPC message as a frame (through the dialect, when one is set)."""
        if self.translate is not None:
            for translated in self.translate(message):
                self.send_raw(translated)
            return
        self.write(orjson.dumps(message, option=orjson.OPT_APPEND_NEWLINE))

    def send_raw(self, message: Message) -> None:
        """Write one message exactly as given (a frame the dialect built itself)."""
        self.write(orjson.dumps(message, option=orjson.OPT_APPEND_NEWLINE))

    async def write_all(self, chunks: Iterable[bytes]) -> None:
        """Write chunks one after another, yielding to the event loop after each."""
        for chunk in chunks:
            self.write(chunk)
            await asyncio.sleep(0)

    def _close(self) -> None:
        if not self.closed:
            self.closed = True
            if self.on_closed is not None:
                self.on_closed()


class Log:
    """Diagnostics on stderr. Never raises: a closed stderr only silences the agent."""

    def __init__(self, writer: RawWriter, verbose: bool) -> None:
        self._writer = writer
        self.verbose = verbose

    def info(self, text: str) -> None:
        """Always logged."""
        with contextlib.suppress(OutputClosed):
            self._writer.write(f"scripted-agent: {text}\n".encode(errors="replace"))

    def debug(self, text: str) -> None:
        """Logged with ``--verbose`` only."""
        if self.verbose:
            self.info(text)


InputItem = list[bytes] | None


class InputPump:
    """Reads stdin on a daemon thread and queues complete lines for the event loop.

    The queue receives lists of lines, then ``None`` once at end of input (EOF, a read error, or
    an inbound frame over the cap, which ends the framing). Call :meth:`taken` after each
    ``queue.get()``: it frees a slot for the thread.
    """

    def __init__(
        self,
        fd: int,
        loop: asyncio.AbstractEventLoop,
        queue: asyncio.Queue[InputItem],
        max_frame_bytes: int,
        log: Log,
    ) -> None:
        self._fd = fd
        self._loop = loop
        self._queue = queue
        self._decoder = FrameDecoder(max_frame_bytes)
        self._slots = threading.Semaphore(MAX_QUEUED_INPUT_BATCHES)
        self._log = log

    def start(self) -> None:
        """Start the reader thread."""
        threading.Thread(target=self._run, name="scripted-agent-stdin", daemon=True).start()

    def taken(self) -> None:
        """One queued item was taken off the queue."""
        self._slots.release()

    def _post(self, item: InputItem) -> bool:
        self._slots.acquire()
        try:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, item)
        except RuntimeError:
            return False  # the loop is gone: the agent is exiting
        return True

    def _run(self) -> None:
        decoder = self._decoder
        while True:
            try:
                chunk = os.read(self._fd, READ_CHUNK_BYTES)
            except BlockingIOError:
                select.select([self._fd], [], [])
                continue
            except OSError as exc:
                self._log.info(f"reading stdin failed: {type(exc).__name__}")
                break
            if not chunk:
                tail = decoder.finish()
                if tail is not None and not self._post([tail]):
                    return
                break
            try:
                lines = decoder.feed(chunk)
            except FrameTooLarge as exc:
                self._log.info(f"stopped reading stdin: {exc}")
                break
            if lines and not self._post(lines):
                return
        self._post(None)


def stdout_fd() -> int:
    """The descriptor of the process's stdout."""
    return sys.stdout.buffer.fileno()


def stderr_fd() -> int:
    """The descriptor of the process's stderr."""
    return sys.stderr.buffer.fileno()


def stdin_fd() -> int:
    """The descriptor of the process's stdin."""
    return sys.stdin.buffer.fileno()
