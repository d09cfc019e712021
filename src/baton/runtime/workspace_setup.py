"""A run's workspace, before anything starts: what it will be (:func:`workspace_ask`: the
worktree to create, checked, or the recorded workspace to use), made or activated once the
run's row exists (:func:`open_workspace`), and the view of it a run shows
(:func:`workspace_view`; docs/workspaces.md)."""

from __future__ import annotations

from typing import Any

from baton.runtime.turns.request import RunRequest
from baton.runtime.workspaces.tracking import ActiveWorkspace, WorkspaceTracker
from baton.runtime.workspaces.worktrees import WorktreePlan
from baton.store import Store
from baton.store.models import WorkspaceRecord

__all__ = ["open_workspace", "workspace_ask", "workspace_view"]


async def workspace_ask(
    store: Store, workspaces: WorkspaceTracker, request: RunRequest, asked: str | None, cwd: str
) -> tuple[WorktreePlan | None, WorkspaceRecord | None]:
    """What the run's workspace will be, checked before anything starts: the worktree to
    create (its ask checked: not a repository, no such base, a dirty base), or the
    recorded workspace to use (the session's own, else a Baton worktree holding the
    directory; refused when another session's or held by another run), or neither."""
    # A session's workspace (a fleet session's worktree, made by its first turn) is kept.
    recorded = store.session_workspace(request.session) if request.session is not None else None
    plan = None
    if recorded is None:
        plan = await workspaces.plan(asked, cwd, request.base, request.require_clean)
    if recorded is None and plan is None:
        recorded = store.workspace_at(cwd)
    if recorded is not None:
        workspaces.check_use(store, recorded, request.session)
    return plan, recorded


async def open_workspace(
    store: Store,
    workspaces: WorkspaceTracker,
    run_id: str,
    asked: str | None,
    cwd: str,
    plan: WorktreePlan | None,
    recorded: WorkspaceRecord | None,
    session: str | None,
) -> ActiveWorkspace | None:
    """The run's workspace: a worktree created for it (named after the run, or
    ``session-<name>`` for a session's first turn), the recorded one holding its
    directory, a directory asked for (recorded now), or None."""
    if plan is not None:
        recorded = await workspaces.create(
            store,
            plan,
            run_id if session is None else f"session-{session}",
            created_by=run_id,
            session_name=session,
        )
    elif recorded is None and asked is not None:
        recorded = await workspaces.record_directory(store, cwd, run_id, created_by=run_id)
    return None if recorded is None else await workspaces.activate(recorded)


def workspace_view(active: ActiveWorkspace) -> dict[str, Any]:
    """The run's workspace as its handle, its result and its ``run_started`` event show it."""
    record = active.record
    return {
        "name": record.name,
        "kind": record.kind,
        "path": record.path,
        "branch": record.branch,
        "baseCommit": record.base_commit,
        "compared": active.layout is not None,
    }
