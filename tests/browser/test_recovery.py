"""The recovery view: a run left ambiguous by a SIGKILLed service, found RECOVERY_REQUIRED by
the next one, read and settled in the page."""

from __future__ import annotations

import signal
import time
from pathlib import Path

from playwright.sync_api import Page, expect

from .conftest import PageWatch, start_service, stop_service
from .test_pages import shot

#: Seconds the test waits for the killed service's run to be running.
RUNNING_WITHIN_SECONDS = 30.0


def test_a_recovery_required_run_is_read_and_marked_failed(
    page: tuple[Page, PageWatch], tmp_path: Path
) -> None:
    pg, seen = page
    first, process = start_service(tmp_path)
    try:
        run_id = first.start(
            "echo written before the kill; think then a pause; plan; slow 600",
            policy="auto-edits",
            allowUnattended=True,
        )
        deadline = time.monotonic() + RUNNING_WITHIN_SECONDS
        # The prompt is journaled and the agent is past its text, inside its pause.
        while "plan" not in {e.get("type") for e in first.events(run_id)}:
            assert time.monotonic() < deadline, "the run never reached its pause"
            time.sleep(0.1)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        stop_service(process)
    second, process = start_service(tmp_path)
    try:
        second.sign_in(pg, "#/runs")
        badge = pg.locator(f"a[href='#/recovery/{run_id}']")
        expect(badge).to_have_text("RECOVERY_REQUIRED")
        badge.click()
        # Text is materialized at the end of its part: a killed turn recorded its prompt and
        # the journal holds what the agent sent (redacted), the page shows both.
        expect(pg.locator("dl.facts")).to_contain_text("written before the kill")
        expect(pg.locator("table")).to_contain_text("session/prompt")
        shot(pg, "recovery")
        pg.get_by_role("button", name="Mark failed").click()
        expect(pg.get_by_test_id("recovery-status")).to_contain_text("MARKED_FAILED_BY_USER")
        assert second.api("GET", f"/api/v1/runs/{run_id}")["status"] == "FAILED"
        expect(pg.get_by_role("button", name="Mark failed")).to_be_disabled()
        assert not seen.page_errors and not seen.dialogs
    finally:
        stop_service(process)
