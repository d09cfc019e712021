"""The run page in a real browser at 10,000+ live events from a real `baton serve`."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Page, expect

from .conftest import PageWatch, Served, start_service, stop_service

#: Session-title updates of the live responsiveness test: each is one event and one row. With
#: the run's own events (started, session, controls, text, item, result) the run has 10,000+
#: events; the scripted agent takes at most 10,000 commands a prompt.
LIVE_TITLES = 9_997

#: The longest main-thread task allowed while the live run streams (see test_transcript.py).
LIVE_LONGEST_TASK_MS = 2_000


def test_a_live_run_of_ten_thousand_events_stays_responsive(
    page: tuple[Page, PageWatch], tmp_path: Path
) -> None:
    pg, seen = page
    # The agent sends its 10,000 updates in one burst, faster than any client reads them: a
    # subscriber queue that holds the whole burst keeps this page's stream from being dropped
    # (a dropped stream resumes, tests/browser/test_resume.py), so the page renders every event.
    served, process = start_service(tmp_path, "--sse-queue-events", "20000")
    try:
        live(pg, seen, served)
    finally:
        stop_service(process)


def live(pg: Page, seen: PageWatch, served: Served) -> None:
    served.sign_in(pg, "#/runs")
    titles = "; ".join(f"title t{i}" for i in range(LIVE_TITLES))
    run_id = served.start(f"slow 2; {titles}; echo end", policy="auto-edits", allowUnattended=True)
    pg.goto(f"{served.url}/#/runs/{run_id}")
    pg.evaluate(
        "window.__longest = 0; new PerformanceObserver(l => { for (const e of l.getEntries())"
        " window.__longest = Math.max(window.__longest, e.duration); })"
        ".observe({type: 'longtask', buffered: true})"
    )
    expect(pg.get_by_test_id("connection")).to_have_attribute(
        "data-state", "finished", timeout=120_000
    )
    status = pg.locator(".transcript-status").inner_text()
    events = int(status.split(" events")[0])
    print("live run:", status, "longest task ms:", pg.evaluate("window.__longest"))
    assert events >= 10_000
    assert pg.locator("ol.transcript > li").count() <= 100
    expect(pg.locator("ol.transcript > li").last).to_have_attribute("data-kind", "result")
    # The page before the last ends with the last title.
    pg.get_by_role("button", name="Older").click()
    titles_shown = pg.locator("li[data-kind='notice']").filter(has_text="session title: t")
    expect(titles_shown.last).to_have_text(f"session infosession title: t{LIVE_TITLES - 1}")
    assert pg.evaluate("window.__longest") < LIVE_LONGEST_TASK_MS
    # Paging answers at once.
    pg.get_by_role("button", name="First").click()
    expect(pg.locator(".page-label")).to_contain_text("page 1 of ")
    assert not seen.page_errors
