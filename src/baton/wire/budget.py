"""The turn budget: an idle bound that resets on every inbound frame and an absolute bound that
never resets. The shorter remaining bound always wins.

A value object with no clock of its own: every method takes ``now`` (seconds on a monotonic
clock the caller owns, the event loop's in practice).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final, Literal

from baton.errors import BoundName, BudgetExpired, ConfigurationError, TurnBoundInvalid

#: Floor for every bound, in seconds. A zero or negative value is clamped up to this so it can
#: never produce a deadline already in the past (and a confusing immediate timeout).
MIN_BOUND_SECONDS = 0.05

#: The fixed limit for a control request (initialize, session/new, set_mode, ...) made outside
#: a prepared turn. session/prompt never gets it: a healthy turn may run for hours.
DEFAULT_REQUEST_LIMIT_SECONDS = 30.0


#: The idle bound a turn gets when nothing configures one (seconds). The idle bound restarts
#: on every frame the agent sends, and real long tool runs keep sending: adapters stream
#: tool_call_update and usage notifications while a build or a test suite runs, and the
#: qualified adapters never went more than a few minutes silent in a healthy turn. Ten silent
#: minutes means a hung agent, not a busy one; a turn that really needs longer silence sets
#: its own bound or turns it off. Without a default a silent agent would hold Baton forever.
DEFAULT_IDLE_TIMEOUT_SECONDS: Final = 600.0

#: The spelling that turns a bound off where one is configured (`--idle-timeout off`, a config
#: file's ``idle_timeout = "off"``, ``RunRequest(budget=TurnBudget(idle="off"))``).
BOUND_OFF: Final = "off"

#: A configured bound: positive seconds, ``"off"``, or None when this place configures none.
BoundSetting = float | Literal["off"] | None


def parse_bound_setting(value: object, where: str) -> float | Literal["off"]:
    """``value`` as a bound setting: a positive, finite number of seconds (an int or a float,
    not a bool) or the string ``off`` (any case). ``where`` names the setting in the error."""
    if isinstance(value, str) and value.strip().lower() == BOUND_OFF:
        return BOUND_OFF
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TurnBoundInvalid(
            f"{where} must be a positive number of seconds or {BOUND_OFF!r}, got {value!r}"[:200]
        )
    seconds = float(value)
    if not (seconds > 0 and math.isfinite(seconds)):
        raise TurnBoundInvalid(
            f"{where} must be a positive, finite number of seconds or {BOUND_OFF!r}, got {value!r}"
        )
    return seconds


@dataclass(frozen=True, slots=True)
class ResolvedBound:
    """The bound a turn gets and where it came from (``run``, ``profile``, ``config`` or
    ``default``); ``seconds`` is None when the bound is off."""

    seconds: float | None
    source: str


def resolve_idle_bound(*settings: tuple[str, BoundSetting]) -> ResolvedBound:
    """The idle bound of a turn: the first of ``settings`` (``(source, setting)`` pairs, most
    specific first) that configures one, else :data:`DEFAULT_IDLE_TIMEOUT_SECONDS`. ``off``
    configured anywhere before a number turns the bound off."""
    for source, setting in settings:
        if setting is None:
            continue
        value = parse_bound_setting(setting, f"the {source} idle bound")
        return ResolvedBound(None if value == BOUND_OFF else float(value), source)
    return ResolvedBound(DEFAULT_IDLE_TIMEOUT_SECONDS, "default")


def _clamp(value: float | None) -> float | None:
    if value is None:
        return None
    if value != value:  # NaN
        raise ConfigurationError("a time bound cannot be NaN")
    return max(float(value), MIN_BOUND_SECONDS)


@dataclass(frozen=True, slots=True)
class TurnBudget:
    """Limits for one turn: the idle bound (restarts on every inbound frame) and the absolute
    bound, in seconds; ``None`` sets no bound.

    As a run's budget (``RunRequest(budget=TurnBudget(...))``) an ``idle`` of None leaves the
    idle bound to the profile, the config file, else Baton's default (600 s), and
    ``idle="off"`` turns it off even where one is configured (``--idle-timeout off``). A
    running clock's budget is resolved: its ``idle`` is seconds or None."""

    idle: float | Literal["off"] | None = None
    absolute: float | None = None

    def __post_init__(self) -> None:
        idle = self.idle
        if isinstance(idle, str):
            idle = parse_bound_setting(idle, "the idle bound")  # "off", or TURN_BOUND_INVALID
        object.__setattr__(self, "idle", idle if idle == BOUND_OFF else _clamp(idle))
        object.__setattr__(self, "absolute", _clamp(self.absolute))

    @property
    def idle_seconds(self) -> float | None:
        """The idle bound in seconds (None: none, or ``off``)."""
        return None if self.idle == BOUND_OFF else self.idle

    def start(self, now: float) -> BudgetClock:
        """Begin measuring this budget at ``now``."""
        return BudgetClock(self, started_at=now, last_activity=now)


class BudgetClock:
    """A running budget. Share one clock between setup (initialize, session/new) and the prompt
    of a prepared turn, so startup cannot be an unbounded phase of its own."""

    __slots__ = ("budget", "last_activity", "started_at")

    def __init__(self, budget: TurnBudget, started_at: float, last_activity: float) -> None:
        self.budget = budget
        self.started_at = started_at
        self.last_activity = last_activity

    def touch(self, now: float) -> None:
        """An inbound frame arrived at ``now``: the idle bound starts again."""
        if now > self.last_activity:
            self.last_activity = now

    def remaining(self, now: float) -> tuple[float, BoundName] | None:
        """Seconds left and which bound is nearer, or None when no bound is set."""
        best: tuple[float, BoundName] | None = None
        idle = self.budget.idle_seconds
        if idle is not None:
            best = (self.last_activity + idle - now, "idle")
        if self.budget.absolute is not None:
            left = self.started_at + self.budget.absolute - now
            if best is None or left < best[0]:
                best = (left, "absolute")
        return best

    def expired(self, now: float, what: str = "") -> BudgetExpired | None:
        """The error to raise if a bound has elapsed at ``now``, else None."""
        left = self.remaining(now)
        if left is None or left[0] > 0:
            return None
        bound = left[1]
        if bound == "idle":
            limit = self.budget.idle_seconds or 0.0
            elapsed = now - self.last_activity
        else:
            limit = self.budget.absolute or 0.0
            elapsed = now - self.started_at
        return BudgetExpired(bound, limit, elapsed, what)
