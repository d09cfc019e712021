"""Where a run's turn is reachable from outside the turn: the one slot per run.

A run's handle (``baton.runtime.run.Run``) interrupts through its :class:`TurnSlot`, and the
runtime tells it when the run's lane was quarantined. The turn itself (``Turn``) stays private
to this room: execution puts it in the slot while it runs (:meth:`TurnSlot.hold`) and takes it
out when it ends (:meth:`TurnSlot.release`). An interrupt asked before the turn exists is kept
and applied the moment it does, and the setup step checks it first (:attr:`interrupt_reason`),
so no prompt is sent for a run interrupted during its setup.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.errors import BatonError
from baton.runtime.lanes.lane import Lane, LaneSession

if TYPE_CHECKING:
    from baton.runtime.turns.outcome import TurnOutcome
    from baton.runtime.turns.turn import Turn


class TurnSlot:
    """The turn of one run while it runs, and the interrupt asked of the run."""

    __slots__ = ("_session", "_turn", "abandoned", "interrupt_reason")

    def __init__(self) -> None:
        self._turn: Turn | None = None
        self._session: LaneSession | None = None
        #: Why the run was asked to stop (``"user"``, ``"reader"``...); None: it was not.
        self.interrupt_reason: str | None = None
        #: The outcome of a turn abandoned by a cancellation (recorded before it propagated).
        self.abandoned: TurnOutcome | None = None

    def hold(self, turn: Turn) -> None:
        """``turn`` is the run's turn from now on; an interrupt asked earlier reaches it."""
        self._turn = turn
        self._session = turn.session
        if self.interrupt_reason is not None:
            turn.interrupt(self.interrupt_reason)

    def release(self) -> None:
        """The turn ended (its outcome is being recorded): nothing reaches it any more."""
        self._turn = None

    def interrupt(self, reason: str) -> bool:
        """Ask the run to stop: the running turn sends session/cancel and starts the interrupt
        deadline; before the turn exists the request is kept (see the module docstring). The
        first reason is the one recorded. False when the turn already ended."""
        if self.interrupt_reason is None:
            self.interrupt_reason = reason
        if self._turn is not None:
            self._turn.interrupt(self.interrupt_reason)
            return True
        return self._session is None

    def quarantined(self, lane: Lane, loss: BatonError) -> None:
        """``lane`` was quarantined: the turn, if it runs on it, is lost with ``loss`` (the
        first loss a turn hears is the one it keeps)."""
        if self._turn is not None and self._turn.lane is lane:
            self._turn.on_lost(loss)

    @property
    def running(self) -> bool:
        """Whether the run's turn is running now."""
        return self._turn is not None

    @property
    def session(self) -> LaneSession | None:
        """The provider session the run's turn uses (None before its turn started)."""
        return self._session
