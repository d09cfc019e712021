"""A run's events as an async iterator, from any coroutine that reports them to a callback."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

from baton.runtime.turns.events import RunEvent

#: A coroutine that runs a turn and hands each event to ``on_event`` as it happens.
EventSource = Callable[[Callable[[RunEvent], None]], Awaitable[Any]]


async def iterate_events(source: EventSource) -> AsyncGenerator[RunEvent, None]:
    """Start ``source`` as a task and yield its events in order; an exception of ``source``
    is raised from the iterator after the events it reported.

    Cancellation: cancelling the consumer (or closing the iterator early) cancels the task
    and waits for it to settle, so the run's own cancellation rules apply in full. The queue
    is unbounded on purpose: the turn must never wait for a slow consumer (its events are
    already bounded by the streaming buffer's coalescing)."""
    queue: asyncio.Queue[RunEvent | None] = asyncio.Queue()
    task = asyncio.ensure_future(source(queue.put_nowait))
    task.add_done_callback(lambda _t: queue.put_nowait(None))
    try:
        while True:
            event = await queue.get()
            if event is None:
                break
            yield event
        task.result()
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
