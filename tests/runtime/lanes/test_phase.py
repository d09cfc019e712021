"""The lane phase table: every allowed move and every refused one, enforced in one place."""

from __future__ import annotations

import pytest

from baton.errors import InternalError
from baton.runtime.lanes.phase import TRANSITIONS, LanePhase, LanePhases


def _at(phase: LanePhase) -> LanePhases:
    """A LanePhases moved to ``phase`` along allowed moves."""
    path = {
        LanePhase.IDLE: [],
        LanePhase.STARTING: [LanePhase.STARTING],
        LanePhase.RUNNING: [LanePhase.STARTING, LanePhase.RUNNING],
        LanePhase.STOPPING: [LanePhase.STARTING, LanePhase.RUNNING, LanePhase.STOPPING],
        LanePhase.FENCED: [LanePhase.STARTING, LanePhase.STOPPING, LanePhase.FENCED],
    }[phase]
    phases = LanePhases()
    for step in path:
        phases.move(step, fence="test" if step is LanePhase.FENCED else None)
    assert phases.phase is phase
    return phases


@pytest.mark.parametrize("start", list(LanePhase))
@pytest.mark.parametrize("to", list(LanePhase))
def test_moves_follow_the_table(start: LanePhase, to: LanePhase) -> None:
    phases = _at(start)
    fence = "why" if to is LanePhase.FENCED else None
    if to in TRANSITIONS[start]:
        phases.move(to, fence=fence)
        assert phases.phase is to
        assert phases.fence == fence
    else:
        with pytest.raises(InternalError):
            phases.move(to, fence=fence)
        assert phases.phase is start


def test_a_lane_begins_idle_and_fenced_is_terminal() -> None:
    assert LanePhases().phase is LanePhase.IDLE
    assert TRANSITIONS[LanePhase.FENCED] == frozenset()


def test_a_fence_needs_a_reason_and_only_a_fence_has_one() -> None:
    phases = _at(LanePhase.STOPPING)
    with pytest.raises(InternalError):
        phases.move(LanePhase.FENCED)
    with pytest.raises(InternalError):
        phases.move(LanePhase.IDLE, fence="no")
    assert phases.phase is LanePhase.STOPPING
