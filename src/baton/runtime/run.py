"""A run as a handle, and the one table of the runs a runtime drives.

:meth:`Runtime.start <baton.runtime.runtime.Runtime.start>` returns a :class:`Run` as soon as
the run's row exists: its :attr:`~Run.id`, its events (:meth:`Run.events`, also an ``async
with``), a way to stop it (:meth:`Run.interrupt`: session/cancel and the interrupt deadline,
exactly as Ctrl-C in `baton run`), its result (:meth:`Run.result`), and the read-only facts a
surface shows (the lane's stderr tail, the agent's capabilities, the provider session id).

The runtime keeps every run it drives in one :class:`RunTable` (``runtime.runs``), by run id
and by provider session, from the run's creation until its result is known: surfaces look a
run up there instead of keeping their own map of what is running.

:class:`RunHandle` is the protocol a local :class:`Run` and the fleet's
:class:`~baton.fleet.queued.QueuedRun` share, so the CLI, the service and library callers
follow and stop both alike.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Callable, Iterator
from typing import TYPE_CHECKING, Any, Final, Protocol

from baton.errors import RunEventsUnavailable
from baton.runtime.lanes.lane import Lane
from baton.runtime.turns.event_stream import EventStream
from baton.runtime.turns.events import RunEvent
from baton.runtime.turns.slot import TurnSlot
from baton.wire.capabilities import AgentCapabilities

if TYPE_CHECKING:
    from baton.runtime.runtime import RunResult

__all__ = ["EVENTS_CLOSED", "EventStream", "Run", "RunHandle", "RunTable"]

#: The interrupt reason recorded when a run's event iterator is closed before its end
#: (``break``, ``aclose``, a cancelled consumer): the run is interrupted, never abandoned.
EVENTS_CLOSED: Final = "events_closed"


class RunHandle(Protocol):
    """What a caller holds of a run, local (:class:`Run`) or queued on a fleet
    (:class:`~baton.fleet.queued.QueuedRun`)."""

    @property
    def id(self) -> str:
        """The run's id (its row in the store)."""
        ...

    def events(self) -> EventStream:
        """The run's events in order; the last is ``result`` (also an ``async with``).
        Closing a local run's stream early interrupts the run as :meth:`interrupt` does; a
        queued run's only stops reading (its reader may be anywhere)."""
        ...

    async def interrupt(self, reason: str = "user") -> bool:
        """Ask the run to stop; False when it can no longer be stopped from here (it ended,
        or, for a queued run, a worker already started it). Returns without waiting for the
        outcome: :meth:`result` has it."""
        ...

    async def result(self) -> RunResult:
        """Wait for the run's end; its result. Cancelling the wait leaves the run going."""
        ...


class Run:
    """A run this runtime drives (see the module docstring). Built by the runtime only."""

    def __init__(
        self,
        run_id: str,
        *,
        lane: Lane,
        on_event: Callable[[RunEvent], None] | None,
        workspace: dict[str, Any] | None = None,
    ) -> None:
        self._id = run_id
        self._lane = lane
        self._workspace = workspace
        self._on_event = on_event
        self._slot = TurnSlot()
        #: Unread events for :meth:`events` (None with an ``on_event`` callback: each event
        #: went there, and nothing is held). Unbounded on purpose: the turn never waits for a
        #: slow reader; its events are already coalesced by the streaming buffer.
        self._unread: asyncio.Queue[RunEvent | None] | None = (
            asyncio.Queue() if on_event is None else None
        )
        self._reading = False
        self._task: asyncio.Task[RunResult] | None = None
        #: The run is still in its setup (no turn yet): an interrupt cancels the setup step.
        self._in_setup = True
        #: The run's task has begun (a task cancelled before its first step never runs its
        #: handlers: before it begins, a stop is only noted, and the task checks it first).
        self._begun = False
        #: The handle cancelled the run's task (an interrupt during setup, or abandon): the
        #: task turns that cancellation into the run's result instead of raising it.
        self._cancelled_by_handle = False

    # --- read-only facts ---------------------------------------------------------------

    @property
    def id(self) -> str:
        """The run's id (its row in the store)."""
        return self._id

    @property
    def done(self) -> bool:
        """Whether the run's result is known."""
        return self._task is not None and self._task.done()

    @property
    def provider_session_id(self) -> str | None:
        """The agent's session id of the run's turn (None before its turn started)."""
        session = self._slot.session
        return session.provider_id if session is not None else None

    @property
    def capabilities(self) -> AgentCapabilities | None:
        """What the run's agent advertised at initialize (None while its process is not
        running)."""
        client = self._lane.client
        return client.capabilities if client is not None else None

    @property
    def workspace(self) -> dict[str, Any] | None:
        """The run's workspace (``name``, ``kind``, ``path``, ``branch``, ``baseCommit``,
        ``compared``; docs/workspaces.md), known when the handle is returned; None when the
        run works in a plain directory (``workspace="none"``)."""
        return self._workspace

    @property
    def workspace_changes(self) -> dict[str, Any] | None:
        """What the turn really changed in its compared workspace (the ``workspace_changes``
        event's object: counts, files, unreported paths), once the run has ended; None before
        that, without a compared workspace, or when the run ended by an error."""
        task = self._task
        if task is None or not task.done() or task.cancelled() or task.exception() is not None:
            return None
        return task.result().workspace_changes

    def stderr_tail(self) -> str:
        """The redacted, bounded tail of the stderr of the run's agent process (shared by
        every run of its lane)."""
        return self._lane.stderr_tail()

    # --- following -----------------------------------------------------------------------

    def events(self) -> EventStream:
        """The run's events from its start, in order; the last is ``result``. An error that
        ended the run is raised from the iterator after the events it reported.

        One reader at a time: a second open stream, or a run started with an ``on_event``
        callback, raises :class:`~baton.errors.RunEventsUnavailable`.

        Cancellation: closing the stream before its end (``break``, ``aclose``, leaving its
        ``async with``, cancelling the reader) interrupts the run as :meth:`interrupt` does,
        with the reason ``events_closed``, and waits for it to settle: INTERRUPTED when the
        agent answers ``cancelled`` within the interrupt deadline, RECOVERY_REQUIRED only
        when the outcome really is unknown. A reader cancelled again while it waits stops
        waiting; the run still settles."""
        if self._unread is None:
            raise RunEventsUnavailable(
                f"run {self._id}'s events go to its on_event callback; there is no stream"
            )
        if self._reading:
            raise RunEventsUnavailable(f"run {self._id}'s events are already being read")
        self._reading = True
        return EventStream(self._follow(self._unread))

    async def _follow(self, unread: asyncio.Queue[RunEvent | None]) -> AsyncGenerator[RunEvent]:
        ended = False
        try:
            while True:
                event = await unread.get()
                if event is None:
                    break
                yield event
            ended = True
            if self._task is not None:
                self._task.result()  # the error that ended the run, if any
        finally:
            self._reading = False
            task = self._task
            if not ended and task is not None and not task.done():
                self.interrupt_nowait(EVENTS_CLOSED)
                await asyncio.wait({task})

    async def result(self) -> RunResult:
        """Wait for the run's end; its result (or the error that ended it).

        Cancellation: cancelling the wait leaves the run going (:meth:`interrupt` stops it)."""
        assert self._task is not None
        return await asyncio.shield(self._task)

    async def result_or_abandon(self) -> RunResult:
        """:meth:`result`, for a caller that owns the run (``Runtime.run``, a conversation's
        prompt): cancelling the wait abandons the run (see :meth:`abandon`), then the
        cancellation propagates."""
        try:
            return await self.result()
        except asyncio.CancelledError:
            with contextlib.suppress(asyncio.CancelledError):
                await self.abandon()
            raise

    # --- stopping ----------------------------------------------------------------------

    async def interrupt(self, reason: str = "user") -> bool:
        """Ask the run to stop (see :meth:`interrupt_nowait`). Not a wait: it returns at once."""
        return self.interrupt_nowait(reason)

    def interrupt_nowait(self, reason: str = "user") -> bool:
        """Ask the run to stop, from synchronous code (a signal handler, an event callback).

        During setup (nothing prompted yet) the setup step is cancelled: the run ends
        INTERRUPTED and no prompt is sent. While the prompt is outstanding, Baton sends
        session/cancel, answers pending permission requests cancelled and starts the interrupt
        deadline: a ``cancelled`` answer in time makes the run INTERRUPTED; none in time makes
        it RECOVERY_REQUIRED and quarantines the lane. The first reason is the one recorded.
        False when the run's turn already ended."""
        if self.done:
            return False
        if self._in_setup:
            self._stop_setup(reason)
            return True
        return self._slot.interrupt(reason)

    async def abandon(self) -> None:
        """Stop waiting for the agent, without session/cancel (the second Ctrl-C): during
        setup the run ends INTERRUPTED; with the prompt outstanding it is recorded
        RECOVERY_REQUIRED (``CALLER_CANCELLED``: the prompt may still run) and its session
        released; the lane stays usable. Waits until that is recorded.

        Cancellation: a cancelled caller stops waiting; the recording still finishes."""
        task = self._task
        if task is None or task.done():
            return
        if self._in_setup:
            self._stop_setup("caller")
        elif self._slot.running:
            self._cancel_task()
        await asyncio.wait({task})

    def _stop_setup(self, reason: str) -> None:
        """Stop the run during its setup: noted (and the task checks it first and after the
        setup) before the task begins or from inside it, else the setup step is cancelled."""
        self._slot.interrupt(reason)
        # From inside the run's own task (an on_event callback), a cancel could land after
        # the setup's last await, in the turn: the task checks the reason once setup ends.
        if self._begun and asyncio.current_task() is not self._task:
            self._cancel_task()

    def _cancel_task(self) -> None:
        if self._task is not None and not self._task.done():
            self._cancelled_by_handle = True
            self._task.cancel()

    # --- the runtime's side --------------------------------------------------------------

    def publish(self, event: RunEvent) -> None:
        """Hand one (redacted) event of the run to its reader; an event made before the run
        existed (a lane warning) is stamped with the run's id."""
        if not event.run_id:
            event = RunEvent(event.type, self._id, event.data)
        if self._on_event is not None:
            self._on_event(event)
        if self._unread is not None:
            self._unread.put_nowait(event)

    def drive(self, task: asyncio.Task[RunResult]) -> None:
        """The task that runs this run to its result (set once, by the runtime)."""
        self._task = task
        if self._unread is not None:
            unread = self._unread
            task.add_done_callback(lambda _t: unread.put_nowait(None))

    @property
    def slot(self) -> TurnSlot:
        """Where the run's turn is reachable while it runs (the runtime's side)."""
        return self._slot

    def begin(self) -> None:
        """The run's task has begun (its first step, before any await)."""
        self._begun = True

    def setup_ended(self) -> None:
        """The session is set up: an interrupt now reaches the turn (never the setup)."""
        self._in_setup = False

    def take_handle_cancel(self) -> bool:
        """Whether the cancellation the run's task is handling came from this handle (an
        interrupt during setup, or :meth:`abandon`); if so it is consumed (the task's
        cancellation count is lowered) so the task can end with the run's result."""
        if not self._cancelled_by_handle:
            return False
        self._cancelled_by_handle = False
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()
        return True


class RunTable:
    """The runs a runtime drives, from creation until their result is known."""

    def __init__(self) -> None:
        self._runs: dict[str, Run] = {}

    def add(self, run: Run) -> None:
        """Track ``run`` (it leaves the table when its task ends)."""
        self._runs[run.id] = run
        assert run._task is not None
        run._task.add_done_callback(lambda _t: self._runs.pop(run.id, None))

    def get(self, run_id: str) -> Run | None:
        """The running run ``run_id`` (None: it ended, or this runtime never drove it)."""
        return self._runs.get(run_id)

    def by_provider_session(self, provider_session_id: str) -> Run | None:
        """The running run whose turn uses the agent's session ``provider_session_id``."""
        for run in self._runs.values():
            if run.provider_session_id == provider_session_id:
                return run
        return None

    def on_lane(self, lane: Lane) -> list[Run]:
        """The running runs of ``lane``."""
        return [run for run in self._runs.values() if run._lane is lane]

    def __iter__(self) -> Iterator[Run]:
        return iter(list(self._runs.values()))

    def __len__(self) -> int:
        return len(self._runs)

    def __contains__(self, run_id: object) -> bool:
        return run_id in self._runs
