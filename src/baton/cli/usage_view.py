"""Usage as people read it: one compact phrase from a run's usage view (``{used, size, cost?,
turn?}``, see docs/events.md), shared by `baton run`'s summary and `baton show`. Only what the
agent sent is shown."""

from __future__ import annotations

from typing import Any, Final

from baton.cli.terminal import visible


def count_text(number: float) -> str:
    """A count as people read it: ``1,000,000`` (never ``1e+06``); a fraction keeps ``:g``."""
    if isinstance(number, float) and not number.is_integer():
        return f"{number:g}"
    return f"{int(number):,}"


def usage_text(usage: dict[str, Any] | None) -> str | None:
    """``42/200,000 tokens · $0.0123`` from a usage event, or None."""
    if not usage:
        return None
    parts = []
    used, size = usage.get("used"), usage.get("size")
    if isinstance(used, int | float):
        parts.append(
            f"{count_text(used)}/{count_text(size)} tokens"
            if isinstance(size, int | float)
            else f"{count_text(used)} tokens"
        )
    cost = usage.get("cost")
    if isinstance(cost, dict) and isinstance(cost.get("amount"), int | float):
        currency = str(cost.get("currency") or "")
        amount = float(cost["amount"])
        parts.append(
            f"${amount:.4f}" if currency in ("USD", "") else f"{amount:.4f} {visible(currency, 8)}"
        )
    turn = usage.get("turn")
    if isinstance(turn, dict) and turn:
        parts.append(turn_usage_text(turn))
    return " · ".join(parts) or None


#: The end-of-turn counters shown in the breakdown, with their short labels.
TURN_USAGE_LABELS: Final = (
    ("inputTokens", "in"),
    ("outputTokens", "out"),
    ("thoughtTokens", "thought"),
    ("cachedReadTokens", "cache read"),
    ("cachedWriteTokens", "cache write"),
)


def turn_usage_text(turn: dict[str, Any]) -> str:
    """``turn 108 tokens (84 in, 24 out)``: only the counts the agent sent."""
    breakdown = [
        f"{turn[key]:g} {label}"
        for key, label in TURN_USAGE_LABELS
        if isinstance(turn.get(key), int)
    ]
    total = turn.get("totalTokens")
    head = f"turn {total:g} tokens" if isinstance(total, int) else "turn"
    return f"{head} ({', '.join(breakdown)})" if breakdown else head
