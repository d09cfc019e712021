"""Additional workspace roots (--add-dir) in the local policy: inside one counts as inside the
worktree, under the same symlink, hard-link and .git rules, each root its own boundary; the
resolution of --add-dir values (ADD_DIR_INVALID)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from baton.errors import AdditionalDirectoryInvalid
from baton.runtime.permissions import local_policy as lp
from baton.runtime.permissions.local_policy import LocalContext, evaluate
from baton.runtime.turns.workspace_roots import (
    MAX_ADDITIONAL_DIRECTORIES,
    resolve_additional_directories,
)


@pytest.fixture
def extra(tmp_path: Path) -> Path:
    """``lib/`` beside the worktree: a file, a .git directory, a hard-linked file, a symlink
    leaving it, and a nested repository."""
    lib = tmp_path / "lib"
    (lib / "pkg").mkdir(parents=True)
    (lib / ".git").mkdir()
    (lib / "pkg" / "mod.py").write_text("m")
    (lib / "linked.py").write_text("l")
    os.link(lib / "linked.py", tmp_path / "outside-link.py")
    (lib / "out").symlink_to(tmp_path / "outside")
    (lib / "vendored" / ".git").mkdir(parents=True)
    return lib


def _edit(path: str, **raw: Any) -> dict[str, Any]:
    return {"toolCallId": "t", "kind": "edit", "rawInput": {"file_path": path, **raw}}


def _execute(command: str, **raw: Any) -> dict[str, Any]:
    return {"toolCallId": "t", "kind": "execute", "rawInput": {"command": command, **raw}}


def test_without_the_root_its_paths_are_outside(context: LocalContext, extra: Path) -> None:
    decision = evaluate(_edit(f"{extra}/pkg/mod.py"), context)
    assert decision.reason_code == lp.PATH_OUTSIDE_WORKTREE


@pytest.mark.parametrize(
    ("relative", "code"),
    [
        ("pkg/mod.py", lp.PATHS_INSIDE_WORKTREE),
        ("pkg/new.py", lp.PATHS_INSIDE_WORKTREE),
        (".git/config", lp.GIT_CONTROL_PATH),
        ("vendored/.git/HEAD", lp.GIT_CONTROL_PATH),
        ("linked.py", lp.PATH_HARD_LINKED),
        ("out/secret.txt", lp.PATH_OUTSIDE_WORKTREE),
        ("", lp.WORKTREE_ROOT),
    ],
)
def test_the_same_rules_inside_an_added_root(
    worktree: Path, extra: Path, relative: str, code: str
) -> None:
    context = LocalContext(str(worktree), network_allowed=True, additional_roots=(str(extra),))
    path = f"{extra}/{relative}" if relative else str(extra)
    assert evaluate(_edit(path), context).reason_code == code
    # The worktree keeps its own rules.
    assert evaluate(_edit(f"{worktree}/src/main.py"), context).permits_allow


def test_commands_may_run_and_change_into_an_added_root(worktree: Path, extra: Path) -> None:
    context = LocalContext(str(worktree), network_allowed=True, additional_roots=(str(extra),))
    assert evaluate(_execute("ls", cwd=str(extra / "pkg")), context).permits_allow
    assert evaluate(_execute(f"cd {extra}/pkg && ls"), context).permits_allow
    outside = evaluate(_execute("ls", cwd=str(worktree.parent / "outside")), context)
    assert outside.reason_code == lp.CWD_OUTSIDE_WORKTREE
    nested = evaluate(_execute("git status", cwd=str(extra / "vendored")), context)
    assert not nested.permits_allow


def test_resolution(tmp_path: Path, worktree: Path, extra: Path) -> None:
    (tmp_path / "alias").symlink_to(extra)
    found = resolve_additional_directories(
        ["lib", str(tmp_path / "alias")], str(worktree), base=str(tmp_path)
    )
    assert found == (str(extra),)


@pytest.mark.parametrize(
    "bad",
    ["missing", "lib/pkg/mod.py", "repo", "repo/src", ""],
)
def test_bad_additional_directories(tmp_path: Path, worktree: Path, extra: Path, bad: str) -> None:
    with pytest.raises(AdditionalDirectoryInvalid) as caught:
        resolve_additional_directories([bad], str(worktree), base=str(tmp_path))
    assert caught.value.code == "ADD_DIR_INVALID"


def test_too_many(tmp_path: Path, worktree: Path) -> None:
    dirs = []
    for i in range(MAX_ADDITIONAL_DIRECTORIES + 1):
        (tmp_path / f"d{i}").mkdir()
        dirs.append(str(tmp_path / f"d{i}"))
    with pytest.raises(AdditionalDirectoryInvalid):
        resolve_additional_directories(dirs, str(worktree))
