"""Workspaces in a run: the ``--workspace`` ask turned into a workspace (created, or found by
path for a session's later turns), its snapshot before the turn, and after the turn the
comparison recorded as the run's ``workspace_changes`` item.

:class:`WorkspaceTracker` is held by the runtime (one per ``Runtime``): it knows the worktree
root and keeps each workspace's :class:`~baton.runtime.workspaces.snapshot.FingerprintCache`
(no global state). Its coroutines run git and file I/O in a worker thread.

Cancellation: cancelling a coroutine here while its thread works leaves the thread to finish
(it writes only git objects and, for creation, the worktree and its record); nothing of the
comparison is recorded then, and ``baton recover`` compares again from the recorded
snapshot.
"""

from __future__ import annotations

import asyncio
import os
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from baton.errors import WorkspaceError, WorkspaceInUse
from baton.runtime.workspaces.changes import compare_trees, unhashed_changes
from baton.runtime.workspaces.git import run_git
from baton.runtime.workspaces.reported import match_reports, reported_paths
from baton.runtime.workspaces.snapshot import (
    FingerprintCache,
    RepositoryLayout,
    Snapshot,
    base_tree,
    repository_layout,
    take_snapshot,
)
from baton.runtime.workspaces.worktrees import (
    WorktreePlan,
    create_worktree,
    plan_worktree,
    repository_top,
)
from baton.store import Store
from baton.store.models import NewItem, WorkspaceRecord
from baton.store.owner import current_host

#: The ``--workspace`` values that ask for a sandbox Baton cannot provide: handed to the
#: execution settings, which refuse them (EXECUTION_SETTING_UNSUPPORTED), never a directory.
SANDBOX_WORKSPACE_SETTINGS: Final = frozenset(
    {"workspace-write", "read-only", "readonly", "restricted", "sandbox"}
)

#: The ``--workspace`` value that is today's behaviour (as ``none``) in the execution
#: settings' spelling.
FULL_ACCESS: Final = "danger-full-access"

#: Workspaces whose fingerprint cache a runtime keeps (the most recently used). Protects a
#: long-lived service from a cache per run it ever ran (each holds a stat and blob id per
#: file and a private index file); an evicted workspace's next snapshot reads every file.
MAX_CACHED_WORKSPACES: Final = 32

#: The kind of the run's item that carries a comparison.
ITEM_KIND: Final = "workspace_changes"


def split_workspace_flag(value: str | None) -> tuple[str | None, str]:
    """``--workspace VALUE`` as (the workspace ask, the execution setting): ``worktree`` or a
    directory ask for a workspace; ``none`` (and ``danger-full-access``) for none; a
    sandbox setting goes to the execution settings to be refused."""
    if value is None or value in ("none", FULL_ACCESS):
        return None, FULL_ACCESS
    if value in SANDBOX_WORKSPACE_SETTINGS:
        return None, value
    return value, FULL_ACCESS


@dataclass
class ActiveWorkspace:
    """The workspace of one run: its record, its repository layout (None: a directory in no
    git work tree, not compared) and the run's working directory in it."""

    record: WorkspaceRecord
    layout: RepositoryLayout | None
    cwd: str
    cache: FingerprintCache = field(default_factory=FingerprintCache)


class WorkspaceTracker:
    """Creates, finds and compares workspaces for a runtime (module docstring)."""

    def __init__(self, root: str, environ: Mapping[str, str]) -> None:
        #: Where worktrees are created (``[workspaces] root``, else ``<data dir>/worktrees``).
        self.root = root
        self.environ = dict(environ)
        # The fingerprint caches of the workspaces used last, oldest first (bounded).
        self._caches: OrderedDict[str, FingerprintCache] = OrderedDict()

    # --- before the run exists -------------------------------------------------------------

    async def plan(
        self, workspace: str | None, cwd: str, base: str | None, require_clean: bool
    ) -> WorktreePlan | None:
        """Check a ``worktree`` ask (its errors come before any agent starts); None for any
        other ask. ``--base``/``--require-clean`` without a worktree are usage errors."""
        if workspace != "worktree":
            if base is not None or require_clean:
                raise WorkspaceError("--base and --require-clean go with --workspace worktree")
            return None
        return await asyncio.to_thread(
            plan_worktree, cwd, base, require_clean=require_clean, environ=self.environ
        )

    # --- opening ---------------------------------------------------------------------------

    async def create(
        self,
        store: Store,
        plan: WorktreePlan,
        name: str,
        *,
        created_by: str | None,
        session_name: str | None = None,
    ) -> WorkspaceRecord:
        """Create the worktree ``name`` from ``plan`` and record it."""
        path, branch = await asyncio.to_thread(create_worktree, plan, self.root, name, self.environ)
        return store.create_workspace(
            name,
            "worktree",
            path,
            repository=plan.repository,
            base_ref=plan.base_ref,
            base_commit=plan.base_commit,
            branch=branch,
            subdirectory=plan.subdirectory,
            session_name=session_name,
            created_by=created_by,
        )

    async def record_directory(
        self, store: Store, directory: str, name: str, *, created_by: str | None
    ) -> WorkspaceRecord:
        """Record ``--workspace DIR`` (compared when it lies in a git work tree, from its
        HEAD)."""
        top = await asyncio.to_thread(repository_top, directory, self.environ)
        head = None
        if top is not None:
            layout = await asyncio.to_thread(repository_layout, top, self.environ)
            head = (await asyncio.to_thread(_head, layout, self.environ)) or None
        return store.create_workspace(
            name,
            "dir",
            top or directory,
            repository=top,
            base_ref="HEAD" if head else None,
            base_commit=head,
            subdirectory=os.path.relpath(directory, top) if top and directory != top else "",
            created_by=created_by,
        )

    def check_use(self, store: Store, record: WorkspaceRecord, session: str | None) -> None:
        """Refuse a run that would share ``record`` with another run: one of another session
        (or of none, when the workspace is a session's), or a run's workspace still held;
        a workspace of another host is not here to use."""
        if record.host != current_host():
            raise WorkspaceInUse(
                f"workspace {record.name} lives on host {record.host}", workspace=record.name
            )
        if record.session_name is not None:
            if record.session_name != session:
                raise WorkspaceInUse(
                    f"{record.path} is the workspace of session {record.session_name}; "
                    "run in that session or use another workspace",
                    workspace=record.name,
                )
            return
        users = store.workspace_users(record.name)
        if users:
            held = ", ".join(f"{run} ({status})" for run, status in users)
            raise WorkspaceInUse(
                f"{record.path} is held by {held}; concurrent runs never share a worktree",
                workspace=record.name,
            )

    async def activate(self, record: WorkspaceRecord) -> ActiveWorkspace:
        """The run's view of ``record`` (its layout read, its cache kept per workspace)."""
        layout = None
        if record.repository is not None and os.path.isdir(record.path):
            layout = await asyncio.to_thread(repository_layout, record.path, self.environ)
        cwd = os.path.join(record.path, record.subdirectory) if record.subdirectory else record.path
        cache = self._caches.pop(record.name, None) or FingerprintCache()
        self._caches[record.name] = cache
        while len(self._caches) > MAX_CACHED_WORKSPACES:
            self._caches.popitem(last=False)  # its next snapshot reads every file again
        return ActiveWorkspace(record, layout, cwd, cache)

    # --- comparing -------------------------------------------------------------------------

    async def before_turn(
        self, store: Store, active: ActiveWorkspace, run_id: str
    ) -> Snapshot | None:
        """Record the state the run's turn starts from (None: not compared)."""
        if active.layout is None:
            return None
        snapshot = await asyncio.to_thread(take_snapshot, active.layout, active.cache, self.environ)
        store.record_workspace_before(run_id, active.record.name, snapshot.to_json())
        return snapshot

    async def after_turn(
        self,
        store: Store,
        active: ActiveWorkspace,
        run_id: str,
        before: Snapshot,
        *,
        tool_calls: Mapping[str, Mapping[str, Any]],
        permissions: Sequence[Mapping[str, Any]],
        redact: Callable[[str], str],
        provisional: bool = False,
        at_recover: bool = False,
    ) -> dict[str, Any]:
        """Compare the workspace now with ``before`` and with its base, match the turn's
        reports, record the after-snapshot; the ``workspace_changes`` item's content."""
        layout = active.layout
        assert layout is not None
        after = await asyncio.to_thread(take_snapshot, layout, active.cache, self.environ)
        content = await asyncio.to_thread(
            self._compare, active, before, after, tool_calls, permissions, redact
        )
        content["provisional"] = provisional
        content["atRecover"] = at_recover
        store.record_workspace_after(run_id, after.to_json())
        return content

    async def compare_at_recover(
        self, store: Store, run_id: str, redact: Callable[[str], str]
    ) -> dict[str, Any] | None:
        """For a RECOVERY_REQUIRED run: compare its workspace now with the snapshot its turn
        started from and record the item (``atRecover``), matched with the tool calls the
        store holds. None when the run has no snapshot on this host, or nothing changed since
        the last recorded comparison (no item is added twice for one state)."""
        used = store.workspace_run(run_id)
        if used is None:
            return None
        record = store.find_workspace(used.workspace)
        if record is None or record.host != current_host() or record.state != "ACTIVE":
            return None
        active = await self.activate(record)
        if active.layout is None:
            return None
        tool_calls: dict[str, dict[str, Any]] = {}
        for item in store.list_items(run_id):
            content = item.content if isinstance(item.content, dict) else {}
            if item.kind == "tool_call" and isinstance(content.get("toolCallId"), str):
                paths = [p for p in content.get("paths") or () if isinstance(p, str)]
                tool_calls[content["toolCallId"]] = {"locations": [{"path": p} for p in paths]}
        before = Snapshot.from_json(used.before)
        content = await self.after_turn(
            store,
            active,
            run_id,
            before,
            tool_calls=tool_calls,
            permissions=[],
            redact=redact,
            at_recover=True,
        )
        if used.after is not None and used.after.get("tree") == content["treeAfter"]:
            return None
        store.append_items(run_id, [NewItem(ITEM_KIND, content)])
        return content

    def _compare(
        self,
        active: ActiveWorkspace,
        before: Snapshot,
        after: Snapshot,
        tool_calls: Mapping[str, Mapping[str, Any]],
        permissions: Sequence[Mapping[str, Any]],
        redact: Callable[[str], str],
    ) -> dict[str, Any]:
        layout = active.layout
        assert layout is not None
        record = active.record
        turn = compare_trees(layout, before.tree, after.tree, self.environ, redact)
        turn.changes.extend(unhashed_changes(before, after))
        match_reports(turn, reported_paths(tool_calls, permissions, cwd=active.cwd, top=layout.top))
        base = compare_trees(
            layout,
            base_tree(layout, record.base_commit, self.environ),
            after.tree,
            self.environ,
            redact,
        )
        base.changes.extend(unhashed_changes(None, after))
        truncated = sorted({*before.truncated, *after.truncated, *turn.truncated})
        return {
            "workspace": record.name,
            "kind": record.kind,
            "path": record.path,
            "branch": record.branch,
            "baseRef": record.base_ref,
            "baseCommit": record.base_commit,
            "headBefore": before.head,
            "headAfter": after.head,
            "treeBefore": before.tree,
            "treeAfter": after.tree,
            "filesCompared": after.files,
            "filesSeen": after.files_seen,
            "hashedBytes": after.hashed_bytes,
            "counts": turn.counts(),
            "unreported": [c.path for c in turn.changes if c.unreported],
            "truncated": truncated,
            "turn": turn.to_json(),
            "base": base.to_json(),
        }


def _head(layout: RepositoryLayout, environ: Mapping[str, str]) -> str:
    return run_git(
        layout.top, ["rev-parse", "--verify", "-q", "HEAD^{commit}"], environ=environ, check=False
    ).text


def summary_of(content: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a ``workspace_changes`` item a result carries (``workspaceChanges``):
    the counts, the files without their diffs, the unreported paths and the markers."""
    turn = content.get("turn") or {}
    return {
        "workspace": content.get("workspace"),
        "path": content.get("path"),
        "branch": content.get("branch"),
        "counts": content.get("counts"),
        "unreported": list(content.get("unreported") or ()),
        "truncated": list(content.get("truncated") or ()),
        "provisional": bool(content.get("provisional")),
        "files": [{k: v for k, v in f.items() if k != "diff"} for f in turn.get("files") or ()],
        "baseCounts": (content.get("base") or {}).get("counts"),
    }


def patch_of(content: Mapping[str, Any], side: str) -> tuple[str, bool]:
    """The patch of a ``workspace_changes`` item in git's format (``side``: ``turn``, the
    turn's changes, or ``base``, everything since the base), and whether it is whole (no
    bound cut a diff or left a file out)."""
    comparison = content.get(side) or {}
    files = comparison.get("files") or ()
    whole = not comparison.get("truncated") and not comparison.get("changesOmitted")
    whole = whole and not any(f.get("diffTruncated") for f in files)
    return "".join(str(f.get("diff") or "") for f in files), whole
