"""A workspace's life after its runs: what it holds now, removing it, collecting the ones
nothing needs, and getting its changes out (a branch, a patch).

Nothing is deleted silently: :func:`remove_workspace` refuses (WORKSPACE_IN_USE) a
workspace held by a run that is active or RECOVERY_REQUIRED or by a session that is ACTIVE
or RECOVERY_REQUIRED, and (WORKSPACE_UNRECORDED_CHANGES) one whose files differ from the
last state a turn recorded, unless forced; a ``dir`` workspace (the user's own directory) is
only forgotten, never deleted; a workspace of another host is refused (its files are there).

Blocking (subprocess and file I/O): the CLI calls these directly; async callers use a thread.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from baton.errors import (
    WorkspaceError,
    WorkspaceInUse,
    WorkspaceNotFound,
    WorkspaceUnrecordedChanges,
)
from baton.runtime.workspaces.changes import tree_patch
from baton.runtime.workspaces.git import run_git
from baton.runtime.workspaces.snapshot import (
    FingerprintCache,
    RepositoryLayout,
    base_tree,
    commit_tree,
    repository_layout,
    take_snapshot,
)
from baton.runtime.workspaces.worktrees import remove_worktree
from baton.store import Store
from baton.store.models import WorkspaceRecord
from baton.store.owner import current_host

#: Session statuses that hold their workspace.
HOLDING_SESSION_STATUSES = frozenset({"ACTIVE", "RECOVERY_REQUIRED"})


@dataclass
class WorkspaceState:
    """What a workspace holds now: the runs and session holding it, whether its files
    differ from the last recorded state, and whether it is on this host and on disk."""

    record: WorkspaceRecord
    users: list[tuple[str, str]] = field(default_factory=list)
    session_status: str | None = None
    unrecorded: bool | None = None
    exists: bool = False
    here: bool = True

    @property
    def in_use(self) -> bool:
        """Held by a run or a session (module docstring)."""
        return bool(self.users) or self.session_status in HOLDING_SESSION_STATUSES

    def to_json(self) -> dict[str, Any]:
        """The state as ``baton workspace show --json`` prints it."""
        return {
            **self.record.to_json(),
            "inUse": self.in_use,
            "heldBy": [{"runId": run, "status": status} for run, status in self.users],
            "sessionStatus": self.session_status,
            "unrecordedChanges": self.unrecorded,
            "exists": self.exists,
            "onThisHost": self.here,
        }


def get_workspace(store: Store, name: str) -> WorkspaceRecord:
    """The recorded workspace ``name`` (WORKSPACE_NOT_FOUND)."""
    record = store.find_workspace(name)
    if record is None:
        raise WorkspaceNotFound(f"no workspace named {name!r} (see `baton workspace list`)")
    return record


def last_recorded_tree(store: Store, record: WorkspaceRecord) -> str | None:
    """The tree of the last state a turn recorded (its after-snapshot), None when no turn
    was compared."""
    for run in reversed(store.workspace_runs(record.name)):
        if run.after is not None:
            return str(run.after.get("tree"))
    return None


def workspace_state(
    store: Store, record: WorkspaceRecord, environ: Mapping[str, str]
) -> WorkspaceState:
    """The workspace's state now (reads its files when they are on this host)."""
    state = WorkspaceState(record, users=store.workspace_users(record.name))
    if record.session_name is not None:
        conversation = store.find_conversation(record.session_name)
        state.session_status = conversation.status if conversation is not None else None
    state.here = record.host == current_host()
    state.exists = state.here and os.path.isdir(record.path)
    if record.state == "ACTIVE" and state.exists and record.repository is not None:
        state.unrecorded = _differs_from_recorded(store, record, environ)
    return state


def _differs_from_recorded(
    store: Store, record: WorkspaceRecord, environ: Mapping[str, str]
) -> bool:
    layout = repository_layout(record.path, environ)
    now = take_snapshot(layout, FingerprintCache(), environ)
    recorded = last_recorded_tree(store, record)
    if recorded is None:
        if record.kind == "dir":
            return False  # the user's own directory: nothing Baton recorded to lose
        recorded = base_tree(layout, record.base_commit, environ)
    return now.tree != recorded or bool(now.not_hashed)


def remove_workspace(
    store: Store, name: str, environ: Mapping[str, str], *, force: bool = False
) -> dict[str, Any]:
    """Remove the workspace (module docstring): what was done."""
    record = get_workspace(store, name)
    if record.state != "ACTIVE":
        raise WorkspaceError(f"workspace {name} was removed already", workspace=name)
    state = workspace_state(store, record, environ)
    if not state.here:
        raise WorkspaceError(
            f"workspace {name} lives on host {record.host}: remove it there", workspace=name
        )
    if state.in_use and not force:
        held = ", ".join(f"{run} ({status})" for run, status in state.users) or (
            f"session {record.session_name} ({state.session_status})"
        )
        raise WorkspaceInUse(
            f"workspace {name} is in use by {held}; settle it first (or --force)",
            workspace=name,
        )
    if state.unrecorded and not force:
        raise WorkspaceUnrecordedChanges(
            f"workspace {name} holds changes no turn recorded; export them "
            f"(`baton workspace export {name} --patch FILE`) or remove with --force",
            workspace=name,
        )
    branch_deleted = False
    if record.kind == "worktree" and record.repository is not None:
        branch_deleted = remove_worktree(
            record.repository, record.path, record.branch, record.base_commit, environ
        )
    store.mark_workspace_removed(name)
    return {
        "name": name,
        "removed": record.kind == "worktree",
        "forgotten": True,
        "path": record.path,
        "branch": record.branch,
        "branchDeleted": branch_deleted,
        "forced": force and (state.in_use or bool(state.unrecorded)),
    }


def collectable(state: WorkspaceState, store: Store) -> str | None:
    """Why ``gc`` leaves this workspace (None: it may be collected): in use, holding
    unrecorded changes, a session that may still continue, another host's."""
    record = state.record
    if not state.here:
        return f"on host {record.host}"
    if state.in_use:
        return "in use"
    if record.session_name is not None and state.session_status not in (None, "CLOSED"):
        return f"session {record.session_name} is {state.session_status}"
    if state.unrecorded:
        return "holds unrecorded changes"
    return None


def collect_workspaces(
    store: Store, environ: Mapping[str, str], *, force: bool = False, dry_run: bool = False
) -> dict[str, Any]:
    """``baton workspace gc``: remove every ACTIVE workspace of this host nothing needs (its
    runs settled, its session closed or gone, no unrecorded changes; ``force`` removes one
    holding unrecorded changes too, never one in use). What was removed and what was kept."""
    removed: list[dict[str, Any]] = []
    kept: list[dict[str, str]] = []
    for record in store.list_workspaces():
        state = workspace_state(store, record, environ)
        reason = collectable(state, store)
        if reason == "holds unrecorded changes" and force:
            reason = None
        if reason is not None:
            kept.append({"name": record.name, "reason": reason})
            continue
        if dry_run:
            removed.append({"name": record.name, "path": record.path, "dryRun": True})
            continue
        removed.append(remove_workspace(store, record.name, environ, force=force))
    return {"removed": removed, "kept": kept}


def _current_tree(record: WorkspaceRecord, environ: Mapping[str, str]) -> tuple[Any, str]:
    if not os.path.isdir(record.path) or record.repository is None:
        raise WorkspaceError(
            f"workspace {record.name} is not a git work tree on this host", workspace=record.name
        )
    layout = repository_layout(record.path, environ)
    return layout, take_snapshot(layout, FingerprintCache(), environ).tree


def export_patch(store: Store, name: str, environ: Mapping[str, str]) -> str:
    """The workspace's whole change since its base, now, as a patch ``git apply`` takes
    (computed from its files, not from a recorded item, so no diff bound cuts it)."""
    record = get_workspace(store, name)
    layout, tree = _current_tree(record, environ)
    base = base_tree(layout, record.base_commit, environ)
    return tree_patch(layout, base, tree, environ).decode("utf-8", "surrogateescape")


#: The identity of the commits Baton writes itself (export, a fork's base): never the user's.
BATON_IDENTITY: Final = {
    "GIT_AUTHOR_NAME": "Baton",
    "GIT_AUTHOR_EMAIL": "baton@localhost",
    "GIT_COMMITTER_NAME": "Baton",
    "GIT_COMMITTER_EMAIL": "baton@localhost",
}


def _commit_tree(
    layout: RepositoryLayout, tree: str, message: str, environ: Mapping[str, str]
) -> tuple[str, str | None]:
    """A commit of ``tree`` on the worktree's HEAD (none before its first commit), written
    without touching its index, branch or hooks; the commit and its parent."""
    head = run_git(
        layout.top, ["rev-parse", "--verify", "-q", "HEAD^{commit}"], environ=environ, check=False
    ).text
    args = ["commit-tree", tree, "-m", message]
    if head:
        args[2:2] = ["-p", head]
    commit = run_git(layout.top, args, environ=environ, extra_env=BATON_IDENTITY).text
    return commit, head or None


def current_state_commit(record: WorkspaceRecord, environ: Mapping[str, str]) -> str:
    """A commit of the workspace's files as they are now (uncommitted and untracked changes
    included, ignored files not; bounded like a snapshot), on its HEAD: the base a fork's
    worktree starts from (`baton session fork`). Its HEAD itself when nothing changed.
    WORKSPACE_ERROR when the workspace is not a git work tree on this host. Blocking (git
    and file I/O): run it in a thread."""
    layout, tree = _current_tree(record, environ)
    head = run_git(
        layout.top, ["rev-parse", "--verify", "-q", "HEAD^{commit}"], environ=environ, check=False
    ).text
    if head and commit_tree(layout, head, environ) == tree:
        return head
    message = f"Baton: the state of workspace {record.name}"
    commit, _parent = _commit_tree(layout, tree, message, environ)
    return commit


def export_branch(
    store: Store, name: str, branch: str, environ: Mapping[str, str], *, force: bool = False
) -> dict[str, Any]:
    """Commit the workspace's files as they are now on ``branch`` of its repository (parent:
    the worktree's HEAD), without touching its index or running a hook. WORKSPACE_ERROR when
    the branch exists (unless ``force``) or its name is not a valid branch name."""
    record = get_workspace(store, name)
    layout, tree = _current_tree(record, environ)
    valid = run_git(
        layout.top, ["check-ref-format", "--branch", branch], environ=environ, check=False
    )
    if valid.returncode != 0:
        raise WorkspaceError(f"{branch!r} is not a valid branch name", workspace=name)
    ref = f"refs/heads/{branch}"
    exists = run_git(layout.top, ["rev-parse", "--verify", "-q", ref], environ=environ, check=False)
    if exists.returncode == 0 and not force:
        raise WorkspaceError(f"the branch {branch} exists (--force replaces it)", workspace=name)
    commit, head = _commit_tree(layout, tree, f"Baton workspace {name}", environ)
    run_git(layout.top, ["update-ref", ref, commit], environ=environ)
    return {"name": name, "branch": branch, "commit": commit, "parent": head or None}
