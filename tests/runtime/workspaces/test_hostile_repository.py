"""A hostile repository: its config names an fsmonitor, clean/smudge/process filters,
textconv and external diff drivers, a pager and hooks, each of which would create a marker
file. Baton's worktree creation, snapshots, comparison, export and removal run none of them;
the same operations through plain git do (so the test can fail)."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from baton.errors import WorkspaceBaseDirty
from baton.runtime.workspaces.changes import compare_trees
from baton.runtime.workspaces.snapshot import FingerprintCache, repository_layout, take_snapshot
from baton.runtime.workspaces.worktrees import create_worktree, plan_worktree, remove_worktree
from workspace_repos import git, git_env, make_repo

ENV = dict(os.environ)


def _hostile(repo: Path, markers: Path) -> None:
    markers.mkdir()

    def touch(name: str) -> str:
        return f"touch {markers / name}"

    hooks = repo / "evil-hooks"
    hooks.mkdir()
    for hook in ("post-checkout", "reference-transaction", "post-index-change", "post-commit"):
        for folder in (hooks, repo / ".git" / "hooks"):
            script = folder / hook
            script.write_text(f"#!/bin/sh\n{touch('hook-' + hook)}\n")
            script.chmod(script.stat().st_mode | stat.S_IEXEC)
    config = {
        "core.fsmonitor": touch("fsmonitor"),
        "core.hooksPath": str(hooks),
        "core.pager": touch("pager"),
        "filter.evil.clean": f"{touch('clean')}; cat",
        "filter.evil.smudge": f"{touch('smudge')}; cat",
        "filter.evil.required": "true",
        "filter.proc.process": touch("process"),
        "diff.evil.textconv": f"{touch('textconv')}; cat",
        "diff.evil.command": touch("diff-command"),
        "diff.external": touch("diff-external"),
    }
    (repo / ".gitattributes").write_text("*.txt filter=evil diff=evil\n*.dat filter=proc\n")
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-q", "-m", "attributes")
    for key, value in config.items():
        git(repo, "config", key, value)


def _plain_git(repo: Path, *args: str) -> None:
    """git as a user would run it: the repository's config in force."""
    subprocess.run(["git", *args], cwd=repo, env=git_env(), capture_output=True, check=False)


def test_nothing_the_repository_config_names_runs(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "alpha\n", "b.dat": "data\n"})
    markers = tmp_path / "markers"
    _hostile(repo, markers)
    (repo / "a.txt").write_text("alpha\nmore\n")  # a dirty file: status must look at it
    plan = plan_worktree(str(repo), None, require_clean=False, environ=ENV)
    path, branch = create_worktree(plan, str(tmp_path / "wt"), "run-h", ENV)
    layout = repository_layout(path, ENV)
    assert set(layout.filters) == {"evil", "proc"}
    cache = FingerprintCache()
    before = take_snapshot(layout, cache, ENV)
    Path(path, "a.txt").write_text("changed\n")
    Path(path, "new.txt").write_text("new\n")
    Path(path, "b.dat").write_text("changed data\n")
    after = take_snapshot(layout, cache, ENV)
    comparison = compare_trees(layout, before.tree, after.tree, ENV, lambda text: text)
    assert {c.path for c in comparison.changes} == {"a.txt", "new.txt", "b.dat"}
    assert "+changed" in next(c.diff for c in comparison.changes if c.path == "a.txt")
    with pytest.raises(WorkspaceBaseDirty):  # dirty, as it should be; what matters is what ran
        plan_worktree(str(repo), None, require_clean=True, environ=ENV)
    remove_worktree(str(repo), path, branch, plan.base_commit, ENV)
    assert sorted(os.listdir(markers)) == []

    # The control: plain git with this config runs them (so the assertion above can fail).
    _plain_git(repo, "status")
    (repo / "a.txt").unlink()
    _plain_git(repo, "checkout", "--", "a.txt")
    ran = set(os.listdir(markers))
    assert {"fsmonitor", "smudge", "process"} <= ran, ran


def test_no_hook_runs(tmp_path: Path) -> None:
    """Hooks alone (a filter failing would stop plain git before its hooks): creating,
    snapshotting, comparing and removing a worktree run no hook; plain git runs them."""
    repo = make_repo(tmp_path / "repo")
    markers = tmp_path / "markers"
    markers.mkdir()
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for hook in ("post-checkout", "reference-transaction", "post-index-change"):
        script = hooks / hook
        script.write_text(f"#!/bin/sh\ntouch {markers / hook}\n")
        script.chmod(0o755)
    git(repo, "config", "core.hooksPath", str(hooks))
    plan = plan_worktree(str(repo), None, require_clean=True, environ=ENV)
    path, branch = create_worktree(plan, str(tmp_path / "wt"), "run-k", ENV)
    layout = repository_layout(path, ENV)
    cache = FingerprintCache()
    before = take_snapshot(layout, cache, ENV)
    Path(path, "a.txt").write_text("hooked?\n")
    after = take_snapshot(layout, cache, ENV)
    assert compare_trees(layout, before.tree, after.tree, ENV, str).changes
    remove_worktree(str(repo), path, branch, plan.base_commit, ENV)
    assert os.listdir(markers) == []
    _plain_git(repo, "worktree", "add", "-q", str(tmp_path / "plain"), "HEAD")
    assert {"post-checkout", "reference-transaction"} <= set(os.listdir(markers))
