"""The turn's transition table: what it allows, what it refuses, and that it is enforced."""

from __future__ import annotations

import pytest

from baton.errors import InternalError
from baton.runtime.turns.phase import (
    LOSABLE_PHASES,
    REFUSING_PHASES,
    TURN_TRANSITIONS,
    TurnPhase,
    TurnPhaseInvalid,
    TurnPhases,
)


def test_every_phase_has_a_row_and_finished_is_final() -> None:
    assert set(TURN_TRANSITIONS) == set(TurnPhase)
    assert TURN_TRANSITIONS[TurnPhase.FINISHED] == frozenset()


def test_every_phase_reaches_finished() -> None:
    for start in TurnPhase:
        seen = {start}
        frontier = [start]
        while frontier:
            for nxt in TURN_TRANSITIONS[frontier.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    frontier.append(nxt)
        assert TurnPhase.FINISHED in seen, start


def test_the_table_has_no_cycle() -> None:
    # Bounded history: a turn enters each phase at most once.
    order = list(TurnPhase)
    for phase, targets in TURN_TRANSITIONS.items():
        assert all(order.index(t) > order.index(phase) for t in targets), phase


@pytest.mark.parametrize(
    ("path", "bad"),
    [
        ([TurnPhase.SUBMITTING, TurnPhase.STREAMING], TurnPhase.SUBMITTING),
        ([], TurnPhase.STREAMING),
        ([TurnPhase.SUBMITTING, TurnPhase.FINISHING, TurnPhase.FINISHED], TurnPhase.LOST),
        ([TurnPhase.LOST], TurnPhase.CANCELLING),
    ],
)
def test_a_change_the_table_does_not_list_is_a_bug(path: list[TurnPhase], bad: TurnPhase) -> None:
    phases = TurnPhases()
    for phase in path:
        phases.enter(phase)
    with pytest.raises(TurnPhaseInvalid) as raised:
        phases.enter(bad)
    assert isinstance(raised.value, InternalError)
    assert raised.value.code == "TURN_PHASE_INVALID"
    assert phases.current is (path[-1] if path else TurnPhase.CREATED)


def test_settled_phases_are_neither_losable_nor_accepting_permissions() -> None:
    settled = {TurnPhase.FINISHING, TurnPhase.FINISHED}
    assert not settled & LOSABLE_PHASES
    assert settled <= REFUSING_PHASES
    assert TurnPhase.STREAMING not in REFUSING_PHASES
