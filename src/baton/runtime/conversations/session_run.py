"""A conversation's turn as a run handle: :class:`SessionRun`, what
:meth:`Conversations.start <baton.runtime.conversations.service.Conversations.start>`
returns as soon as the turn's run exists.

It is a :class:`~baton.runtime.run.RunHandle` like a local :class:`~baton.runtime.run.Run`
or a fleet's queued run: its :attr:`~SessionRun.id` at once, its events, its interrupt, its
result, and the same read-only facts. What it adds is the conversation's side of the turn:
the turn holds the session's queue and its claim in the store until the conversation's record
is released (IDLE, or RECOVERY_REQUIRED with its run), and :meth:`SessionRun.result` returns
only after that, so a caller that reads the session after the result sees it settled.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

from baton.runtime.run import Run
from baton.runtime.turns.event_stream import EventStream
from baton.runtime.turns.events import RunEvent
from baton.wire.capabilities import AgentCapabilities

if TYPE_CHECKING:
    from baton.runtime.runtime import RunResult

__all__ = ["SessionRun"]


class SessionRun:
    """The run of one conversation turn (see the module docstring). Built by
    :class:`~baton.runtime.conversations.service.Conversations` only."""

    def __init__(self, session: str, run: Run, turn: asyncio.Task[RunResult]) -> None:
        self._session = session
        self._run = run
        #: The turn: the run's result, then the conversation's record released.
        self._turn = turn

    # --- read-only facts ---------------------------------------------------------------

    @property
    def id(self) -> str:
        """The run's id (its row in the store)."""
        return self._run.id

    @property
    def session(self) -> str:
        """The name of the conversation this turn belongs to."""
        return self._session

    @property
    def done(self) -> bool:
        """Whether the turn has ended (its result known, the conversation released)."""
        return self._turn.done()

    @property
    def provider_session_id(self) -> str | None:
        """The agent's session id of the turn (None before its turn started)."""
        return self._run.provider_session_id

    @property
    def capabilities(self) -> AgentCapabilities | None:
        """What the turn's agent advertised (None while its process is not running)."""
        return self._run.capabilities

    @property
    def workspace(self) -> dict[str, Any] | None:
        """The turn's workspace (see :attr:`Run.workspace <baton.runtime.run.Run.workspace>`)."""
        return self._run.workspace

    @property
    def workspace_changes(self) -> dict[str, Any] | None:
        """What the turn changed in its compared workspace, once it ended (see
        :attr:`Run.workspace_changes <baton.runtime.run.Run.workspace_changes>`)."""
        return self._run.workspace_changes

    def stderr_tail(self) -> str:
        """The redacted, bounded tail of the agent process's stderr."""
        return self._run.stderr_tail()

    # --- following -----------------------------------------------------------------------

    def events(self) -> EventStream:
        """The turn's events from its start, in order; the last is ``result``. The stream
        ends once the conversation's record is released too.

        One reader at a time, and none when the turn was started with an ``on_event``
        callback (:class:`~baton.errors.RunEventsUnavailable`).

        Cancellation: closing the stream before its end interrupts the turn exactly as
        closing :meth:`Run.events <baton.runtime.run.Run.events>` does (reason
        ``events_closed``: INTERRUPTED when the agent answers ``cancelled`` within the
        interrupt deadline, RECOVERY_REQUIRED only when the outcome is unknown) and waits for
        the turn to settle; a reader cancelled again while it waits stops waiting."""
        return EventStream(self._follow(self._run.events()))

    async def _follow(self, inner: EventStream) -> AsyncGenerator[RunEvent]:
        try:
            async with inner:
                async for event in inner:
                    yield event
        finally:
            # The run has settled (or the stream's close interrupted it and waited): the
            # conversation's release follows in the turn's task.
            await asyncio.wait({self._turn})
        self._turn.result()  # the error that ended the turn, if any

    async def result(self) -> RunResult:
        """Wait for the turn's end; its result, once the conversation's record is released.

        Cancellation: cancelling the wait leaves the turn going (:meth:`interrupt` stops
        it)."""
        return await asyncio.shield(self._turn)

    async def result_or_abandon(self) -> RunResult:
        """:meth:`result`, for a caller that owns the turn (``Conversations.prompt``):
        cancelling the wait abandons the run (:meth:`Run.abandon
        <baton.runtime.run.Run.abandon>`: RECOVERY_REQUIRED when its prompt was outstanding,
        and the conversation with it), then the cancellation propagates."""
        try:
            return await self.result()
        except asyncio.CancelledError:
            with contextlib.suppress(asyncio.CancelledError):
                await self._run.abandon()
                await asyncio.wait({self._turn})
            raise

    # --- stopping ----------------------------------------------------------------------

    async def interrupt(self, reason: str = "user") -> bool:
        """Ask the turn to stop (see :meth:`Run.interrupt <baton.runtime.run.Run.interrupt>`:
        session/cancel and the interrupt deadline). Not a wait: it returns at once."""
        return self._run.interrupt_nowait(reason)

    def interrupt_nowait(self, reason: str = "user") -> bool:
        """:meth:`interrupt`, from synchronous code (a signal handler, an event callback)."""
        return self._run.interrupt_nowait(reason)

    async def abandon(self) -> None:
        """Stop waiting for the agent without session/cancel (see :meth:`Run.abandon
        <baton.runtime.run.Run.abandon>`), then wait for the conversation's release.
        Cancellation: a cancelled caller stops waiting; the recording still finishes."""
        await self._run.abandon()
        await asyncio.wait({self._turn})
