"""Tool-call state: sparse merges and the extraction helpers the permission policy reads."""

from __future__ import annotations

from typing import Any

import pytest

from baton.errors import InternalError
from baton.wire.toolcalls import (
    MAX_EXACT_DIFF_LINES,
    MAX_WALK_DEPTH,
    MAX_WALK_STRINGS,
    merge_tool_call,
    path_candidates,
    tool_argv,
    tool_command,
    tool_command_values,
    tool_cwd,
    tool_cwd_values,
    tool_diff_stats,
    tool_kind,
    tool_network_target,
    tool_paths,
)


def test_first_sight_is_the_update_without_framing() -> None:
    update = {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Edit", "kind": "edit"}
    assert merge_tool_call(None, update) == {"toolCallId": "t1", "title": "Edit", "kind": "edit"}


def test_absent_fields_keep_their_value_and_present_ones_overwrite() -> None:
    prior = {"toolCallId": "t1", "title": "Terminal", "kind": "execute", "rawInput": {}}
    update = {"toolCallId": "t1", "title": "echo hi", "rawInput": {"command": "echo hi"}}
    merged = merge_tool_call(prior, update)
    assert merged == {
        "toolCallId": "t1",
        "title": "echo hi",
        "kind": "execute",
        "rawInput": {"command": "echo hi"},
    }
    assert prior["title"] == "Terminal"  # inputs are not modified


def test_explicit_null_clears_a_field() -> None:
    prior = {"toolCallId": "t1", "kind": "edit", "locations": [{"path": "/a"}]}
    merged = merge_tool_call(prior, {"toolCallId": "t1", "kind": None, "locations": None})
    assert merged == {"toolCallId": "t1"}


def test_content_and_locations_are_replaced_whole() -> None:
    prior = {"toolCallId": "t1", "locations": [{"path": "/a"}, {"path": "/b"}]}
    merged = merge_tool_call(prior, {"toolCallId": "t1", "locations": [{"path": "/c"}]})
    assert merged["locations"] == [{"path": "/c"}]


@pytest.mark.parametrize(
    ("prior", "update"),
    [
        (None, {"title": "no id"}),
        (None, {"toolCallId": 7}),
        ({"toolCallId": "a"}, {"toolCallId": "b"}),
    ],
)
def test_misrouted_updates_are_baton_bugs(prior: dict[str, Any] | None, update: Any) -> None:
    with pytest.raises(InternalError):
        merge_tool_call(prior, update)


def test_paths_come_from_every_documented_place_in_first_seen_order() -> None:
    tool_call = {
        "locations": [{"path": "/w/a"}, {"path": 3}, "junk"],
        "content": [
            {"type": "diff", "path": "/w/b", "newText": "x"},
            {"type": "content", "diff": {"path": "/w/c"}},
            {"type": "content", "content": {"type": "text", "text": "t"}},
        ],
        "rawInput": {
            "path": "/w/d",
            "file": "/w/e",
            "filePath": "/w/f",
            "target": "/w/g",
            "file_path": "/w/a",
            "notebook_path": "/w/h",
            "source": "/w/i",
            "destination": "/w/j",
            "paths": ["/w/k", 5, ""],
            "changes": {"/w/l": {"type": "add"}},
        },
    }
    assert tool_paths(tool_call) == [f"/w/{c}" for c in "abcldefghijk"]


@pytest.mark.parametrize(
    "tool_call",
    [{}, {"locations": "x", "content": {"path": "/a"}}, {"rawInput": "a string"}, {"rawInput": 4}],
)
def test_malformed_shapes_yield_no_paths(tool_call: dict[str, Any]) -> None:
    assert tool_paths(tool_call) == []


@pytest.mark.parametrize(
    ("raw_input", "command", "argv"),
    [
        ("ls -la", "ls -la", None),
        ("   ", None, None),
        ({"command": "echo hi"}, "echo hi", None),
        (
            {"cmd": ["/bin/bash", "-lc", "echo a b"]},
            "/bin/bash -lc echo a b",
            ["/bin/bash", "-lc", "echo a b"],
        ),
        ({"script": "make"}, "make", None),
        ({"command": "a", "cmd": "b"}, "a", None),
        ({"command": ["ls", 3]}, None, None),
        ({"command": []}, None, None),
        ({"command": 12}, None, None),
        ({"command": ""}, None, None),
        ({"description": "no command"}, None, None),
        (None, None, None),
    ],
)
def test_command_and_argv(raw_input: Any, command: str | None, argv: list[str] | None) -> None:
    tool_call = {"rawInput": raw_input}
    assert tool_command(tool_call) == command
    assert tool_argv(tool_call) == argv


def test_cwd_and_network_target() -> None:
    assert tool_cwd({"rawInput": {"cwd": "/w"}}) == "/w"
    assert tool_cwd({"rawInput": {"workdir": "/x"}}) == "/x"
    assert tool_cwd({"rawInput": {"cwd": 3}}) is None
    assert tool_network_target({"rawInput": {"url": "https://a"}}) == "https://a"
    assert tool_network_target({"rawInput": {"uri": "https://b"}}) == "https://b"
    assert tool_network_target({"rawInput": {"host": "c.example"}}) == "c.example"
    assert tool_network_target({"rawInput": "https://a"}) is None


@pytest.mark.parametrize(
    ("kind", "expected"),
    [("edit", "edit"), ("frobnicate", "frobnicate"), (None, "other"), ("", "other"), (3, "other")],
)
def test_kind_defaults_to_other(kind: Any, expected: str) -> None:
    assert tool_kind({"kind": kind}) == expected


def test_diff_stats_count_added_and_removed_lines() -> None:
    tool_call = {
        "content": [
            {"type": "diff", "path": "/w/new", "oldText": None, "newText": "a\nb\n"},
            {"type": "diff", "path": "/w/edit", "oldText": "a\nb\nc", "newText": "a\nB\nc\nd"},
            {"type": "diff", "path": 3, "newText": "x"},
            {"type": "content", "content": {"type": "text", "text": "x"}},
        ]
    }
    stats = tool_diff_stats(tool_call)
    assert [(s.path, s.added, s.removed, s.exact) for s in stats] == [
        ("/w/new", 2, 0, True),
        ("/w/edit", 2, 1, True),
    ]


def test_huge_diffs_get_an_upper_bound() -> None:
    old = "x\n" * MAX_EXACT_DIFF_LINES
    stats = tool_diff_stats(
        {"content": [{"type": "diff", "path": "/p", "oldText": old, "newText": "y"}]}
    )
    assert (stats[0].added, stats[0].removed, stats[0].exact) == (1, MAX_EXACT_DIFF_LINES, False)
    at_cap = "x\n" * (MAX_EXACT_DIFF_LINES - 1)
    stats = tool_diff_stats(
        {"content": [{"type": "diff", "path": "/p", "oldText": at_cap, "newText": "y"}]}
    )
    assert stats[0].exact


def test_display_paths_include_move_destinations() -> None:
    call = {
        "toolCallId": "t",
        "rawInput": {
            "path": "a",
            "new_path": "b",
            "changes": {"c": {"type": "update", "move_path": "d"}},
        },
    }
    assert tool_paths(call) == ["c", "d", "a", "b"]


def test_path_candidates_read_every_string_but_contents() -> None:
    call = {
        "toolCallId": "t",
        "locations": [{"path": "loc", "line": 3}],
        "content": [
            {"type": "diff", "path": "diffpath", "newText": "NEW", "oldText": "OLD"},
            {"type": "content", "diff": {"path": "nested-diff"}, "content": {"text": "TEXT"}},
        ],
        "rawInput": {
            "file_path": "fp",
            "to": ["x", {"deeper": "y"}],
            "content": "CONTENT",
            "new_string": "NS",
            "cwd": "/skipped",
            "changes": {"ch": {"type": "add", "content": "C2", "move_path": "mp"}},
        },
    }
    walk = path_candidates(call, frozenset({"cwd"}))
    assert walk.complete
    for expected in ("loc", "diffpath", "nested-diff", "fp", "x", "y", "ch", "mp", "to", "deeper"):
        assert expected in walk.strings, expected
    for content in ("NEW", "OLD", "TEXT", "CONTENT", "NS", "C2", "/skipped"):
        assert content not in walk.strings, content


def test_path_candidates_are_bounded() -> None:
    deep: Any = "leaf"
    for _ in range(MAX_WALK_DEPTH + 5):
        deep = [deep]
    walk = path_candidates({"toolCallId": "t", "rawInput": {"p": deep}}, frozenset())
    assert not walk.complete
    assert "leaf" not in walk.strings
    wide = {f"k{index}": "v" for index in range(MAX_WALK_STRINGS + 1)}
    walk = path_candidates({"toolCallId": "t", "rawInput": wide}, frozenset())
    assert not walk.complete
    assert len(walk.strings) <= MAX_WALK_STRINGS
    deeper: Any = "x"
    for _ in range(5_000):  # far deeper than Python's recursion limit: no RecursionError
        deeper = {"a": deeper}
    assert not path_candidates({"toolCallId": "t", "rawInput": deeper}, frozenset()).complete


def test_every_command_key_is_reported() -> None:
    call = {"toolCallId": "t", "rawInput": {"command": "ls", "script": "x", "args": ["push"]}}
    assert tool_command_values(call) == [("command", "ls"), ("script", "x"), ("args", ["push"])]
    assert tool_command_values({"toolCallId": "t", "rawInput": "ls"}) == [("rawInput", "ls")]
    assert tool_command_values({"toolCallId": "t", "rawInput": 7}) == []


def test_every_cwd_key_is_reported() -> None:
    call = {"toolCallId": "t", "rawInput": {"cwd": "a", "directory": "b", "workdir": 3}}
    assert tool_cwd_values(call) == ["a", 3, "b"]
