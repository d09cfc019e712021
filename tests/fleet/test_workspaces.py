"""Workspaces on the fleet (issue 31), on PostgreSQL: a fleet session's worktree is made by
its first turn on the worker that holds the session and kept there for its next turns; the
changes and the patch are in the shared store, so another host's `baton diff` prints them
(and the patch applies to a fresh clone), while removing the worktree is refused there."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from baton.fleet import TurnSubmission, submit
from baton.store import Store
from workspace_repos import git, make_repo

from .test_fleet import _baton

pytestmark = pytest.mark.slow


async def test_a_fleet_sessions_worktree_stays_on_its_worker(fleet: Any, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    fleet.start_worker("w1", "shared")
    fleet.start_worker("w2", "shared")
    run_ids = []
    for text in ("write one.txt first", "write two.txt second; silent_write x.txt quiet"):
        handle = await submit(
            fleet.url,
            TurnSubmission(
                prompt=text,
                agent_command=fleet.agent_command(),
                allow_unattended=True,
                policy="auto-edits",
                queue="shared",
                session="fix",
                cwd=str(repo),
                workspace="worktree",
            ),
        )
        run_ids.append(handle.run_id)
    runs = await fleet.wait_ended(run_ids)
    assert {run.status for run in runs.values()} == {"COMPLETED"}, runs
    with Store(fleet.url, read_only=True) as store:
        pinned = store.get_pinned_session("fix")
        workspace = store.get_workspace("session-fix")
        assert workspace.host == f"host-{pinned.worker}" and workspace.session_name == "fix"
        assert [r.run_id for r in store.workspace_runs("session-fix")] == run_ids
        last = [i for i in store.list_items(run_ids[1]) if i.kind == "workspace_changes"][-1]
    assert last.content["unreported"] == ["x.txt"]
    assert last.content["base"]["counts"]["added"] == 3
    # Another host reads the changes and the patch from the shared store.
    elsewhere = {**os.environ, "BATON_HOST": "another-host", "BATON_HOME": str(tmp_path / "x")}
    elsewhere.pop("BATON_STORE", None)
    code, patch, err = await _baton(elsewhere, "diff", "fix", "--store", fleet.url)
    assert code == 0, err
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    (tmp_path / "fix.patch").write_text(patch)
    git(clone, "apply", str(tmp_path / "fix.patch"))
    assert sorted(p.name for p in clone.glob("*.txt")) == [
        "a.txt",
        "b.txt",
        "c.txt",
        "one.txt",
        "two.txt",
        "x.txt",
    ]
    code, turn, err = await _baton(elsewhere, "diff", run_ids[1], "--store", fleet.url)
    assert code == 0 and turn.count("diff --git ") == 2, err
    code, _out, err = await _baton(
        elsewhere, "workspace", "rm", "session-fix", "--store", fleet.url
    )
    assert code == 2 and "lives on host" in err
    assert Path(workspace.path).is_dir()
