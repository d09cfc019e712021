"""A run's events as an async iterator: :class:`EventStream`, the object a run handle's
``events()`` returns (local runs and queued ones alike), and :func:`iterate_events`, the
iterator of any coroutine that reports its events to a callback."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable
from types import TracebackType
from typing import Any

from baton.runtime.turns.events import RunEvent

#: A coroutine that runs a turn and hands each event to ``on_event`` as it happens.
EventSource = Callable[[Callable[[RunEvent], None]], Awaitable[Any]]


class EventStream:
    """A run's events, in order: an async iterator, and an async context manager that closes
    it on exit (``async with run.events() as events: async for event in events: ...``).

    Closing it before its end is what its source says (a local run is interrupted; see
    ``Run.events``). A stream left by ``break`` without ``async with`` is closed when it is
    collected (asyncio closes an abandoned async generator in a task of its own), so the
    ``async with`` form is the one that closes it at once."""

    __slots__ = ("_source",)

    def __init__(self, source: AsyncGenerator[RunEvent]) -> None:
        self._source = source

    def __aiter__(self) -> EventStream:
        return self

    async def __anext__(self) -> RunEvent:
        """The next event. Cancellation: as the source's (a local run: see ``Run.events``)."""
        return await self._source.__anext__()

    async def aclose(self) -> None:
        """Close the stream (a no-op once it ended). Cancellation: as the source's."""
        await self._source.aclose()

    async def __aenter__(self) -> EventStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()


async def iterate_events(
    source: EventSource, *, stop: Callable[[], bool] | None = None
) -> AsyncGenerator[RunEvent, None]:
    """Start ``source`` as a task and yield its events in order; an exception of ``source``
    is raised from the iterator after the events it reported.

    Cancellation: cancelling the consumer (or closing the iterator early) first calls
    ``stop`` (the run's interrupt: True when it reached a run) and waits for the task to
    settle; without ``stop``, or when it reached nothing, the task is cancelled and waited
    for, so the run's own cancellation rules apply in full. The queue is unbounded on
    purpose: the turn must never wait for a slow consumer (its events are already bounded by
    the streaming buffer's coalescing)."""
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
            if stop is None or not stop():
                task.cancel()
            with contextlib.suppress(BaseException):
                await task
