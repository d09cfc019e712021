"""A run's events as an async iterator: :class:`EventStream`, the object a run handle's
``events()`` returns (local runs, a session's turns and queued runs alike)."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from types import TracebackType

from baton.runtime.turns.events import RunEvent


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
