"""The ``workspaces`` and ``workspace_runs`` tables: each workspace Baton created or used, and
each run's snapshot before and after its turn (docs/workspaces.md).

A workspace is ACTIVE until ``baton workspace rm`` or ``gc`` removes it (REMOVED, the row
kept: a run's recorded changes keep naming it). ``workspace_runs`` holds the two sides of a
run's comparison as JSON (HEAD, tree, bounds reached), so ``recover`` and any host reading a
shared store can tell what a turn started from.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from baton.errors import RecordNotFound, StoreConflict
from baton.store.database import StoreDatabase, check_in
from baton.store.models import UNSETTLED_WORKSPACE_RUN_STATUSES, WorkspaceRecord, WorkspaceRun
from baton.store.owner import current_host

_COLUMNS = (
    "name, kind, path, repository, base_ref, base_commit, branch, subdirectory, "
    "session_name, created_by, host, state, created_at, updated_at"
)


def _record(row: Any) -> WorkspaceRecord:
    return WorkspaceRecord(*row)


class WorkspaceRecords(StoreDatabase):
    """Workspaces and their runs' snapshots. Mixed into :class:`baton.store.Store`."""

    def create_workspace(
        self,
        name: str,
        kind: str,
        path: str,
        *,
        repository: str | None = None,
        base_ref: str | None = None,
        base_commit: str | None = None,
        branch: str | None = None,
        subdirectory: str = "",
        session_name: str | None = None,
        created_by: str | None = None,
    ) -> WorkspaceRecord:
        """Record an ACTIVE workspace of this host. StoreConflict when the name is taken."""
        check_in(kind, ("worktree", "dir"), "workspace kind")
        now = self._now()
        with self._tx(f"workspace:{name}") as conn:
            if conn.execute("SELECT 1 FROM workspaces WHERE name = ?", (name,)).fetchone():
                raise StoreConflict(f"a workspace named {name!r} exists")
            conn.execute(
                f"INSERT INTO workspaces ({_COLUMNS}) VALUES "
                "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'ACTIVE', ?, ?)",
                (
                    name,
                    kind,
                    path,
                    repository,
                    base_ref,
                    base_commit,
                    branch,
                    subdirectory,
                    session_name,
                    created_by,
                    current_host(),
                    now,
                    now,
                ),
            )
        return self.get_workspace(name)

    def find_workspace(self, name: str) -> WorkspaceRecord | None:
        """The workspace named ``name``, or None."""
        row = self._conn.execute(
            f"SELECT {_COLUMNS} FROM workspaces WHERE name = ?", (name,)
        ).fetchone()
        return None if row is None else _record(row)

    def get_workspace(self, name: str) -> WorkspaceRecord:
        """The workspace named ``name``; RecordNotFound when there is none."""
        found = self.find_workspace(name)
        if found is None:
            raise RecordNotFound(f"no workspace {name!r}")
        return found

    def list_workspaces(self, *, include_removed: bool = False) -> list[WorkspaceRecord]:
        """Workspaces, newest first (ACTIVE ones unless ``include_removed``)."""
        where = "" if include_removed else "WHERE state = 'ACTIVE' "
        return [
            _record(row)
            for row in self._conn.execute(
                f"SELECT {_COLUMNS} FROM workspaces {where}ORDER BY created_at DESC, name"
            )
        ]

    def workspace_at(self, path: str) -> WorkspaceRecord | None:
        """The ACTIVE worktree Baton made on this host whose directory is ``path`` or holds
        it (the innermost), or None. A ``dir`` workspace (a user's own directory) is never
        found by path: a later run there is today's plain run."""
        best: WorkspaceRecord | None = None
        host = current_host()
        for record in self.list_workspaces():
            if record.host != host or record.kind != "worktree":
                continue
            root = record.path.rstrip("/")
            if (path == root or path.startswith(root + "/")) and (
                best is None or len(root) > len(best.path)
            ):
                best = record
        return best

    def session_workspace(self, session_name: str) -> WorkspaceRecord | None:
        """The ACTIVE workspace of the Baton session ``session_name``, or None."""
        row = self._conn.execute(
            f"SELECT {_COLUMNS} FROM workspaces WHERE session_name = ? AND state = 'ACTIVE'",
            (session_name,),
        ).fetchone()
        return None if row is None else _record(row)

    def set_workspace_session(self, name: str, session_name: str) -> None:
        """Give the workspace to the session ``session_name`` (its turns share it)."""
        with self._tx() as conn:
            conn.execute(
                "UPDATE workspaces SET session_name = ?, updated_at = ? WHERE name = ?",
                (session_name, self._now(), name),
            )

    def mark_workspace_removed(self, name: str) -> None:
        """ACTIVE -> REMOVED (the row stays: recorded changes keep naming it)."""
        with self._tx() as conn:
            conn.execute(
                "UPDATE workspaces SET state = 'REMOVED', updated_at = ? WHERE name = ?",
                (self._now(), name),
            )

    # --- runs ------------------------------------------------------------------------------

    def record_workspace_before(
        self, run_id: str, workspace: str, before: Mapping[str, Any]
    ) -> None:
        """The snapshot a run's turn starts from."""
        now = self._now()
        with self._tx() as conn:
            self._fence(conn, run_id)  # the run's row, locked; this process's claim checked
            conn.execute(
                "INSERT INTO workspace_runs (run_id, workspace, before_state, after_state, "
                "created_at, updated_at) VALUES (?, ?, ?, NULL, ?, ?)",
                (run_id, workspace, orjson.dumps(dict(before)).decode(), now, now),
            )

    def record_workspace_after(self, run_id: str, after: Mapping[str, Any]) -> None:
        """The snapshot the run's comparison ended on."""
        with self._tx() as conn:
            self._fence(conn, run_id)  # the run's row, locked; this process's claim checked
            updated = conn.execute(
                "UPDATE workspace_runs SET after_state = ?, updated_at = ? WHERE run_id = ?",
                (orjson.dumps(dict(after)).decode(), self._now(), run_id),
            )
            if updated.rowcount == 0:
                raise RecordNotFound(f"run {run_id} has no workspace snapshot")

    def workspace_run(self, run_id: str) -> WorkspaceRun | None:
        """The workspace a run used with its snapshots, or None."""
        row = self._conn.execute(
            "SELECT run_id, workspace, before_state, after_state, created_at FROM workspace_runs "
            "WHERE run_id = ?",
            (run_id,),
        ).fetchone()
        return None if row is None else _run(row)

    def workspace_runs(self, workspace: str) -> list[WorkspaceRun]:
        """A workspace's runs, oldest first."""
        return [
            _run(row)
            for row in self._conn.execute(
                "SELECT run_id, workspace, before_state, after_state, created_at "
                "FROM workspace_runs WHERE workspace = ? ORDER BY created_at, run_id",
                (workspace,),
            )
        ]

    def workspace_users(self, workspace: str) -> list[tuple[str, str]]:
        """The runs holding the workspace: (run id, status) of each run of it not settled
        (active or RECOVERY_REQUIRED), the run that created it included."""
        record = self.get_workspace(workspace)
        users = {run.run_id for run in self.workspace_runs(workspace)}
        if record.created_by:
            users.add(record.created_by)
        found: list[tuple[str, str]] = []
        for run_id in sorted(users):
            row = self._conn.execute("SELECT status FROM runs WHERE id = ?", (run_id,)).fetchone()
            if row is not None and row[0] in UNSETTLED_WORKSPACE_RUN_STATUSES:
                found.append((run_id, row[0]))
        return found


def _run(row: Any) -> WorkspaceRun:
    return WorkspaceRun(
        row[0],
        row[1],
        orjson.loads(row[2]),
        None if row[3] is None else orjson.loads(row[3]),
        row[4],
    )


__all__ = ["WorkspaceRecords"]
