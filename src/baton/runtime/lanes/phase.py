"""A lane's phase: which of its five states it is in, and the one table of moves between them.

h11's ``_state.py`` is the model: the states are an enum, the allowed moves a readable table,
and :meth:`LanePhases.move` the one place that enforces it. A move the table does not allow is
Baton's bug (:class:`~baton.errors.InternalError`, BATON_BUG), never a silent state change.

========  ================================================================================
IDLE      no child: the next session starts one (lazily)
STARTING  a child was spawned; the connection is initializing it
RUNNING   the child is initialized and serves sessions
STOPPING  the generation was invalidated (quarantine, loss, shutdown, a failed start); its
          child is being shut down and its output drained
FENCED    a stop could not prove the child gone (a failed drain, a group that survived
          SIGKILL): no replacement starts until Baton restarts. Terminal.
========  ================================================================================
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Final

from baton.errors import InternalError


class LanePhase(enum.Enum):
    """The states of a lane (see the module docstring)."""

    IDLE = "IDLE"
    STARTING = "STARTING"
    RUNNING = "RUNNING"
    STOPPING = "STOPPING"
    FENCED = "FENCED"


#: Every allowed move, from -> to. Nothing leaves FENCED.
TRANSITIONS: Final[Mapping[LanePhase, frozenset[LanePhase]]] = {
    LanePhase.IDLE: frozenset({LanePhase.STARTING}),
    # Back to IDLE only when the spawn itself failed (no child to stop).
    LanePhase.STARTING: frozenset({LanePhase.IDLE, LanePhase.RUNNING, LanePhase.STOPPING}),
    LanePhase.RUNNING: frozenset({LanePhase.STOPPING}),
    LanePhase.STOPPING: frozenset({LanePhase.IDLE, LanePhase.FENCED}),
    LanePhase.FENCED: frozenset(),
}


class LanePhases:
    """The current phase of one lane, moved only through :meth:`move`; the reason of a fence."""

    __slots__ = ("_fence", "_phase")

    def __init__(self) -> None:
        self._phase = LanePhase.IDLE
        self._fence: str | None = None

    @property
    def phase(self) -> LanePhase:
        """The current phase."""
        return self._phase

    @property
    def fence(self) -> str | None:
        """Why the lane is fenced (None unless FENCED)."""
        return self._fence

    def move(self, to: LanePhase, *, fence: str | None = None) -> None:
        """Move to ``to``; a move the table does not allow raises InternalError. ``fence`` (the
        reason) is required for FENCED and refused otherwise."""
        if to not in TRANSITIONS[self._phase]:
            raise InternalError(f"a lane cannot move from {self._phase.value} to {to.value}")
        if (to is LanePhase.FENCED) != (fence is not None):
            raise InternalError("a lane is fenced with a reason, and only fenced with one")
        self._phase = to
        self._fence = fence
