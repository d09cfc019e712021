"""Issue 15's hostile requests, end to end through the engine under ``full`` and ``auto-edits``:
none is granted, and none crashes or stalls the decision."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import orjson
import pytest

from baton.runtime.permissions import local_policy as lp
from baton.runtime.permissions.ask import NoUserAsker
from baton.runtime.permissions.correlation import ToolCallTracker
from baton.runtime.permissions.engine import (
    MAX_PERMISSION_OPTIONS,
    PermissionSettings,
    refuse,
    settle,
)
from baton.runtime.permissions.local_policy import LocalContext, evaluate
from baton.runtime.permissions.policies import PolicyName
from baton.runtime.permissions.records import (
    MAX_RECORD_CHARS,
    MAX_RECORD_ITEMS,
    MAX_RECORD_STRING_CHARS,
    TRUNCATED,
)

OPTIONS = [
    {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
]


def _settle(tool_call: dict[str, Any], worktree: Path, policy: PolicyName = "full") -> Any:
    params = {"sessionId": "s", "toolCall": {"toolCallId": "t", **tool_call}, "options": OPTIONS}
    settings = PermissionSettings(policy, False, LocalContext(str(worktree), network_allowed=True))
    return asyncio.run(
        settle(
            1,
            params,
            tracker=ToolCallTracker("s"),
            settings=settings,
            asker=NoUserAsker(),
            clock=None,
        )
    )


def _execute(raw_input: Any) -> dict[str, Any]:
    return {"kind": "execute", "rawInput": raw_input}


# --- execute --------------------------------------------------------------------------------

HOSTILE_COMMANDS = [
    "git \\\npush origin main",
    "git pu\\\nsh origin main",
    "$'git' push origin main",
    '$"git" push origin main',
    "g{i,}t push origin main",
    "/usr/bin/gi? push origin main",
    "${X:-git} push origin main",
    "sh -c '\"$0\" push origin main' git",
    "git config alias.p push && git p origin main",
    "export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.p GIT_CONFIG_VALUE_0=push; git p",
    "git send-pack ../remote.git main",
    "git subtree push --prefix=. ../remote.git main",
    "git http-push https://example.com/r.git main",
    "git --git-dir=../remote.git fetch . main:main",
    "cd .. && cd remote.git && git fetch ../repo main:main",
    "HOME=/tmp/evil git p",
    "PATH='/tmp/evil' git status",
    "GIT_CONFIG_GLOBAL='/tmp/evil.cfg' git status",
    "python3 -c 'import os; os.system(\"git push\")'",
    "echo 'git push' | bash",
]


@pytest.mark.parametrize("command", HOSTILE_COMMANDS)
@pytest.mark.parametrize("shape", ["string", "argv"])
def test_hostile_commands_are_not_granted(command: str, shape: str, worktree: Path) -> None:
    raw: Any = (
        {"command": command} if shape == "string" else {"command": ["/bin/bash", "-lc", command]}
    )
    resolution = _settle(_execute(raw), worktree)
    assert resolution.outcome == {"outcome": {"outcome": "cancelled"}}
    assert not resolution.record.local.permits_allow


@pytest.mark.parametrize(
    "raw_input",
    [
        {"command": "ls", "cmd": "git push"},
        {"command": "ls", "script": "git push"},
        {"cmd": "ls", "argv": ["git", "push"]},
        {"command": "git", "args": ["push"]},
        {"command": "ls", "command_line": "ls"},  # even agreeing: which one runs is unknown
    ],
)
def test_more_than_one_command_key_is_opaque(
    raw_input: dict[str, Any], context: LocalContext
) -> None:
    decision = evaluate(_execute(raw_input), context)
    assert (decision.permits_allow, decision.reason_code) == (False, lp.OPAQUE_COMMAND)


@pytest.mark.parametrize(
    "raw_input",
    [
        {"command": "git p", "env": {"GIT_CONFIG_COUNT": "1"}},
        {"command": "bash", "stdin": "git push"},
        {"command": "ls", "shell": "/tmp/evil"},
        {"command": "ls", "environment": {"PATH": "/tmp"}},
        {"command": "git p", "vars": {"GIT_CONFIG_COUNT": "1"}},  # shaped like an environment
        {"command": "git p", "extra": ["GIT_CONFIG_COUNT=1"]},
    ],
)
def test_fields_that_change_how_a_command_runs_are_opaque(
    raw_input: dict[str, Any], context: LocalContext
) -> None:
    decision = evaluate(_execute(raw_input), context)
    assert (decision.permits_allow, decision.reason_code) == (False, lp.OPAQUE_COMMAND)


@pytest.mark.parametrize(
    "command",
    ["git fetch 'ext::sh -c git%20push' main", "git pull fd::7 main", "git ls-remote EXT::x"],
)
def test_transports_that_run_commands_are_reserved(command: str, context: LocalContext) -> None:
    decision = evaluate(_execute({"command": command}), context)
    assert (decision.permits_allow, decision.reason_code) == (False, lp.RESERVED_COMMAND)


def test_codex_and_claude_execute_shapes_stay_grantable(
    context: LocalContext, worktree: Path
) -> None:
    codex_bash = {"command": ["/bin/bash", "-lc", "cat bash_out.txt"]}
    assert evaluate(_execute(codex_bash), context).permits_allow
    codex = {
        "call_id": "call_4",
        "command": ["/bin/bash", "-lc", "echo hello > hello_shell.txt"],
        "cwd": str(worktree),
        "reason": "Allow creating hello_shell.txt?",
        "proposed_execpolicy_amendment": ["/bin/bash", "-lc", "echo hello > hello_shell.txt"],
        "parsed_cmd": [{"type": "unknown", "cmd": "echo hello > hello_shell.txt"}],
    }
    claude = {"command": "pytest -q && git status", "description": "run tests", "timeout": 60}
    gemini = {"command": "make test", "directory": "src", "description": "x"}
    for raw in (codex, claude, gemini):
        assert evaluate(_execute(raw), context).permits_allow, raw


@pytest.mark.parametrize(
    ("command", "code"),
    [
        ("cd src && ls", lp.COMMAND_PERMITTED),
        ("cd inner && ls", lp.COMMAND_PERMITTED),
        ("cd .. && ls", lp.CWD_OUTSIDE_WORKTREE),
        ("cd escape && ls", lp.CWD_OUTSIDE_WORKTREE),
        ("cd src; cd ../..", lp.CWD_OUTSIDE_WORKTREE),
        ("cd /tmp", lp.CWD_OUTSIDE_WORKTREE),
        ("git -C .. status", lp.CWD_OUTSIDE_WORKTREE),
        ("git -C src status", lp.COMMAND_PERMITTED),
        # A cd that may fail leaves the next one relative to the previous directory too.
        ("cd nothere || cd ..", lp.CWD_OUTSIDE_WORKTREE),
    ],
)
def test_directories_a_command_changes_into_must_be_inside(
    command: str, code: str, context: LocalContext
) -> None:
    assert evaluate(_execute({"command": command}), context).reason_code == code


@pytest.mark.parametrize(
    "command",
    ["cd vendor/remote.git && git fetch ../.. HEAD:refs/heads/evil", "git -C vendor/sub status"],
)
def test_commands_may_not_run_inside_another_repository(
    command: str, worktree: Path, context: LocalContext
) -> None:
    bare = worktree / "vendor" / "remote.git"
    (bare / "objects").mkdir(parents=True)
    (bare / "refs").mkdir()
    (bare / "HEAD").write_text("ref: refs/heads/main\n")
    (worktree / "vendor" / "sub").mkdir()
    (worktree / "vendor" / "sub" / ".git").write_text("gitdir: ../../.git/modules/sub\n")
    decision = evaluate(_execute({"command": command}), context)
    assert (decision.permits_allow, decision.reason_code) == (False, lp.CWD_OUTSIDE_WORKTREE)
    as_cwd = evaluate(_execute({"command": "git status", "cwd": "vendor/remote.git"}), context)
    assert as_cwd.reason_code == lp.CWD_OUTSIDE_WORKTREE
    assert evaluate(_execute({"command": "cd vendor && ls"}), context).permits_allow


@pytest.mark.parametrize(
    "command",
    [
        "cp ../remote.git/refs/heads/main ../remote.git/refs/heads/evil",
        "echo 0123 > ../remote.git/refs/heads/evil",
        "tee ../remote.git/packed-refs",
        "cp -r objects ../remote.git",
        "dd if=x of=../remote.git/HEAD",
        "ln -s ../remote.git r && cp x r/refs/heads/evil",  # r is not there yet: ln names it
    ],
)
def test_arguments_in_another_repositorys_control_directory_are_refused(
    command: str, worktree: Path, context: LocalContext
) -> None:
    bare = worktree.parent / "remote.git"
    (bare / "objects").mkdir(parents=True)
    (bare / "refs" / "heads").mkdir(parents=True)
    (bare / "HEAD").write_text("ref: refs/heads/main\n")
    decision = evaluate(_execute({"command": command}), context)
    assert (decision.permits_allow, decision.reason_code) == (False, lp.GIT_CONTROL_PATH)
    assert evaluate(_execute({"command": "cp README.md ../outside/"}), context).permits_allow


def test_a_cd_inside_a_subdirectory_cwd_is_followed_from_there(context: LocalContext) -> None:
    call = _execute({"command": "cd .. && ls", "cwd": "src"})
    assert evaluate(call, context).permits_allow
    call = _execute({"command": "cd ../.. && ls", "cwd": "src"})
    assert evaluate(call, context).reason_code == lp.CWD_OUTSIDE_WORKTREE


# --- paths ----------------------------------------------------------------------------------


def _edit(raw_input: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"kind": "edit", "rawInput": raw_input, **fields}


def test_a_hard_link_to_a_file_outside_is_not_inside(worktree: Path, context: LocalContext) -> None:
    os.link(worktree.parent / "outside" / "secret.txt", worktree / "linked.txt")
    for kind in ("edit", "read", "delete"):
        call = {"kind": kind, "rawInput": {"file_path": "linked.txt"}}
        decision = evaluate(call, context)
        assert (decision.permits_allow, decision.reason_code) == (False, lp.PATH_HARD_LINKED)
    resolution = _settle(_edit({"file_path": str(worktree / "linked.txt")}), worktree, "auto-edits")
    assert resolution.outcome == {"outcome": {"outcome": "cancelled"}}


def test_a_fifo_is_not_a_regular_file(worktree: Path, context: LocalContext) -> None:
    os.mkfifo(worktree / "pipe")
    assert evaluate(_edit({"file_path": "pipe"}), context).reason_code == lp.PATH_NOT_REGULAR


@pytest.mark.parametrize(
    "relative",
    [
        "sub/.git/hooks/pre-commit",
        "sub/.git/config",
        "a/b/.GIT/hooks/x",
        "sub/.git./config",
        "sub/git~1/config",
        "sub/.g\u200cit/config",
        ".git",
    ],
)
def test_edits_under_a_nested_git_directory_are_refused(
    relative: str, worktree: Path, context: LocalContext
) -> None:
    decision = evaluate(_edit({"file_path": relative}), context)
    assert (decision.permits_allow, decision.reason_code) == (False, lp.GIT_CONTROL_PATH)


def test_a_symlink_into_a_nested_git_directory_is_refused(
    worktree: Path, context: LocalContext
) -> None:
    (worktree / "sub" / ".git" / "hooks").mkdir(parents=True)
    (worktree / "hooks").symlink_to(worktree / "sub" / ".git" / "hooks")
    decision = evaluate(_edit({"file_path": "hooks/pre-commit"}), context)
    assert decision.reason_code == lp.GIT_CONTROL_PATH


def test_edits_inside_a_nested_bare_repository_are_refused(
    worktree: Path, context: LocalContext
) -> None:
    bare = worktree / "vendor" / "lib.git"
    (bare / "objects").mkdir(parents=True)
    (bare / "refs").mkdir()
    (bare / "HEAD").write_text("ref: refs/heads/main\n")
    decision = evaluate(_edit({"file_path": "vendor/lib.git/hooks/post-update"}), context)
    assert decision.reason_code == lp.GIT_CONTROL_PATH
    assert evaluate(_edit({"file_path": "vendor/other.txt"}), context).permits_allow


@pytest.mark.parametrize("kind", ["delete", "move", "edit"])
@pytest.mark.parametrize("holds", ["nested/.git", "deep/er/.GIT", "bare.git"])
def test_changing_a_directory_that_holds_a_repository_is_refused(
    kind: str, holds: str, worktree: Path, context: LocalContext
) -> None:
    inner = worktree / "vendor" / holds
    inner.mkdir(parents=True)
    if holds == "bare.git":
        (inner / "objects").mkdir()
        (inner / "refs").mkdir()
        (inner / "HEAD").write_text("ref: refs/heads/main\n")
    decision = evaluate({"kind": kind, "rawInput": {"path": "vendor"}}, context)
    assert (decision.permits_allow, decision.reason_code) == (False, lp.GIT_CONTROL_PATH)
    read = evaluate({"kind": "read", "rawInput": {"path": "vendor"}}, context)
    assert read.permits_allow
    assert evaluate({"kind": kind, "rawInput": {"path": "src"}}, context).permits_allow


@pytest.mark.parametrize(
    "tool_call",
    [
        {"kind": "move", "rawInput": {"path": "README.md", "new_path": "/tmp/x"}},
        {"kind": "move", "rawInput": {"old_path": "README.md", "newPath": "../outside/x"}},
        {"kind": "move", "rawInput": {"from": "README.md", "to": "/etc/x"}},
        {
            "kind": "edit",
            "rawInput": {"changes": {"README.md": {"type": "update", "move_path": "/tmp/x"}}},
        },
        {"kind": "edit", "rawInput": {"file_path": "README.md", "extra": {"deep": ["/etc/x"]}}},
        {"kind": "edit", "rawInput": {"files": {"/etc/x": {"type": "add"}}}},
        {"kind": "edit", "locations": [{"path": "README.md", "line": 1, "alt": "/etc/x"}]},
        {
            "kind": "edit",
            "content": [{"type": "diff", "path": "README.md", "newText": "x", "target": "/etc/x"}],
        },
    ],
)
def test_every_key_that_can_name_a_path_is_read(
    tool_call: dict[str, Any], context: LocalContext
) -> None:
    decision = evaluate(tool_call, context)
    assert not decision.permits_allow
    assert decision.reason_code == lp.PATH_OUTSIDE_WORKTREE


def test_file_contents_are_not_read_as_paths(context: LocalContext) -> None:
    call = _edit({"file_path": "README.md", "old_string": "/etc/passwd", "new_string": "~/x"})
    assert evaluate(call, context).permits_allow
    call = {
        "kind": "edit",
        "rawInput": {"changes": {"a.txt": {"type": "add", "content": "/etc/x"}}},
    }
    assert evaluate(call, context).permits_allow
    call = _edit({"command": "create", "path": "a.c", "file_text": "/* C */\nint x;"})
    assert evaluate(call, context).permits_allow


# --- fetch ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw_input",
    [
        {"url": "https://example.com", "path": "/etc/shadow"},
        {"url": "/etc/shadow"},
        {"url": "https://example.com", "uri": "file:///etc/shadow"},
        {"urls": ["https://example.com", "file:///etc/passwd"]},
        {"url": "https://example.com", "extra": {"local": "../outside/secret.txt"}},
        {"url": "escape/secret.txt"},
        {"url": "https://example.com", "description": "/etc/shadow"},  # no content keys here
    ],
)
def test_fetch_reads_every_target_and_local_ones_follow_the_path_rules(
    raw_input: dict[str, Any], context: LocalContext
) -> None:
    decision = evaluate({"kind": "fetch", "rawInput": raw_input}, context)
    assert (decision.permits_allow, decision.reason_code) == (False, lp.LOCAL_FILE_FETCH)


@pytest.mark.parametrize(
    "raw_input",
    [
        {"url": "https://example.com/a?b=c", "prompt": "summarize the page"},
        {"url": "http://example.com", "uri": "https://example.org"},
        {"url": "README.md"},  # a local read inside the worktree
    ],
)
def test_plain_web_urls_and_inside_reads_are_permitted(
    raw_input: dict[str, Any], context: LocalContext
) -> None:
    assert evaluate({"kind": "fetch", "rawInput": raw_input}, context).permits_allow


# --- bounds ---------------------------------------------------------------------------------


def _nested(levels: int) -> Any:
    value: Any = "x"
    for _ in range(levels):
        value = {"a": [value]}
    return value


@pytest.mark.parametrize("kind", ["execute", "edit", "fetch", "other"])
def test_deeply_nested_raw_input_is_answered_and_recorded(kind: str, worktree: Path) -> None:
    tool_call = {
        "kind": kind,
        "rawInput": {"command": "ls", "file_path": "a", "deep": _nested(600)},
    }
    resolution = _settle(tool_call, worktree)
    assert resolution.outcome == {"outcome": {"outcome": "cancelled"}}
    stored = resolution.record.to_json()
    orjson.dumps(stored)  # within orjson's own depth limit
    assert TRUNCATED in orjson.dumps(stored).decode()
    if kind != "other":
        assert resolution.record.local.reason_code == lp.INPUT_TOO_LARGE


def test_a_huge_raw_input_is_bounded(worktree: Path) -> None:
    raw = {f"k{index}": "v" for index in range(200_000)}
    raw["command"] = "ls"
    resolution = _settle(_execute(raw), worktree)
    assert resolution.record.local.reason_code == lp.INPUT_TOO_LARGE
    stored = resolution.record.to_json()
    kept = stored["correlatedToolCall"]["rawInput"]
    assert len(kept) == MAX_RECORD_ITEMS + 1
    assert kept[TRUNCATED] == f"{200_001 - MAX_RECORD_ITEMS} more keys"
    assert len(orjson.dumps(stored)) < 4 * MAX_RECORD_CHARS


def test_long_strings_are_cut_with_a_marker(worktree: Path) -> None:
    resolution = _settle(_execute({"command": "echo " + "a" * 100_000}), worktree)
    command = resolution.record.to_json()["requestToolCall"]["rawInput"]["command"]
    assert command.startswith("echo aaa")
    assert f"{TRUNCATED} ({100_005 - MAX_RECORD_STRING_CHARS} more characters)" in command


def test_too_many_options_are_refused(worktree: Path) -> None:
    params = {
        "sessionId": "s",
        "toolCall": {"toolCallId": "t", "kind": "execute", "rawInput": {"command": "ls"}},
        "options": [
            {"optionId": f"o{index}", "name": "x", "kind": "allow_once"}
            for index in range(MAX_PERMISSION_OPTIONS + 1)
        ],
    }
    settings = PermissionSettings("full", False, LocalContext(str(worktree), network_allowed=True))
    resolution = asyncio.run(
        settle(
            1,
            params,
            tracker=ToolCallTracker("s"),
            settings=settings,
            asker=NoUserAsker(),
            clock=None,
        )
    )
    assert resolution.outcome == {"outcome": {"outcome": "cancelled"}}
    assert resolution.record.reason_code == "invalid_request"


def test_a_refusal_of_a_deep_request_is_recorded_within_bounds() -> None:
    params = {
        "sessionId": "s",
        "toolCall": {"toolCallId": "t", "rawInput": _nested(5_000)},
        "options": "not a list",
    }
    record = refuse(1, params, reason_code="invalid_request", reason="bad").record
    stored = record.to_json()
    assert "nested deeper than" in orjson.dumps(stored).decode()
    assert "rawInput" not in repr(record)  # agent data stays out of repr()
