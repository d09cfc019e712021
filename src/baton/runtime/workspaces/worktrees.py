"""Git worktrees for ``--workspace worktree``: checking the ask before any agent starts,
creating the worktree on a branch of its own, and removing it.

:func:`plan_worktree` raises, with a stable code and before anything is created:
WORKSPACE_NOT_GIT_REPOSITORY (the directory is in no git work tree),
WORKSPACE_BASE_NOT_FOUND (``--base`` names no commit) and WORKSPACE_BASE_DIRTY (a clean
checkout was asked for, ``--require-clean``, and it has changes). The worktree is created
under the worktree root (``[workspaces] root``, default ``<data dir>/worktrees``), outside the
repository, so its ``.git`` file and the main repository's ``.git`` lie outside the boundary
the permission policy gives the run (the policy never grants an edit under any ``.git``).

Every git command is hardened (:mod:`~baton.runtime.workspaces.git`): creating the worktree
runs no post-checkout hook and no smudge filter. Blocking: callers run these in a thread.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from baton.errors import (
    WorkspaceBaseDirty,
    WorkspaceBaseNotFound,
    WorkspaceError,
    WorkspaceNotGitRepository,
)
from baton.runtime.workspaces.git import filter_drivers, run_git

#: The directory, under the data directory, worktrees go to unless configured.
DEFAULT_WORKTREE_DIRNAME: Final = "worktrees"

#: The prefix of the branch of every worktree Baton creates (``baton/<workspace name>``).
BRANCH_PREFIX: Final = "baton/"

#: Characters of a workspace name (also its directory and branch); longer names are refused.
MAX_WORKSPACE_NAME_CHARS: Final = 120

_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


@dataclass(frozen=True, slots=True)
class WorktreePlan:
    """A checked ask: the repository's top directory, the base as asked and as a commit,
    and where the run's directory lies relative to the top (``--cwd`` in a subdirectory)."""

    repository: str
    base_ref: str
    base_commit: str
    subdirectory: str


def check_workspace_name(name: str) -> str:
    """``name`` when it can be a directory and a branch name, else WORKSPACE_ERROR."""
    if (
        not _NAME.fullmatch(name)
        or len(name) > MAX_WORKSPACE_NAME_CHARS
        or ".." in name
        or name.endswith((".lock", "."))
    ):
        raise WorkspaceError(f"{name!r} is not a usable workspace name", workspace=name)
    return name


def repository_top(directory: str, environ: Mapping[str, str]) -> str | None:
    """The top directory of the git work tree holding ``directory``, or None."""
    found = run_git(directory, ["rev-parse", "--show-toplevel"], environ=environ, check=False)
    if found.returncode != 0 or not found.text:
        return None
    return os.path.realpath(found.text)


def plan_worktree(
    directory: str,
    base: str | None,
    *,
    require_clean: bool,
    environ: Mapping[str, str],
) -> WorktreePlan:
    """Check a ``--workspace worktree`` ask (module docstring); nothing is created."""
    real = os.path.realpath(directory)
    top = repository_top(real, environ) if os.path.isdir(real) else None
    if top is None:
        raise WorkspaceNotGitRepository(
            f"{real} is not inside a git work tree: --workspace worktree needs a repository "
            "(run `git init`, or use --workspace DIR or none)"
        )
    ref = base or "HEAD"
    commit = run_git(
        top,
        ["rev-parse", "--verify", "-q", "--end-of-options", f"{ref}^{{commit}}"],
        environ=environ,
        check=False,
    )
    if commit.returncode != 0 or not commit.text:
        raise WorkspaceBaseNotFound(
            f"the base {ref!r} names no commit of {top}"
            + ("" if base else " (the repository has no commit yet; commit first or pass --base)")
        )
    if require_clean:
        status = run_git(
            top,
            ["status", "--porcelain=v1", "-z", "--untracked-files=normal", "--ignore-submodules"],
            filters=filter_drivers(top, environ),
            environ=environ,
        )
        if status.stdout.strip(b"\0"):
            count = len([e for e in status.stdout.split(b"\0") if e[:2].strip()])
            raise WorkspaceBaseDirty(
                f"{top} has uncommitted or untracked changes ({count} path(s)) and a clean "
                "base was asked for (--require-clean): commit or stash them first"
            )
    subdirectory = os.path.relpath(real, top)
    return WorktreePlan(top, ref, commit.text, "" if subdirectory == "." else subdirectory)


def create_worktree(
    plan: WorktreePlan, root: str, name: str, environ: Mapping[str, str]
) -> tuple[str, str]:
    """Create the worktree ``root/name`` on the new branch ``baton/<name>`` at the plan's
    base commit; its path and branch. WORKSPACE_ERROR when the directory or branch exists."""
    check_workspace_name(name)
    os.makedirs(root, mode=0o700, exist_ok=True)
    path = os.path.join(os.path.realpath(root), name)
    branch = BRANCH_PREFIX + name
    if os.path.lexists(path):
        raise WorkspaceError(f"{path} already exists", workspace=name)
    exists = run_git(
        plan.repository,
        ["rev-parse", "--verify", "-q", f"refs/heads/{branch}"],
        environ=environ,
        check=False,
    )
    if exists.returncode == 0:
        raise WorkspaceError(f"the branch {branch} already exists", workspace=name)
    run_git(
        plan.repository,
        ["worktree", "add", "--quiet", "-b", branch, path, plan.base_commit],
        filters=filter_drivers(plan.repository, environ),
        environ=environ,
    )
    return path, branch


def remove_worktree(
    repository: str,
    path: str,
    branch: str | None,
    base_commit: str | None,
    environ: Mapping[str, str],
) -> bool:
    """Remove the worktree at ``path`` (its files included); delete its branch when it still
    points at the base (nothing was committed there). True when the branch was deleted."""
    if os.path.isdir(repository):
        run_git(
            repository,
            ["worktree", "remove", "--force", "--force", path],
            environ=environ,
            check=False,
        )
        run_git(repository, ["worktree", "prune"], environ=environ, check=False)
    if os.path.lexists(path):
        _remove_tree(path)
    if branch is None or base_commit is None or not os.path.isdir(repository):
        return False
    tip = run_git(
        repository,
        ["rev-parse", "--verify", "-q", f"refs/heads/{branch}"],
        environ=environ,
        check=False,
    ).text
    if tip != base_commit:
        return False
    run_git(repository, ["branch", "-D", branch], environ=environ, check=False)
    return True


def _remove_tree(path: str) -> None:
    shutil.rmtree(path)
