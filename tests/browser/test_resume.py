"""A live run's page whose stream the service drops: the browser reconnects with
Last-Event-ID and the transcript ends whole, each event shown once."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Page, expect

from .conftest import PageWatch, start_service, stop_service


def test_a_dropped_stream_resumes_after_the_last_event_seen(
    page: tuple[Page, PageWatch], tmp_path: Path
) -> None:
    pg, seen = page
    # A queue of one event: a burst of events drops the page's stream at once.
    served, process = start_service(tmp_path, "--sse-queue-events", "1")
    try:
        served.sign_in(pg, "#/runs")
        run_id = served.start(
            "slow 3; plan; usage 5 100; title resumed; commands; usage 7 100; echo done",
            policy="auto-edits",
            allowUnattended=True,
        )
        pg.goto(f"{served.url}/#/runs/{run_id}")
        expect(pg.get_by_test_id("connection")).to_have_attribute("data-state", "finished")
        # The service dropped the stream at least once, and the page resumed it.
        expect(pg.locator("li[data-kind='notice']").filter(has_text="dropped")).not_to_have_count(0)
        # Every event once: one plan row, one title, the last usage, the text once.
        expect(pg.locator("li[data-kind='plan']")).to_have_count(1)
        expect(
            pg.locator("li[data-kind='notice']").filter(has_text="session title: resumed")
        ).to_have_count(1)
        expect(pg.get_by_test_id("usage")).to_have_text("usage: 7 of 100 tokens")
        expect(pg.locator("li[data-kind='text'] .text")).to_have_text(["done"])
        expect(pg.locator("li[data-kind='result']")).to_have_count(1)
        assert not seen.page_errors
    finally:
        stop_service(process)
