"""Reading what a person typed, without blocking the event loop (the prompts' one reader)."""

from __future__ import annotations

import asyncio
import os


async def read_available(fd: int, limit: int) -> bytes:
    """At most ``limit`` bytes from ``fd`` once it is readable; ``b""`` at end of input.

    A terminal or pipe is polled by the event loop (no thread, the turn keeps streaming); a
    regular file cannot be polled, and reading it never blocks for long, so it is read in a
    worker thread. Cancellation-safe: a cancel while waiting reads nothing and removes the
    reader."""
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()

    def on_readable() -> None:
        if not ready.done():
            ready.set_result(None)

    try:
        loop.add_reader(fd, on_readable)
    except (OSError, NotImplementedError, ValueError):
        return await asyncio.to_thread(os.read, fd, limit)
    try:
        await ready
    finally:
        loop.remove_reader(fd)
    return os.read(fd, limit)
