"""One active turn per conversation inside one process: later prompts wait their turn, first
come first served, and the wait is bounded (in length and, by the caller, in time).

Across processes the store's claim (IDLE -> ACTIVE, compare-and-set) decides; this queue only
orders the prompts of one process so they do not race each other for that claim.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Final

from baton.errors import SessionBusy

#: Seconds a prompt waits, by default, for another process's turn of the same conversation
#: (and for earlier prompts of this process) before SESSION_BUSY. Long enough for a typical
#: agent turn; a caller with longer turns passes its own bound.
DEFAULT_WAIT_SECONDS: Final = 600.0

#: Prompts of one process that may wait behind a conversation's running turn. A library caller
#: that floods one conversation gets SESSION_BUSY instead of an unbounded backlog.
MAX_WAITING_PROMPTS: Final = 32


class TurnQueue:
    """Per conversation name: the turn holder and a FIFO of waiters."""

    def __init__(self, max_waiting: int = MAX_WAITING_PROMPTS) -> None:
        self.max_waiting = max_waiting
        self._busy: set[str] = set()
        self._waiting: dict[str, deque[asyncio.Future[None]]] = {}

    def busy(self, name: str) -> bool:
        """True while a turn of ``name`` holds the queue."""
        return name in self._busy

    def waiting(self, name: str) -> int:
        """How many prompts of ``name`` wait."""
        return len(self._waiting.get(name, ()))

    @asynccontextmanager
    async def turn(
        self, name: str, *, wait: bool = True, timeout: float | None = None
    ) -> AsyncIterator[None]:
        """Hold ``name``'s turn for the block. Waits behind earlier prompts in arrival order;
        :class:`SessionBusy` at once when ``wait`` is false and the turn is held, when
        :data:`MAX_WAITING_PROMPTS` already wait, or when ``timeout`` seconds pass.

        Cancellation-safe: a cancelled waiter leaves the line, and one cancelled just as the
        turn was handed to it passes the turn on, so the queue never stalls."""
        if name in self._busy:
            if not wait:
                raise SessionBusy(f"session {name} has a turn running in this process")
            await self._wait(name, timeout)
        else:
            self._busy.add(name)
        try:
            yield
        finally:
            self._hand_on(name)

    async def _wait(self, name: str, timeout: float | None) -> None:
        line = self._waiting.setdefault(name, deque())
        if len(line) >= self.max_waiting:
            raise SessionBusy(
                f"session {name}: {len(line)} prompts already wait for their turn in this process"
            )
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        line.append(future)
        try:
            async with asyncio.timeout(timeout):
                await asyncio.shield(future)
        except BaseException as exc:
            if future.done() and not future.cancelled():
                self._hand_on(name)  # handed the turn while leaving: pass it on
            else:
                future.cancel()
                self._forget(name, future)
            if isinstance(exc, TimeoutError):
                raise SessionBusy(
                    f"session {name}: still busy after waiting {timeout:g}s for its turn"
                ) from None
            raise

    def _hand_on(self, name: str) -> None:
        """The holder is done: the first waiter still waiting gets the turn, else it is free."""
        line = self._waiting.get(name)
        while line:
            future = line.popleft()
            if not future.done():
                future.set_result(None)
                return
        self._waiting.pop(name, None)
        self._busy.discard(name)

    def _forget(self, name: str, future: asyncio.Future[None]) -> None:
        line = self._waiting.get(name)
        if line is not None and future in line:
            line.remove(future)
            if not line:
                self._waiting.pop(name, None)
