"""Session controls in the page: BOOLEAN and SELECT rendered with their groups and the catalog
revision, a change sent as exactly {controlId, value, revision}, a stale revision refused and
shown, controls disabled while the session is busy.

These run the page against a stand-in of the service's session routes (conftest.SessionDouble,
the same revision rule), which reaches the states a real agent reaches only by timing (a
session busy or recovery-required while the page looks); tests/browser/test_sessions_live.py
runs the page against the real routes.
"""

from __future__ import annotations

from playwright.sync_api import Page, expect

from .conftest import PageWatch, SessionDouble


def test_a_select_change_sends_exactly_its_triple(
    page: tuple[Page, PageWatch], static_server: str, sessions_double: SessionDouble
) -> None:
    pg, seen = page
    pg.goto(f"{static_server}/#/sessions/s1")
    panel = pg.get_by_role("region", name="session controls")
    expect(panel).to_contain_text("catalog revision r1")
    expect(panel).to_contain_text("1 provider controls not shown")
    expect(panel.locator("legend")).to_have_text(["mode", "model"])
    # Provider labels stay text.
    expect(panel.get_by_label("Mode").locator("option").first).to_have_text("Default <b>mode</b>")
    panel.get_by_label("Mode").select_option("plan")
    expect(panel).to_contain_text("catalog revision r2")
    assert sessions_double.posted == [{"controlId": "mode", "value": "plan", "revision": "r1"}]
    expect(pg.get_by_test_id("controls-status")).to_have_text("Mode set.")
    assert not seen.page_errors and not seen.console_errors


def test_a_stale_revision_is_refused_shown_and_refreshed(
    page: tuple[Page, PageWatch], static_server: str, sessions_double: SessionDouble
) -> None:
    pg, seen = page
    pg.goto(f"{static_server}/#/sessions/s1")
    panel = pg.get_by_role("region", name="session controls")
    expect(panel).to_contain_text("catalog revision r1")
    sessions_double.change_elsewhere()  # through the API, in between
    panel.get_by_label("Fast").check()
    assert sessions_double.posted == [{"controlId": "fast", "value": True, "revision": "r1"}]
    expect(panel.get_by_role("alert")).to_contain_text("stale", ignore_case=True)
    expect(panel.get_by_role("alert")).to_contain_text("revision r1")
    # The view was refreshed to the catalog the service has now.
    expect(panel).to_contain_text("catalog revision r2")
    expect(panel.get_by_label("Fast")).to_be_checked()
    # Only the refused change was sent.
    assert len(sessions_double.posted) == 1
    # Refusals are answers, not page errors (the 409 is logged by the browser as a resource).
    assert not seen.page_errors


def test_controls_are_disabled_while_the_session_is_busy(
    page: tuple[Page, PageWatch], static_server: str, sessions_double: SessionDouble
) -> None:
    pg, _ = page
    sessions_double.status = "RECOVERY_REQUIRED"
    pg.goto(f"{static_server}/#/sessions/s1")
    panel = pg.get_by_role("region", name="session controls")
    expect(panel).to_contain_text("disabled while a run is active or recovery is required")
    expect(panel.get_by_label("Mode")).to_be_disabled()
    expect(panel.get_by_label("Fast")).to_be_disabled()
    assert sessions_double.posted == []


def test_a_prompt_to_a_busy_session_shows_its_queue_position(
    page: tuple[Page, PageWatch], static_server: str, sessions_double: SessionDouble
) -> None:
    pg, _ = page
    sessions_double.status = "ACTIVE"
    pg.goto(f"{static_server}/#/sessions/s1")
    pg.get_by_role("textbox", name="prompt").fill("next <script>alert(1)</script>")
    pg.get_by_role("button", name="Send prompt").click()
    expect(pg.get_by_test_id("prompt-status")).to_have_text("Prompt p-2 queued at position 2")
    assert sessions_double.posted == [{"prompt": "next <script>alert(1)</script>"}]
    sessions_double.status = "IDLE"
    pg.get_by_role("textbox", name="prompt").fill("now")
    pg.get_by_role("button", name="Send prompt").click()
    expect(pg.get_by_test_id("prompt-status")).to_have_text("Run run-2 started")
    expect(pg.get_by_role("link", name="run-2")).to_have_attribute("href", "#/runs/run-2")
