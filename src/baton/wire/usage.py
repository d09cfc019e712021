"""Usage as ACP reports it: the ``usage_update`` session update and the end-of-turn usage.

Stable ACP has two usage shapes, and neither is a full token breakdown:

- ``usage_update`` (stable since 1.21.0): the context window (``used`` tokens of ``size``) and,
  optionally, the cumulative session ``cost`` (``amount`` in ``currency``, an ISO 4217 code or
  another unit such as ``credits``);
- the ``usage`` object of a ``session/prompt`` answer (``Usage``, still only in the unstable
  schema; Claude Agent sends it): token counts of the turn (``totalTokens``, ``inputTokens``,
  ``outputTokens`` and the optional ``thoughtTokens``, ``cachedReadTokens``,
  ``cachedWriteTokens``).

Baton keeps what the agent sent and invents nothing: a field that is absent, ``null`` or of the
wrong type is simply not there (never zero), and a count that is not a non-negative integer is
dropped. Unknown fields (``_meta``, vendor extras) are not copied.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

#: The token counters of the end-of-turn ``Usage`` object, in the schema's spelling and order.
TURN_USAGE_FIELDS: Final = (
    "totalTokens",
    "inputTokens",
    "outputTokens",
    "thoughtTokens",
    "cachedReadTokens",
    "cachedWriteTokens",
)

#: Largest count kept (the schema's uint64): anything larger is not a token count.
MAX_COUNT: Final = 2**64 - 1

#: Characters kept of a cost's currency (agent text that is stored and shown; ISO codes are 3).
MAX_CURRENCY_CHARS: Final = 16


def _count(value: object) -> int | None:
    # bool is an int subclass: true is not a token count.
    if type(value) is not int or value < 0 or value > MAX_COUNT:
        return None
    return value


@dataclass(frozen=True, slots=True)
class Cost:
    """A cumulative session cost: ``amount`` in ``currency`` (as the agent spelled it)."""

    amount: float
    currency: str

    def to_json(self) -> dict[str, Any]:
        """``{"amount", "currency"}``, the wire spelling."""
        return {"amount": self.amount, "currency": self.currency}


def parse_cost(raw: object) -> Cost | None:
    """Read a ``Cost``; anything unreadable (missing fields, a non-finite amount) is None."""
    if not isinstance(raw, Mapping):
        return None
    amount, currency = raw.get("amount"), raw.get("currency")
    if isinstance(amount, bool) or not isinstance(amount, int | float):
        return None
    if not math.isfinite(amount) or not isinstance(currency, str) or not currency:
        return None
    return Cost(float(amount), currency[:MAX_CURRENCY_CHARS])


@dataclass(frozen=True, slots=True)
class ContextUsage:
    """One ``usage_update``: ``used`` tokens in context of a ``size``-token window, and the
    cumulative cost when the agent sent one."""

    used: int
    size: int
    cost: Cost | None = None

    def to_json(self) -> dict[str, Any]:
        """``{"used", "size"}`` plus ``cost`` when there is one (the wire spelling)."""
        view: dict[str, Any] = {"used": self.used, "size": self.size}
        if self.cost is not None:
            view["cost"] = self.cost.to_json()
        return view


def parse_usage_update(update: Mapping[str, Any]) -> ContextUsage | None:
    """Read a ``usage_update`` session update. None when ``used`` or ``size`` (both required)
    is missing or not a token count: such an update carries nothing Baton can show."""
    used, size = _count(update.get("used")), _count(update.get("size"))
    if used is None or size is None:
        return None
    return ContextUsage(used, size, parse_cost(update.get("cost")))


@dataclass(frozen=True, slots=True)
class TurnUsage:
    """The token counts of one turn's ``session/prompt`` answer, only those the agent sent
    (``counts`` maps a :data:`TURN_USAGE_FIELDS` name to its value, in that order)."""

    counts: tuple[tuple[str, int], ...]

    def get(self, name: str) -> int | None:
        """The count ``name`` (a :data:`TURN_USAGE_FIELDS` name), or None when not sent."""
        for key, value in self.counts:
            if key == name:
                return value
        return None

    def to_json(self) -> dict[str, int]:
        """The counts sent, in the wire spelling."""
        return dict(self.counts)


def parse_turn_usage(raw: object) -> TurnUsage | None:
    """Read the ``usage`` of a ``session/prompt`` answer. None when it is absent, not an object
    or holds no count Baton can read."""
    if not isinstance(raw, Mapping):
        return None
    counts = tuple(
        (name, value) for name in TURN_USAGE_FIELDS if (value := _count(raw.get(name))) is not None
    )
    return TurnUsage(counts) if counts else None
