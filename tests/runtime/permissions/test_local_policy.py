"""Baton's local rules on a correlated tool call, kind by kind, on a real worktree."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from baton.runtime.permissions import local_policy as lp
from baton.runtime.permissions.local_policy import LocalContext, evaluate


def _file_call(kind: str, *paths: str, cwd: str | None = None) -> dict[str, Any]:
    raw: dict[str, Any] = {"file_path": paths[0]} if paths else {}
    if cwd is not None:
        raw["cwd"] = cwd
    return {
        "toolCallId": "t",
        "kind": kind,
        "locations": [{"path": path} for path in paths[1:]],
        "rawInput": raw,
    }


@pytest.mark.parametrize("kind", ["edit", "delete", "move", "read"])
@pytest.mark.parametrize(
    ("relative", "code"),
    [
        ("README.md", lp.PATHS_INSIDE_WORKTREE),
        ("src/main.py", lp.PATHS_INSIDE_WORKTREE),
        ("src/new_file.py", lp.PATHS_INSIDE_WORKTREE),  # need not exist yet
        ("inner/main.py", lp.PATHS_INSIDE_WORKTREE),  # a symlink that stays inside
        ("../outside/secret.txt", lp.PATH_OUTSIDE_WORKTREE),  # .. escape
        ("src/../../outside/x", lp.PATH_OUTSIDE_WORKTREE),
        ("escape/secret.txt", lp.PATH_OUTSIDE_WORKTREE),  # symlinked directory
        ("escape_file", lp.PATH_OUTSIDE_WORKTREE),  # symlinked file
        ("dangling", lp.PATH_OUTSIDE_WORKTREE),  # a dangling symlink is followed too
        ("escape/../../outside/secret.txt", lp.PATH_OUTSIDE_WORKTREE),
    ],
)
def test_file_kinds_resolve_paths_inside_the_worktree(
    kind: str, relative: str, code: str, worktree: Path, context: LocalContext
) -> None:
    absolute = f"{worktree}/{relative}"
    for path in (absolute, relative):  # relative paths resolve against the worktree
        decision = evaluate(_file_call(kind, path), context)
        assert decision.reason_code == code, path
        assert decision.permits_allow is (code == lp.PATHS_INSIDE_WORKTREE)


@pytest.mark.parametrize("kind", ["edit", "delete", "move", "read"])
def test_no_path_blocks(kind: str, context: LocalContext) -> None:
    decision = evaluate({"toolCallId": "t", "kind": kind, "rawInput": {}}, context)
    assert (decision.permits_allow, decision.reason_code) == (False, lp.NO_PATH)


@pytest.mark.parametrize("kind", ["edit", "move"])
def test_one_outside_path_among_several_blocks(
    kind: str, worktree: Path, context: LocalContext
) -> None:
    call = _file_call(kind, f"{worktree}/README.md", f"{worktree}/src/a", "/etc/passwd")
    assert evaluate(call, context).reason_code == lp.PATH_OUTSIDE_WORKTREE


def test_outside_absolute_paths_block(context: LocalContext) -> None:
    assert evaluate(_file_call("read", "/etc/passwd"), context).reason_code == (
        lp.PATH_OUTSIDE_WORKTREE
    )


def test_a_sibling_with_the_worktree_as_prefix_is_outside(
    worktree: Path, context: LocalContext
) -> None:
    sibling = f"{worktree}-other/file"
    assert evaluate(_file_call("edit", sibling), context).reason_code == lp.PATH_OUTSIDE_WORKTREE


@pytest.mark.parametrize(
    "path", ["~/.ssh/id_rsa", "~root/x", "file:///etc/passwd", "https://x/y", "a\x00b"]
)
def test_paths_that_cannot_be_checked_block(path: str, context: LocalContext) -> None:
    assert evaluate(_file_call("read", path), context).reason_code == lp.PATH_UNVERIFIABLE


@pytest.mark.parametrize(
    ("kind", "relative", "code"),
    [
        ("edit", ".git/config", lp.GIT_CONTROL_PATH),
        ("delete", ".git/hooks/pre-commit", lp.GIT_CONTROL_PATH),
        ("move", ".GIT/HEAD", lp.GIT_CONTROL_PATH),
        ("read", ".git/config", lp.PATHS_INSIDE_WORKTREE),
        ("edit", ".github/workflows/ci.yml", lp.PATHS_INSIDE_WORKTREE),
        ("edit", ".gitignore", lp.PATHS_INSIDE_WORKTREE),
        ("delete", ".", lp.WORKTREE_ROOT),
        ("edit", "src/..", lp.WORKTREE_ROOT),
        ("read", ".", lp.PATHS_INSIDE_WORKTREE),
    ],
)
def test_mutations_may_not_touch_git_control_files_or_the_root(
    kind: str, relative: str, code: str, worktree: Path, context: LocalContext
) -> None:
    assert evaluate(_file_call(kind, f"{worktree}/{relative}"), context).reason_code == code


def test_relative_paths_use_the_tool_cwd(worktree: Path, context: LocalContext) -> None:
    inside = _file_call("edit", "main.py", cwd=f"{worktree}/src")
    assert evaluate(inside, context).permits_allow
    escaping = _file_call("edit", "../../outside/x", cwd=f"{worktree}/src")
    assert evaluate(escaping, context).reason_code == lp.PATH_OUTSIDE_WORKTREE
    outside_cwd = _file_call("edit", "x", cwd=str(worktree.parent / "outside"))
    assert evaluate(outside_cwd, context).reason_code == lp.CWD_OUTSIDE_WORKTREE


def test_the_worktree_itself_may_be_given_through_a_symlink(worktree: Path) -> None:
    link = worktree.parent / "link-to-repo"
    link.symlink_to(worktree)
    context = LocalContext(str(link), network_allowed=True)
    assert context.worktree == str(worktree)
    assert evaluate(_file_call("edit", f"{link}/README.md"), context).permits_allow
    assert evaluate(_file_call("edit", f"{worktree}/README.md"), context).permits_allow


# --- execute and search ---------------------------------------------------------------------


def _command_call(kind: str, raw_input: Any) -> dict[str, Any]:
    return {"toolCallId": "t", "kind": kind, "rawInput": raw_input}


@pytest.mark.parametrize("kind", ["execute", "search"])
@pytest.mark.parametrize(
    ("raw_input", "code"),
    [
        ({"command": "pytest -q"}, lp.COMMAND_PERMITTED),
        ("ls -la", lp.COMMAND_PERMITTED),
        ({"cmd": ["/bin/bash", "-lc", "echo hello > hello_shell.txt"]}, lp.COMMAND_PERMITTED),
        ({"script": "make"}, lp.COMMAND_PERMITTED),
        ({"pattern": "TODO", "path": "."}, lp.NO_COMMAND),  # opaque after correlation
        ({}, lp.NO_COMMAND),
        (None, lp.NO_COMMAND),
        ({"command": ["ls", 1]}, lp.NO_COMMAND),
        ({"command": "git push origin main"}, lp.RESERVED_COMMAND),
        ({"cmd": ["/bin/bash", "-lc", "git push"]}, lp.RESERVED_COMMAND),
        ({"command": "gh pr create"}, lp.RESERVED_COMMAND),
        ({"command": "echo 'open"}, lp.UNPARSEABLE_COMMAND),
    ],
)
def test_commands(kind: str, raw_input: Any, code: str, context: LocalContext) -> None:
    decision = evaluate(_command_call(kind, raw_input), context)
    assert decision.reason_code == code
    assert decision.permits_allow is (code == lp.COMMAND_PERMITTED)


def test_an_argv_is_checked_exactly_not_as_its_joined_string(context: LocalContext) -> None:
    # Joined with spaces this would read "bash -lc echo it's", unbalanced quoting.
    call = _command_call("execute", {"command": ["bash", "-lc", 'echo "it\'s"']})
    assert evaluate(call, context).permits_allow


@pytest.mark.parametrize(
    ("cwd", "permitted"),
    [(".", True), ("src", True), ("inner", True), ("escape", False), ("..", False), ("/", False)],
)
def test_command_cwd_must_be_inside(
    cwd: str, permitted: bool, worktree: Path, context: LocalContext
) -> None:
    for value in (cwd, f"{worktree}/{cwd}" if not cwd.startswith("/") else cwd):
        call = _command_call("execute", {"command": "ls", "cwd": value})
        decision = evaluate(call, context)
        assert decision.permits_allow is permitted, value
        if not permitted:
            assert decision.reason_code == lp.CWD_OUTSIDE_WORKTREE
    workdir = _command_call("execute", {"command": "ls", "workdir": "/"})
    assert evaluate(workdir, context).reason_code == lp.CWD_OUTSIDE_WORKTREE


# --- fetch and the rest ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw_input", "network", "code"),
    [
        ({"url": "https://example.com"}, True, lp.NETWORK_PERMITTED),
        ({"host": "example.com"}, True, lp.NETWORK_PERMITTED),
        ({"query": "acp spec"}, True, lp.NETWORK_PERMITTED),  # a web search names no URL
        ({"url": "https://example.com"}, False, lp.NETWORK_DISABLED),
        ({}, False, lp.NETWORK_DISABLED),
        ({"uri": "file:///etc/passwd"}, True, lp.LOCAL_FILE_FETCH),
        ({"url": " FILE:/etc/passwd"}, True, lp.LOCAL_FILE_FETCH),
    ],
)
def test_fetch_follows_the_network_setting(
    raw_input: dict[str, Any], network: bool, code: str, worktree: Path
) -> None:
    context = LocalContext(str(worktree), network_allowed=network)
    decision = evaluate({"toolCallId": "t", "kind": "fetch", "rawInput": raw_input}, context)
    assert decision.reason_code == code
    assert decision.permits_allow is (code == lp.NETWORK_PERMITTED)


@pytest.mark.parametrize("kind", ["think", "switch_mode", "other", "frobnicate", None, 7])
def test_other_kinds_can_only_be_declined(kind: Any, context: LocalContext) -> None:
    call = {"toolCallId": "t", "kind": kind, "rawInput": {"command": "ls", "path": "README.md"}}
    decision = evaluate(call, context)
    assert (decision.permits_allow, decision.reason_code) == (False, lp.KIND_NOT_ALLOWABLE)


def test_details_quote_agent_text_within_a_bound(context: LocalContext) -> None:
    long_path = "/etc/" + "x" * 10_000
    detail = evaluate(_file_call("read", long_path), context).detail
    assert len(detail) < lp.MAX_DETAIL_QUOTE_CHARS + 100


def test_every_reason_code_is_documented() -> None:
    docs = (Path(__file__).parents[3] / "docs" / "permissions.md").read_text(encoding="utf-8")
    for code in lp.REASON_CODES:
        assert f"`{code}`" in docs, code
