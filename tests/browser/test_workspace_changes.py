"""The run page's workspace changes: the file list with the unreported change marked, and a
file's recorded diff rendered line by line as text."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from workspace_repos import make_repo

from .conftest import PageWatch, Served


def test_the_file_list_and_a_diff(page: tuple[Page, PageWatch], served: Served) -> None:
    pg, seen = page
    repo = make_repo(served.cwd / "changes-repo")
    run_id = served.start(
        "write a.txt <b>bold</b>; silent_write quiet.txt shh",
        cwd=str(repo),
        workspace="worktree",
        policy="auto-edits",
        allowUnattended=True,
    )
    assert served.wait_run(run_id)["status"] == "COMPLETED"
    served.sign_in(pg, f"#/runs/{run_id}")
    box = pg.get_by_test_id("workspace-changes")
    expect(box.get_by_test_id("workspace-counts")).to_contain_text("1 unreported")
    row = box.locator("tr", has_text="quiet.txt")
    expect(row).to_contain_text("unreported", ignore_case=True)
    box.get_by_role("button", name="a.txt").click()
    lines = box.get_by_test_id("workspace-diff").locator(".diff-line")
    expect(lines.filter(has_text="+<b>bold</b>")).to_have_attribute("data-kind", "added")
    assert pg.locator("#view b").count() == 0  # agent text stays text
    box.get_by_role("button", name="Show since the base").click()
    expect(box.get_by_test_id("workspace-counts")).to_contain_text("since the base")
    assert not seen.page_errors, seen.page_errors
