"""Named sessions in the page against a real `baton serve` (its session routes): create one,
prompt it, change a SELECT control, and see a stale revision refused."""

from __future__ import annotations

import time

from playwright.sync_api import Page, expect

from .conftest import AGENT_COMMAND, PageWatch, Served, shot_path

#: Seconds a session's prompt may take to complete.
PROMPT_SECONDS = 60.0


def wait_idle(served: Served, name: str) -> dict[str, object]:
    deadline = time.monotonic() + PROMPT_SECONDS
    while True:
        view = served.api("GET", f"/api/v1/sessions/{name}")
        if view["session"]["status"] == "IDLE" and not view["queue"] and view["runs"]:
            return view  # type: ignore[no-any-return]
        assert time.monotonic() < deadline, view
        time.sleep(0.1)


def test_a_session_is_created_prompted_and_its_controls_changed(
    page: tuple[Page, PageWatch], served: Served
) -> None:
    pg, seen = page
    served.sign_in(pg, "#/sessions")
    pg.get_by_text("New session").click()
    form = pg.get_by_role("form", name="new session")
    form.get_by_label("Name").fill("inspected")
    form.get_by_label("Agent command").fill(AGENT_COMMAND)
    form.get_by_label("Working directory").fill(str(served.cwd))
    form.get_by_role("button", name="Create").click()
    expect(pg.get_by_role("heading", name="Session inspected")).to_be_visible()
    # The list shows it.
    pg.goto(f"{served.url}/#/sessions")
    expect(pg.locator("a[href='#/sessions/inspected']")).to_be_visible()
    expect(pg.locator("tr", has=pg.locator("a[href='#/sessions/inspected']"))).to_contain_text(
        str(served.cwd)
    )
    pg.locator("a[href='#/sessions/inspected']").click()
    expect(pg.get_by_role("heading", name="Session inspected")).to_be_visible()
    # A prompt: the run starts at once (nothing ahead) and completes.
    pg.get_by_role("textbox", name="prompt").fill("echo hello from the session page")
    pg.get_by_role("button", name="Send prompt").click()
    expect(pg.get_by_test_id("prompt-status")).to_contain_text("started")
    view = wait_idle(served, "inspected")
    run_id = view["runs"][0]["id"]  # type: ignore[index]
    assert served.wait_run(run_id)["status"] == "COMPLETED"
    # Controls: a SELECT change sends exactly its triple and the catalog moves on.
    panel = pg.get_by_role("region", name="session controls")
    mode = panel.get_by_label("Mode", exact=True)
    expect(mode).to_be_enabled()
    before = served.api("GET", "/api/v1/sessions/inspected/controls")["revision"]
    mode.select_option("plan")
    expect(pg.get_by_test_id("controls-status")).to_have_text("Mode set.")
    after = served.api("GET", "/api/v1/sessions/inspected/controls")
    assert after["revision"] != before
    assert next(c for c in after["controls"] if c["id"] == "mode")["value"] == "plan"
    pg.screenshot(path=str(shot_path("sessions")))
    # Changed through the API in between: the page's revision is stale, and says so.
    changed = served.api(
        "POST",
        "/api/v1/sessions/inspected/controls",
        {"controlId": "mode", "value": "default", "revision": after["revision"]},
    )
    assert changed["revision"] != after["revision"]
    panel.get_by_label("Mode", exact=True).select_option("plan")
    expect(panel.get_by_role("alert")).to_contain_text("stale", ignore_case=True)
    expect(panel).to_contain_text(f"catalog revision {changed['revision']}")
    mode_now = served.api("GET", "/api/v1/sessions/inspected/controls")["controls"]
    assert next(c for c in mode_now if c["id"] == "mode")["value"] == "default"
    assert not seen.page_errors
