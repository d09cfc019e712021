"""The inspector's Batches page (issue 32, item 7): the list of batches, one batch as its
matrix (a row per task, a column per agent, each cell coloured by its state with its cost and
a link to its run), and a task's agents' changes side by side (the compare view). Agent text
the page shows is inert: the scripted agent's ids and states come through as text only."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
from playwright.sync_api import Page, expect

from workspace_repos import make_repo

from .conftest import PageWatch, Served
from .test_pages import shot

#: Seconds the batch may take on a loaded machine (a bound on a broken run, nothing timed).
BATCH_SECONDS = 180


def _run_batch(served: Served, tmp_path: Path) -> str:
    repo = make_repo(tmp_path / "repo")
    agent = f"{sys.executable} -m baton.agents.scripted"
    lines = [
        {"batch": {"name": "page-check"}},
        {"run": {"policy": "auto-edits", "allow_unattended": True}},
        {"matrix": {"repeats": 1}},
        {"task": {"id": "edit", "prompt": "write a.txt changed\ncost 2", "repo": str(repo)}},
        {"task": {"id": "refuse", "prompt": "echo no\nstop refusal", "cwd": str(tmp_path)}},
        {"agent": {"id": "plain", "command": agent}},
        {"agent": {"id": "claude-like", "command": f"{agent} --profile claude"}},
    ]
    spec = tmp_path / "spec.jsonl"
    spec.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    env = {**os.environ, "BATON_AUTOSTART": "0"}
    done = subprocess.run(
        [
            *(sys.executable, "-m", "baton.cli.main", "batch", "run", str(spec)),
            *("--jobs", "2", "--json", "--data-dir", str(served.data_dir)),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=BATCH_SECONDS,
    )
    assert done.returncode == 1, done.stderr  # the refusing task's cells failed
    summary = orjson.loads(done.stdout.splitlines()[-1])
    assert summary["counts"] == {"COMPLETED": 2, "FAILED": 2}, summary
    return str(summary["batchId"])


def test_a_batch_as_its_matrix_with_the_changes_side_by_side(
    page: tuple[Page, PageWatch], served: Served, tmp_path: Path
) -> None:
    pg, seen = page
    batch_id = _run_batch(served, tmp_path)
    served.sign_in(pg, "#/batches")
    link = pg.locator(f"a[href='#/batches/{batch_id}']")
    expect(link).to_be_visible()
    row = pg.locator("tr", has=link)
    expect(row).to_contain_text("page-check")
    expect(row).to_contain_text("2 completed")
    link.click()
    matrix = pg.get_by_test_id("batch-matrix")
    expect(matrix).to_be_visible()
    expect(matrix.locator("thead th")).to_have_text(["task", "plain", "claude-like"])
    cells = matrix.get_by_test_id("batch-cell")
    expect(cells).to_have_count(4)
    edit_row = matrix.locator("tbody tr", has=pg.locator("th", has_text="edit"))
    expect(edit_row.locator("[data-state='completed']")).to_have_count(2)
    expect(edit_row).to_contain_text("$0.0200")  # the scripted agent's `cost 2`: cents
    refuse_row = matrix.locator("tbody tr", has=pg.locator("th", has_text="refuse"))
    expect(refuse_row.locator("[data-state='failed']")).to_have_count(2)
    # Every cell links to its run.
    expect(matrix.locator("a[href^='#/runs/run-']")).to_have_count(4)
    shot(pg, "batch-matrix")
    # The compare view: the edit task's two agents' changes next to each other.
    edit_row.get_by_role("button", name="edit").click()
    compare = pg.get_by_test_id("batch-compare")
    expect(compare.get_by_role("heading", name="Compare: edit")).to_be_visible()
    columns = compare.locator("section.compare-column")
    expect(columns).to_have_count(2)
    for index in range(2):
        expect(columns.nth(index)).to_contain_text("a.txt")
        expect(columns.nth(index)).to_contain_text("1 file changed (+1 -1)")
    shot(pg, "batch-compare")
    assert not seen.page_errors
