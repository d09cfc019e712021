"""The library's view of a run's workspace: the handle names it as soon as it is returned, and
its changes once the run has ended (issue 31, "the library")."""

from __future__ import annotations

from pathlib import Path

from baton import RunRequest, Runtime
from baton.runtime.agents.launch import SCRIPTED_AGENT
from workspace_repos import make_repo

AGENT = " ".join(SCRIPTED_AGENT)


async def test_the_handle_names_its_worktree_and_its_changes(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    async with Runtime(data_dir=tmp_path / "d") as runtime:
        run = await runtime.start(
            RunRequest(
                prompt="write a.txt edited\nsilent_write quiet.txt nobody said",
                agent_command=AGENT,
                cwd=str(repo),
                workspace="worktree",
                policy="auto-edits",
                allow_unattended=True,
            )
        )
        workspace = run.workspace
        assert workspace is not None and workspace["kind"] == "worktree"
        assert workspace["branch"] == f"baton/{run.id}" and workspace["compared"] is True
        assert run.workspace_changes is None  # not before the run has ended
        result = await run.result()
        assert result.status == "COMPLETED", result.message
        changes = run.workspace_changes
        assert changes is not None and changes == result.workspace_changes
        assert changes["unreported"] == ["quiet.txt"]
        assert Path(workspace["path"], "quiet.txt").read_text() == "nobody said"
        assert not (repo / "quiet.txt").exists()  # the user's checkout is untouched


async def test_a_plain_directory_run_has_no_workspace(tmp_path: Path) -> None:
    async with Runtime(data_dir=tmp_path / "d") as runtime:
        run = await runtime.start(
            RunRequest(prompt="echo hi", agent_command=AGENT, cwd=str(tmp_path))
        )
        assert run.workspace is None
        await run.result()
        assert run.workspace_changes is None
