"""The turn's state machine: its phases and the one table of allowed transitions.

A turn is built (CREATED), submits its prompt (SUBMITTING), streams while the prompt is
outstanding (STREAMING), may send session/cancel and wait for the answer within the interrupt
deadline (CANCELLING), may lose its lane generation while the prompt may have reached the
agent (LOST), and settles: FINISHING while its items are written, then FINISHED.

::

    CREATED -> SUBMITTING -> STREAMING -> CANCELLING -> FINISHING -> FINISHED
       |            |             |            |            ^
       +------------+-------------+------------+--> LOST ---+
                    +-------------+------------------------>+

:class:`TurnPhases` is the one place a phase changes; a change the table does not list is a
Baton bug (:class:`TurnPhaseInvalid`, ``TURN_PHASE_INVALID``), never a silent fix-up.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Final

from baton.errors import TurnPhaseInvalid


class TurnPhase(enum.Enum):
    """Where a turn is in its life."""

    CREATED = "created"
    SUBMITTING = "submitting"
    STREAMING = "streaming"
    CANCELLING = "cancelling"
    LOST = "lost"
    FINISHING = "finishing"
    FINISHED = "finished"


#: Every allowed change of phase, and nothing else.
TURN_TRANSITIONS: Final[Mapping[TurnPhase, frozenset[TurnPhase]]] = {
    # The lane may be lost before the prompt is sent (nothing reached the agent).
    TurnPhase.CREATED: frozenset({TurnPhase.SUBMITTING, TurnPhase.LOST}),
    # Submission fails (FINISHING with an outcome) or the prompt is outstanding.
    TurnPhase.SUBMITTING: frozenset({TurnPhase.STREAMING, TurnPhase.LOST, TurnPhase.FINISHING}),
    TurnPhase.STREAMING: frozenset({TurnPhase.CANCELLING, TurnPhase.LOST, TurnPhase.FINISHING}),
    TurnPhase.CANCELLING: frozenset({TurnPhase.LOST, TurnPhase.FINISHING}),
    TurnPhase.LOST: frozenset({TurnPhase.FINISHING}),
    TurnPhase.FINISHING: frozenset({TurnPhase.FINISHED}),
    TurnPhase.FINISHED: frozenset(),
}

#: Phases in which the turn's lane generation can still be lost (the outcome is not settled).
LOSABLE_PHASES: Final = frozenset(
    {TurnPhase.CREATED, TurnPhase.SUBMITTING, TurnPhase.STREAMING, TurnPhase.CANCELLING}
)

#: Phases in which a permission request is answered cancelled without asking anyone: the turn
#: is being cancelled, was lost, or has its outcome already.
REFUSING_PHASES: Final = frozenset(
    {TurnPhase.CANCELLING, TurnPhase.LOST, TurnPhase.FINISHING, TurnPhase.FINISHED}
)

#: Phases in which streamed updates still belong to the turn.
STREAMING_PHASES: Final = frozenset(
    {TurnPhase.CREATED, TurnPhase.SUBMITTING, TurnPhase.STREAMING, TurnPhase.CANCELLING}
)


class TurnPhases:
    """A turn's current phase; :meth:`enter` is the only way to change it."""

    __slots__ = ("_phase", "history")

    def __init__(self) -> None:
        self._phase = TurnPhase.CREATED
        #: Every phase entered, in order (starts with CREATED): what the turn went through.
        self.history: list[TurnPhase] = [TurnPhase.CREATED]

    @property
    def current(self) -> TurnPhase:
        """The phase the turn is in."""
        return self._phase

    def enter(self, phase: TurnPhase) -> None:
        """Move to ``phase``; raise :class:`TurnPhaseInvalid` if the table forbids it."""
        if phase not in TURN_TRANSITIONS[self._phase]:
            raise TurnPhaseInvalid(f"a turn cannot go from {self._phase.name} to {phase.name}")
        self._phase = phase
        self.history.append(phase)
