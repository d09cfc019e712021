"""The turn budget: which bound wins, the floor, and what expiry says."""

from __future__ import annotations

import pytest

from baton.errors import ConfigurationError
from baton.wire.budget import (
    DEFAULT_IDLE_TIMEOUT_SECONDS,
    MIN_BOUND_SECONDS,
    TurnBoundInvalid,
    TurnBudget,
    parse_bound_setting,
    resolve_idle_bound,
)


def test_no_bounds_never_expire() -> None:
    clock = TurnBudget().start(0.0)
    assert clock.remaining(1e9) is None
    assert clock.expired(1e9) is None


def test_idle_bound_resets_on_activity_and_absolute_never_does() -> None:
    clock = TurnBudget(idle=10, absolute=25).start(100.0)
    assert clock.remaining(105.0) == (5.0, "idle")
    clock.touch(108.0)
    assert clock.remaining(112.0) == (6.0, "idle")
    clock.touch(120.0)
    # Idle would allow until 130, absolute ends at 125: the shorter bound wins.
    assert clock.remaining(121.0) == (4.0, "absolute")
    expired = clock.expired(125.5, "session/prompt")
    assert expired is not None
    assert expired.bound == "absolute"
    assert expired.elapsed == pytest.approx(25.5)
    assert "absolute bound of 25s" in str(expired)


def test_an_agent_that_emits_nothing_trips_the_idle_bound() -> None:
    clock = TurnBudget(idle=2, absolute=60).start(0.0)
    expired = clock.expired(2.0)
    assert expired is not None
    assert expired.bound == "idle"
    assert expired.code == "BUDGET_EXPIRED"


def test_touch_never_moves_backwards() -> None:
    clock = TurnBudget(idle=5).start(10.0)
    clock.touch(3.0)
    assert clock.last_activity == 10.0


@pytest.mark.parametrize("value", [0, -1, -1e9, 0.0])
def test_zero_or_negative_bounds_are_clamped_to_the_floor(value: float) -> None:
    budget = TurnBudget(idle=value, absolute=value)
    assert budget.idle == MIN_BOUND_SECONDS
    assert budget.absolute == MIN_BOUND_SECONDS
    clock = budget.start(50.0)
    left = clock.remaining(50.0)
    assert left is not None
    assert left[0] > 0, "a clamped bound never yields a deadline already past"


def test_nan_is_refused() -> None:
    with pytest.raises(ConfigurationError):
        TurnBudget(idle=float("nan"))


def test_the_default_idle_bound_applies_when_nothing_configures_one() -> None:
    resolved = resolve_idle_bound(("run", None), ("profile", None), ("config", None))
    assert (resolved.seconds, resolved.source) == (DEFAULT_IDLE_TIMEOUT_SECONDS, "default")
    assert DEFAULT_IDLE_TIMEOUT_SECONDS == 600.0
    assert resolve_idle_bound().source == "default"


def test_the_most_specific_setting_wins_and_off_turns_the_bound_off() -> None:
    assert resolve_idle_bound(("run", 5), ("profile", 60.0), ("config", 900)).seconds == 5.0
    resolved = resolve_idle_bound(("run", None), ("profile", "off"), ("config", 900))
    assert (resolved.seconds, resolved.source) == (None, "profile")
    assert resolve_idle_bound(("run", "OFF"), ("config", 9)).seconds is None
    assert resolve_idle_bound(("run", None), ("config", 9)).source == "config"


@pytest.mark.parametrize("value", [0, -1, 0.0, float("inf"), float("nan"), True, "5", "", [1]])
def test_a_bound_setting_that_is_not_positive_seconds_or_off_is_refused(value: object) -> None:
    with pytest.raises(TurnBoundInvalid) as caught:
        parse_bound_setting(value, "the run idle bound")
    assert caught.value.code == "TURN_BOUND_INVALID"
    assert isinstance(caught.value, ConfigurationError)
    with pytest.raises(TurnBoundInvalid):
        resolve_idle_bound(("run", value))  # type: ignore[arg-type]


def test_the_smallest_positive_bound_is_accepted() -> None:
    assert parse_bound_setting(1e-9, "x") == 1e-9
    assert parse_bound_setting(600, "x") == 600.0


def test_a_runs_budget_spells_off_and_leaves_none_to_the_defaults() -> None:
    """As a run's budget, idle=None is "not set here" and "off" turns the bound off; a clock
    of either has no idle bound, and a bad spelling is refused with a stable code."""
    from baton.errors import ConfigurationError
    from baton.wire.budget import TurnBudget

    assert TurnBudget(idle="off").idle == "off" and TurnBudget(idle="OFF").idle == "off"
    for budget in (TurnBudget(idle="off"), TurnBudget()):
        assert budget.idle_seconds is None
        assert budget.start(0.0).remaining(1e9) is None
    assert TurnBudget(idle=5).idle_seconds == 5.0
    with pytest.raises(ConfigurationError) as caught:
        TurnBudget(idle="soon")  # type: ignore[arg-type]
    assert caught.value.code == "TURN_BOUND_INVALID"
