"""Usage parsing: usage_update and the end-of-turn usage, from real adapter payloads and edge
shapes. Nothing is invented: what the agent did not send is absent, never zero."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from baton.wire.usage import (
    MAX_CURRENCY_CHARS,
    ContextUsage,
    Cost,
    TurnUsage,
    parse_cost,
    parse_turn_usage,
    parse_usage_update,
)

ADAPTERS = Path(__file__).parents[1] / "fixtures" / "adapters"


def _frames(adapter: str) -> list[dict[str, Any]]:
    frames: list[dict[str, Any]] = []
    for path in sorted((ADAPTERS / adapter).glob("transcript.*.jsonl")):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            frames.append(record.get("frame") or record.get("msg"))
    return frames


def _usage_updates(adapter: str) -> list[dict[str, Any]]:
    return [
        f["params"]["update"]
        for f in _frames(adapter)
        if f.get("method") == "session/update"
        and f["params"]["update"].get("sessionUpdate") == "usage_update"
    ]


def test_claude_usage_update_with_cost() -> None:
    updates = _usage_updates("claude-agent-acp-0.23.1")
    assert updates
    parsed = parse_usage_update(updates[0])
    assert parsed is not None
    assert parsed.size == 200000 and parsed.cost is not None
    assert parsed.cost.currency == "USD" and parsed.cost.amount > 0
    assert parsed.to_json()["cost"] == updates[0]["cost"]


def test_codex_usage_update_without_cost() -> None:
    updates = _usage_updates("codex-acp-0.16.0")
    assert updates
    parsed = parse_usage_update(updates[0])
    assert parsed == ContextUsage(updates[0]["used"], updates[0]["size"], None)
    assert "cost" not in parsed.to_json()


def test_claude_end_of_turn_usage() -> None:
    answers = [
        f["result"]
        for f in _frames("claude-agent-acp-0.23.1")
        if isinstance(f.get("result"), dict) and "usage" in f["result"]
    ]
    assert answers
    usage = parse_turn_usage(answers[0]["usage"])
    assert usage is not None
    assert usage.to_json() == answers[0]["usage"]
    assert usage.get("thoughtTokens") is None  # not sent, so not shown (never 0)
    assert list(usage.to_json()) == [
        "totalTokens",
        "inputTokens",
        "outputTokens",
        "cachedReadTokens",
        "cachedWriteTokens",
    ]


@pytest.mark.parametrize(
    "update",
    [
        {"sessionUpdate": "usage_update", "used": 1},
        {"sessionUpdate": "usage_update", "size": 1},
        {"sessionUpdate": "usage_update", "used": -1, "size": 5},
        {"sessionUpdate": "usage_update", "used": True, "size": 5},
        {"sessionUpdate": "usage_update", "used": 1.5, "size": 5},
        {"sessionUpdate": "usage_update", "used": "1", "size": 5},
        {"sessionUpdate": "usage_update", "used": 2**64, "size": 5},
    ],
)
def test_unreadable_usage_updates(update: dict[str, Any]) -> None:
    assert parse_usage_update(update) is None


@pytest.mark.parametrize(
    "cost",
    [
        None,
        {"amount": 1.0},
        {"currency": "USD"},
        {"amount": "1", "currency": "USD"},
        {"amount": True, "currency": "USD"},
        {"amount": float("nan"), "currency": "USD"},
        {"amount": float("inf"), "currency": "USD"},
        {"amount": 1.0, "currency": ""},
        [1, "USD"],
    ],
)
def test_unreadable_costs_are_absent(cost: object) -> None:
    assert parse_cost(cost) is None
    parsed = parse_usage_update({"used": 1, "size": 2, "cost": cost})
    assert parsed == ContextUsage(1, 2, None)


def test_cost_units_and_bounds() -> None:
    assert parse_cost({"amount": 3, "currency": "credits"}) == Cost(3.0, "credits")
    long = parse_cost({"amount": 0, "currency": "X" * 100})
    assert long is not None and len(long.currency) == MAX_CURRENCY_CHARS


def test_turn_usage_keeps_only_readable_counts() -> None:
    usage = parse_turn_usage(
        {"inputTokens": 5, "outputTokens": -1, "thoughtTokens": None, "extra": 9, "_meta": {}}
    )
    assert usage == TurnUsage((("inputTokens", 5),))
    assert parse_turn_usage({"outputTokens": "7"}) is None
    assert parse_turn_usage(None) is None
    assert parse_turn_usage([1]) is None
