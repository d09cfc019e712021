"""`baton compare`: one prompt across two agents in a repository, each in its own worktree,
the outcomes side by side, each agent's changes `baton diff`-able, the comparison a batch
that `baton batch show` reads again."""

from __future__ import annotations

import re
from pathlib import Path

from cli.helpers import AGENT, baton, json_lines
from workspace_repos import make_repo


def test_compare_runs_each_agent_in_its_own_worktree_side_by_side(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    done = baton(
        tmp_path,
        "compare",
        "--agent-command", AGENT,
        "--agent-command", f"{AGENT} --profile claude",
        "--cwd", str(repo),
        "--policy", "auto-edits",
        "--allow-unattended",
        "write a.txt changed\necho done\ncost 5",
    )  # fmt: skip
    assert done.returncode == 0, (done.stderr, baton(tmp_path, "batch", "list", "--json").stdout)
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["command-1", "command-2"]
    table = [re.split(r"\s{2,}", line.strip()) for line in lines[1:17]]
    rows = {cells[0]: cells[1:] for cells in table}
    assert rows["state"] == ["COMPLETED", "COMPLETED"]
    assert rows["files changed"] == ["1", "1"] and rows["cost"] == ["0.0500 USD"] * 2
    assert "── command-1 ──" in done.stdout and "done" in done.stdout
    run_ids = rows["run"]
    assert len(run_ids) == 2
    patches = [baton(tmp_path, "diff", run_id).stdout for run_id in run_ids]
    assert all("+changed" in patch for patch in patches)
    assert (repo / "a.txt").read_text() == "alpha\n"  # the checkout is untouched
    [listed] = json_lines(baton(tmp_path, "batch", "list", "--json").stdout)
    assert listed["cells"] == 2 and listed["name"].startswith("compare: write a.txt")
    as_json = baton(
        tmp_path, "compare", "--agent-command", AGENT, "--cwd", str(repo), "echo hi", "--json"
    )
    assert as_json.returncode == 0, as_json.stderr
    [cell, summary] = json_lines(as_json.stdout)
    assert cell["type"] == "cell" and cell["reply"] == "hi" and summary["type"] == "batch"
    refused = baton(tmp_path, "compare", "echo hi")
    assert refused.returncode == 2 and "--agent" in refused.stderr
