"""`--workspace worktree` end to end, as a user runs it: a scripted agent's turn that edits,
adds, deletes and renames files (reported) and writes one silently (flagged unreported), the
patch of `baton diff` applied to a fresh clone, a session's worktree kept across processes,
and `baton workspace rm|gc` refusing a workspace in use or holding unrecorded changes."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from baton.store import Store
from cli.helpers import AGENT, baton, json_lines
from workspace_repos import git, make_repo

SCRIPT = "\n".join(
    [
        "write a.txt alpha edited",
        "write added.txt brand new",
        "delete b.txt",
        "move c.txt renamed.txt",
        "silent_write sneaky.txt nobody said",
        "echo done",
    ]
)
UNATTENDED = ["--agent-command", AGENT, "--allow-unattended", "--policy", "auto-edits"]


def _run(tmp_path: Path, repo: Path, *extra: str, prompt: str = SCRIPT) -> Any:
    return baton(tmp_path, "run", *UNATTENDED, "--cwd", str(repo), *extra, prompt)


def _result(stdout: str) -> dict[str, Any]:
    return json_lines(stdout)[-1]


def test_a_turn_in_a_worktree_is_compared_and_a_silent_write_flagged(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    done = _run(tmp_path, repo, "--workspace", "worktree", "--json")
    assert done.returncode == 0, done.stderr
    result = _result(done.stdout)
    changes = result["workspaceChanges"]
    by_path = {f["path"]: f for f in changes["files"]}
    assert by_path["a.txt"]["kind"] == "modified" and not by_path["a.txt"]["unreported"]
    assert by_path["added.txt"]["kind"] == "added"
    assert by_path["b.txt"]["kind"] == "deleted" and not by_path["b.txt"]["unreported"]
    assert by_path["renamed.txt"]["kind"] == "renamed"
    assert by_path["renamed.txt"]["oldPath"] == "c.txt"
    assert by_path["sneaky.txt"]["unreported"] and by_path["sneaky.txt"]["reportedBy"] == []
    assert changes["unreported"] == ["sneaky.txt"]
    assert changes["counts"]["unreported"] == 1 and changes["counts"]["files"] == 5
    # The user's checkout is untouched; the worktree has the change, on its own branch.
    assert (repo / "b.txt").exists() and not (repo / "sneaky.txt").exists()
    worktree = Path(changes["path"])
    assert (worktree / "sneaky.txt").read_text() == "nobody said"
    assert str(worktree).startswith(str(tmp_path / "d" / "worktrees"))
    assert changes["branch"] == f"baton/{result['runId']}"
    # `baton show` names the unreported change too.
    shown = baton(tmp_path, "show", result["runId"], "--no-server")
    assert "! unreported added: sneaky.txt" in shown.stdout, shown.stdout


def test_the_text_summary_and_fail_on_unreported(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    done = _run(tmp_path, repo, "--workspace", "worktree")
    assert done.returncode == 0, done.stderr
    assert "5 files changed" in done.stderr and "1 unreported" in done.stderr
    assert "! unreported added: sneaky.txt" in done.stderr
    failing = _run(tmp_path, repo, "--workspace", "worktree", "--fail-on-unreported")
    assert failing.returncode == 9, failing.stderr
    clean = _run(
        tmp_path,
        repo,
        "--workspace",
        "worktree",
        "--fail-on-unreported",
        prompt="write a.txt reported only",
    )
    assert clean.returncode == 0, clean.stderr
    assert "all reported" in clean.stderr


def test_baton_diff_applies_to_a_fresh_clone(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path / "repo",
        {"a.txt": "alpha\n", "b.txt": "beta\n", "c.txt": "gamma\n", "bin.dat": "\0\1"},
    )
    done = _run(tmp_path, repo, "--workspace", "worktree", "--json")
    assert done.returncode == 0, done.stderr
    result = _result(done.stdout)
    patch = baton(tmp_path, "diff", result["runId"])
    assert patch.returncode == 0, patch.stderr
    assert patch.stdout.startswith("diff --git ")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    (tmp_path / "turn.patch").write_text(patch.stdout)
    git(clone, "apply", "--index", str(tmp_path / "turn.patch"))
    worktree = Path(result["workspaceChanges"]["path"])
    for name in ("a.txt", "added.txt", "renamed.txt", "sneaky.txt", "bin.dat"):
        assert (clone / name).read_bytes() == (worktree / name).read_bytes(), name
    assert not (clone / "b.txt").exists() and not (clone / "c.txt").exists()
    # --base is the same here (one turn); a prefix of the run id names it too.
    base = baton(tmp_path, "diff", result["runId"].removeprefix("run-")[:8], "--base")
    assert base.returncode == 0 and base.stdout == patch.stdout


def test_errors_before_any_agent_starts(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    done = _run(tmp_path, plain, "--workspace", "worktree")
    assert done.returncode == 2 and "WORKSPACE_NOT_GIT_REPOSITORY" in done.stderr
    repo = make_repo(tmp_path / "repo")
    done = _run(tmp_path, repo, "--workspace", "worktree", "--base", "nope")
    assert done.returncode == 2 and "WORKSPACE_BASE_NOT_FOUND" in done.stderr
    (repo / "dirty.txt").write_text("x\n")
    done = _run(tmp_path, repo, "--workspace", "worktree", "--require-clean")
    assert done.returncode == 2 and "WORKSPACE_BASE_DIRTY" in done.stderr
    runs = baton(tmp_path, "runs", "--json")
    assert json_lines(runs.stdout) == []  # no run, no agent
    # Not a sandbox: restricted settings are refused as before.
    done = _run(tmp_path, repo, "--workspace", "read-only")
    assert done.returncode == 2 and "EXECUTION_SETTING_UNSUPPORTED" in done.stderr


def test_a_session_keeps_its_worktree_across_processes(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    made = baton(
        tmp_path,
        "session",
        "new",
        "fix",
        "--agent-command",
        f"{AGENT} --state-dir {tmp_path / 'agent-state'}",
        "--allow-unattended",
        "--cwd",
        str(repo),
        "--workspace",
        "worktree",
        "--no-server",
    )
    assert made.returncode == 0, made.stderr
    results = []
    for text in ("write one.txt first turn", "write two.txt second turn\nsilent_write x.txt s"):
        done = baton(
            tmp_path,
            "run",
            "--session",
            "fix",
            "--policy",
            "auto-edits",
            "--allow-unattended",
            "--json",
            "--no-server",
            text,
        )
        assert done.returncode == 0, done.stdout[-3000:]
        results.append(_result(done.stdout))
    first, second = (r["workspaceChanges"] for r in results)
    assert first["workspace"] == second["workspace"] == "session-fix"
    assert first["path"] == second["path"]
    assert [f["path"] for f in first["files"]] == ["one.txt"]
    assert sorted(f["path"] for f in second["files"]) == ["two.txt", "x.txt"]
    assert second["unreported"] == ["x.txt"]
    assert second["baseCounts"]["added"] == 3  # since the base: both turns
    patch = baton(tmp_path, "diff", "fix")  # a session's default: since the base
    assert patch.returncode == 0 and patch.stdout.count("diff --git ") == 3
    shown = baton(tmp_path, "workspace", "show", "session-fix", "--json")
    state = json_lines(shown.stdout)[0]
    assert state["session"] == "fix" and state["runs"] == [r["runId"] for r in results]
    # A run outside the session may not use the session's worktree.
    stranger = baton(tmp_path, "run", *UNATTENDED, "--workspace", first["path"], "echo hi")
    assert stranger.returncode == 2 and "WORKSPACE_IN_USE" in stranger.stderr


def _ambiguous_run(tmp_path: Path, workspace: str) -> str:
    """A run of the workspace left RECOVERY_REQUIRED (a lost worker, a second Ctrl-C)."""

    async def go() -> str:
        with Store.open(tmp_path / "d") as store:
            run = store.create_run("again", status="RUNNING")
            store.record_workspace_before(run.id, workspace, {"tree": "0" * 40})
            await store.update_run_status(run.id, "RECOVERY_REQUIRED", recovery_reason="test")
            return run.id

    return asyncio.run(go())


def _settle(tmp_path: Path, run_id: str) -> None:
    async def go() -> None:
        with Store.open(tmp_path / "d") as store:
            await store.update_run_status(run_id, "FAILED")

    asyncio.run(go())


def test_rm_and_gc_refuse_a_workspace_in_use_or_with_unrecorded_changes(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    done = _run(tmp_path, repo, "--workspace", "worktree", "--json")
    result = _result(done.stdout)
    name, path = result["runId"], Path(result["workspaceChanges"]["path"])
    ambiguous = _ambiguous_run(tmp_path, name)
    refused = baton(tmp_path, "workspace", "rm", name)
    assert refused.returncode == 2 and "WORKSPACE_IN_USE" in refused.stderr
    gc = baton(tmp_path, "workspace", "gc")
    assert f"kept {name}: in use" in gc.stdout and path.exists()
    _settle(tmp_path, ambiguous)
    (path / "later.txt").write_text("after the turn\n")
    refused = baton(tmp_path, "workspace", "rm", name)
    assert refused.returncode == 2 and "WORKSPACE_UNRECORDED_CHANGES" in refused.stderr
    gc = baton(tmp_path, "workspace", "gc")
    assert "holds unrecorded changes" in gc.stdout and path.exists()
    exported = baton(tmp_path, "workspace", "export", name, "--patch", str(tmp_path / "all.patch"))
    assert exported.returncode == 0, exported.stderr
    assert "later.txt" in (tmp_path / "all.patch").read_text()
    branch = baton(tmp_path, "workspace", "export", name, "--branch", "agent-work")
    assert branch.returncode == 0, branch.stderr
    assert "later.txt" in git(repo, "show", "--stat", "agent-work")
    forced = baton(tmp_path, "workspace", "rm", name, "--force")
    assert forced.returncode == 0, forced.stderr
    assert not path.exists()
    listed = baton(tmp_path, "workspace", "list", "--json")
    assert json_lines(listed.stdout) == []
    assert (
        json_lines(baton(tmp_path, "workspace", "list", "--all", "--json").stdout)[0]["state"]
        == "REMOVED"
    )


def test_gc_removes_what_nothing_needs(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    done = _run(tmp_path, repo, "--workspace", "worktree", "--json")
    path = Path(_result(done.stdout)["workspaceChanges"]["path"])
    dry = baton(tmp_path, "workspace", "gc", "--dry-run")
    assert "would remove" in dry.stdout and path.exists()
    gc = baton(tmp_path, "workspace", "gc")
    assert gc.returncode == 0 and "removed" in gc.stdout and not path.exists()


def test_recover_compares_again_after_a_recovery_required_run(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    done = _run(tmp_path, repo, "--workspace", "worktree", "--json", prompt="write w.txt x\ncrash")
    assert done.returncode == 6, done.stderr
    result = _result(done.stdout)
    assert result["workspaceChanges"]["provisional"] is True
    worktree = Path(result["workspaceChanges"]["path"])
    (worktree / "after.txt").write_text("written after Baton lost the turn\n")
    # In use while RECOVERY_REQUIRED: not removed.
    refused = baton(tmp_path, "workspace", "rm", result["runId"])
    assert "WORKSPACE_IN_USE" in refused.stderr
    for _ in range(2):  # a second look at the same state adds nothing
        seen = baton(tmp_path, "recover", result["runId"], "--json")
        assert seen.returncode == 0, seen.stderr
    shown = json_lines(baton(tmp_path, "show", result["runId"], "--json", "--no-server").stdout)[0]
    items = [i for i in shown["items"] if i["kind"] == "workspace_changes"]
    assert len(items) == 2 and items[-1]["content"]["atRecover"] is True
    assert shown["workspaceChanges"]["unreported"] == ["after.txt"]
    assert {f["path"] for f in shown["workspaceChanges"]["files"]} == {"w.txt", "after.txt"}


def test_a_directory_workspace_is_compared_and_never_deleted(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    done = _run(
        tmp_path,
        tmp_path,
        "--workspace",
        str(repo),
        "--json",
        prompt="write a.txt mine; silent_write new.txt quiet",
    )
    assert done.returncode == 0, done.stderr
    result = _result(done.stdout)
    assert result["workspace"]["kind"] == "dir" and result["workspace"]["path"] == str(repo)
    assert result["workspaceChanges"]["unreported"] == ["new.txt"]
    # A plain run there later is today's run: not compared, never refused.
    plain = _run(tmp_path, repo, "--json", prompt="echo hi")
    assert _result(plain.stdout)["workspaceChanges"] is None
    forgot = baton(tmp_path, "workspace", "rm", result["runId"])
    assert forgot.returncode == 0 and "forgot" in forgot.stdout
    assert (repo / "new.txt").exists() and (repo / ".git").is_dir()
