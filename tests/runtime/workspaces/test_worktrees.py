"""Creating a worktree, and the stable errors before any agent starts."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from baton.errors import (
    WorkspaceBaseDirty,
    WorkspaceBaseNotFound,
    WorkspaceError,
    WorkspaceNotGitRepository,
)
from baton.runtime.workspaces.worktrees import (
    check_workspace_name,
    create_worktree,
    plan_worktree,
    remove_worktree,
)
from workspace_repos import git, make_repo

ENV = dict(os.environ)


def test_a_worktree_from_a_base_ref_on_its_own_branch(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    first = git(repo, "rev-parse", "HEAD").strip()
    (repo / "a.txt").write_text("changed on main\n")
    git(repo, "commit", "-qam", "second")
    plan = plan_worktree(str(repo), first, require_clean=True, environ=ENV)
    assert plan.base_commit == first and plan.base_ref == first
    path, branch = create_worktree(plan, str(tmp_path / "wt"), "run-1", ENV)
    assert branch == "baton/run-1"
    assert Path(path, "a.txt").read_text() == "alpha\n"  # the base, not main's tip
    assert git(repo, "rev-parse", "baton/run-1").strip() == first
    # The worktree's .git is a file pointing into the main repository, outside the worktree
    # root only through it: the policy never grants an edit under any .git.
    assert Path(path, ".git").is_file()
    assert not str(repo).startswith(path)
    assert remove_worktree(str(repo), path, branch, first, ENV) is True
    assert not Path(path).exists()
    assert git(repo, "branch", "--list", "baton/run-1").strip() == ""


def test_a_subdirectory_cwd_is_kept(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"pkg/mod.py": "x = 1\n"})
    plan = plan_worktree(str(repo / "pkg"), None, require_clean=False, environ=ENV)
    assert plan.subdirectory == "pkg" and plan.base_ref == "HEAD"


def test_not_a_git_repository(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    with pytest.raises(WorkspaceNotGitRepository) as caught:
        plan_worktree(str(tmp_path / "plain"), None, require_clean=False, environ=ENV)
    assert caught.value.code == "WORKSPACE_NOT_GIT_REPOSITORY"


def test_a_missing_base_ref(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    with pytest.raises(WorkspaceBaseNotFound) as caught:
        plan_worktree(str(repo), "no-such-branch", require_clean=False, environ=ENV)
    assert caught.value.code == "WORKSPACE_BASE_NOT_FOUND"
    # An option-looking ref is a ref, never an option.
    with pytest.raises(WorkspaceBaseNotFound):
        plan_worktree(str(repo), "--output=/tmp/x", require_clean=False, environ=ENV)


def test_a_repository_without_commits_has_no_base(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    git(tmp_path / "empty", "init", "-q")
    with pytest.raises(WorkspaceBaseNotFound):
        plan_worktree(str(tmp_path / "empty"), None, require_clean=False, environ=ENV)


@pytest.mark.parametrize("dirt", ["modified", "untracked"])
def test_a_dirty_base_when_a_clean_one_was_asked(tmp_path: Path, dirt: str) -> None:
    repo = make_repo(tmp_path / "repo")
    if dirt == "modified":
        (repo / "a.txt").write_text("dirty\n")
    else:
        (repo / "new.txt").write_text("new\n")
    plan_worktree(str(repo), None, require_clean=False, environ=ENV)  # not asked: fine
    with pytest.raises(WorkspaceBaseDirty) as caught:
        plan_worktree(str(repo), None, require_clean=True, environ=ENV)
    assert caught.value.code == "WORKSPACE_BASE_DIRTY"


def test_an_existing_branch_or_directory_is_refused(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    plan = plan_worktree(str(repo), None, require_clean=False, environ=ENV)
    git(repo, "branch", "baton/taken")
    with pytest.raises(WorkspaceError, match="already exists"):
        create_worktree(plan, str(tmp_path / "wt"), "taken", ENV)
    (tmp_path / "wt" / "there").mkdir(parents=True)
    with pytest.raises(WorkspaceError, match="already exists"):
        create_worktree(plan, str(tmp_path / "wt"), "there", ENV)


@pytest.mark.parametrize("name", ["", "../x", "a/b", "-x", "x.lock", "a..b", "x" * 121])
def test_unusable_names(name: str) -> None:
    with pytest.raises(WorkspaceError):
        check_workspace_name(name)
