"""What waits for you, seen in the inspector: the navigation's count of open questions and the
Runs page's AWAITING_APPROVAL with its count (issue 30, item 5)."""

from __future__ import annotations

import time

from playwright.sync_api import Page, expect

from .conftest import PageWatch, Served, shot_path


def test_the_nav_and_the_runs_page_show_what_waits_for_an_answer(
    page: tuple[Page, PageWatch], served: Served
) -> None:
    pg, seen = page
    run_id = served.start("write waiting.txt data")
    # The Runs page lists what the store says when it loads: open it once the run waits.
    for _ in range(600):
        if served.api("GET", f"/api/v1/runs/{run_id}").get("status") == "AWAITING_APPROVAL":
            break
        time.sleep(0.1)
    served.sign_in(pg, "#/runs")
    counter = pg.get_by_test_id("nav-waiting")
    expect(counter).to_have_text("1")
    expect(pg.locator("header.top nav a[href='#/permissions']")).to_have_attribute(
        "aria-description", "1 waiting for your answer"
    )
    row = pg.locator("tr", has=pg.locator(f"a[href='#/runs/{run_id}']"))
    expect(row.locator(".badge")).to_have_text("AWAITING_APPROVAL")
    expect(row.get_by_test_id("run-waiting")).to_have_text("1 waiting")
    pg.screenshot(path=str(shot_path("runs-waiting")), full_page=False)
    [request] = served.api("GET", f"/api/v1/permissions?runId={run_id}")["permissions"]
    served.api("POST", f"/api/v1/permissions/{request['id']}/answer", {"optionId": "allow"})
    assert served.wait_run(run_id)["status"] == "COMPLETED"
    expect(counter).to_have_count(0)  # gone at the next poll once nothing waits
    pg.reload()
    expect(pg.get_by_test_id("run-waiting")).to_have_count(0)
    assert not seen.page_errors
