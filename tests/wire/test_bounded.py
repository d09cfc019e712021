"""Bounded projections at their bounds: depth, items per container, string size, total size."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from baton.wire.bounded import (
    MAX_PROJECTION_CHARS,
    MAX_PROJECTION_DEPTH,
    MAX_PROJECTION_ITEMS,
    MAX_PROJECTION_STRING_CHARS,
    TRUNCATED_MARKER,
    ProjectionBounds,
    bounded,
    bounded_text,
)


def nest(levels: int) -> Any:
    value: Any = "leaf"
    for _ in range(levels):
        value = {"k": value}
    return value


def depth_of(value: Any) -> int:
    depth = 0
    while isinstance(value, dict):
        value = value["k"]
        depth += 1
    return depth


@pytest.mark.parametrize("levels", [MAX_PROJECTION_DEPTH - 1, MAX_PROJECTION_DEPTH])
def test_nesting_up_to_the_depth_bound_is_kept(levels: int) -> None:
    assert bounded(nest(levels)) == nest(levels)


def test_one_level_past_the_depth_bound_becomes_a_marker() -> None:
    kept = bounded(nest(MAX_PROJECTION_DEPTH + 1))
    assert depth_of(kept) == MAX_PROJECTION_DEPTH
    inner = kept
    for _ in range(MAX_PROJECTION_DEPTH):
        inner = inner["k"]
    assert inner.startswith(TRUNCATED_MARKER)


@pytest.mark.parametrize("levels", [252, 500, 100_000])
def test_any_nesting_encodes(levels: int) -> None:
    # 252+ levels broke the JSON event encoder (issue 15 class 4); the walk itself never
    # recurses past the bound.
    line = orjson.dumps(bounded({"entries": [{"content": nest(levels)}]}))
    assert TRUNCATED_MARKER.encode() in line


@pytest.mark.parametrize("count", [MAX_PROJECTION_ITEMS - 1, MAX_PROJECTION_ITEMS])
def test_containers_up_to_the_item_bound_are_kept(count: int) -> None:
    assert bounded(list(range(count))) == list(range(count))
    mapping = {f"k{i}": i for i in range(count)}
    assert bounded(mapping) == mapping


def test_one_item_past_the_item_bound_is_counted_in_a_marker() -> None:
    count = MAX_PROJECTION_ITEMS + 1
    kept = bounded(list(range(count)))
    assert kept[:-1] == list(range(MAX_PROJECTION_ITEMS))
    assert kept[-1] == f"{TRUNCATED_MARKER} (1 more items)"
    keys = bounded({f"k{i}": i for i in range(count)})
    assert len(keys) == MAX_PROJECTION_ITEMS + 1
    assert keys[TRUNCATED_MARKER] == "1 more keys"


@pytest.mark.parametrize("size", [MAX_PROJECTION_STRING_CHARS - 1, MAX_PROJECTION_STRING_CHARS])
def test_strings_up_to_the_string_bound_are_kept(size: int) -> None:
    assert bounded("x" * size) == "x" * size
    assert bounded_text("x" * size) == "x" * size


def test_one_character_past_the_string_bound_is_cut_with_a_marker() -> None:
    text = "x" * (MAX_PROJECTION_STRING_CHARS + 1)
    expected = "x" * MAX_PROJECTION_STRING_CHARS + f"{TRUNCATED_MARKER} (1 more characters)"
    assert bounded(text) == expected
    assert bounded_text(text) == expected
    assert bounded({text: 1}) == {expected: 1}, "keys are bounded like strings"


def test_the_total_size_bound_cuts_across_strings() -> None:
    bounds = ProjectionBounds(total_chars=10)
    assert bounded(["abcde", "fghij"], bounds) == ["abcde", "fghij"]
    kept = bounded(["abcde", "fghij", "k"], bounds)
    assert kept[:2] == ["abcde", "fghij"]
    assert kept[2].startswith(TRUNCATED_MARKER)
    big = bounded(["y" * MAX_PROJECTION_STRING_CHARS] * 40)
    assert sum(len(s) for s in big if not s.startswith(TRUNCATED_MARKER)) <= MAX_PROJECTION_CHARS


def test_json_scalars_pass_and_other_values_become_text() -> None:
    assert bounded({"a": None, "b": True, "c": 1, "d": 1.5}) == {
        "a": None,
        "b": True,
        "c": 1,
        "d": 1.5,
    }
    assert bounded((1, 2)) == [1, 2]
    assert bounded({1: object}) == {"1": str(object)}
