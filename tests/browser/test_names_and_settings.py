"""The inspector names sessions as people do (issue 30, item 6): a named session's run shows
the session's NAME (a link to its page) on the Runs page, the run page and the recovery view,
never only Baton's internal session id; a session's requested settings are a table of
setting and value, not raw JSON; the recovery view's journal list holds only the run's own
records, not those of the earlier turn the same warm agent process ran."""

from __future__ import annotations

import signal
import time
from pathlib import Path

from playwright.sync_api import Page, expect

from .conftest import AGENT_COMMAND, PageWatch, Served, start_service, stop_service
from .test_pages import shot

#: Seconds a session's turn may take to start or end (a loaded machine; nothing is timed).
TURN_SECONDS = 60.0


def _turn(served: Served, name: str, prompt: str) -> str:
    answer = served.api("POST", f"/api/v1/sessions/{name}/prompt", {"prompt": prompt})
    assert answer.get("runId"), answer
    return str(answer["runId"])


def test_runs_and_run_pages_name_the_session_and_its_settings_are_a_table(
    page: tuple[Page, PageWatch], served: Served
) -> None:
    pg, seen = page
    made = served.api(
        "POST",
        "/api/v1/sessions",
        {
            "name": "named-review",
            "agentCommand": AGENT_COMMAND,
            "cwd": str(served.cwd),
            "mode": "plan",
        },
    )
    assert made.get("name") == "named-review", made
    run_id = _turn(served, "named-review", "echo hello from a named session")
    record = served.wait_run(run_id)
    assert record["status"] == "COMPLETED" and record["sessionName"] == "named-review"
    internal_id = str(record["sessionId"])
    served.sign_in(pg, "#/runs")
    row = pg.locator("tr", has=pg.locator(f"a[href='#/runs/{run_id}']"))
    link = row.locator("a[href='#/sessions/named-review']")
    expect(link).to_have_text("named-review")
    expect(row).not_to_contain_text(internal_id)
    shot(pg, "runs-session-names")
    pg.goto(f"{served.url}/#/runs/{run_id}")
    facts = pg.locator("dl.facts").first
    expect(facts.locator("a[href='#/sessions/named-review']")).to_have_text("named-review")
    expect(facts).not_to_contain_text(internal_id)
    # The session's page: its settings as a table of setting and value.
    facts.locator("a[href='#/sessions/named-review']").click()
    expect(pg.get_by_role("heading", name="Session named-review")).to_be_visible()
    settings = pg.get_by_test_id("session-settings")
    expect(settings.locator("tr", has=pg.locator("th", has_text="mode"))).to_contain_text("plan")
    expect(pg.locator("dl.facts").first).not_to_contain_text('{"mode"')
    shot(pg, "session-settings")
    assert not seen.page_errors


def test_the_recovery_view_lists_only_the_runs_own_journal_records(
    page: tuple[Page, PageWatch], tmp_path: Path
) -> None:
    pg, seen = page
    first, process = start_service(tmp_path)
    try:
        made = first.api(
            "POST",
            "/api/v1/sessions",
            {"name": "warm", "agentCommand": AGENT_COMMAND, "cwd": str(first.cwd)},
        )
        assert made.get("name") == "warm", made
        earlier = _turn(first, "warm", "echo the earlier turn")
        done = first.wait_run(earlier)
        assert done["status"] == "COMPLETED"
        earlier_prompt = int(done["promptRef"]["sequence"])
        # The next turn runs on the same warm agent process; the service is killed in it.
        later = _turn(first, "warm", "echo the later turn; plan; slow 600")
        deadline = time.monotonic() + TURN_SECONDS
        while "plan" not in {e.get("type") for e in first.events(later)}:
            assert time.monotonic() < deadline, "the later turn never reached its pause"
            time.sleep(0.1)
        assert (
            first.api("GET", f"/api/v1/runs/{later}")["serverInstanceId"]
            == done["serverInstanceId"]
        )
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        stop_service(process)
    second, process = start_service(tmp_path)
    try:
        second.sign_in(pg, f"#/recovery/{later}")
        table = pg.locator("table").last
        expect(table).to_contain_text("session/prompt")
        sequences = [
            int(text.strip().lstrip("#"))
            for text in table.locator("tbody tr td:first-child").all_inner_texts()
        ]
        # Nothing of the earlier turn: not its prompt, nor what came before its answer.
        assert sequences and min(sequences) > earlier_prompt, (sequences, earlier_prompt)
        later_prompt = int(second.api("GET", f"/api/v1/runs/{later}")["promptRef"]["sequence"])
        assert later_prompt in sequences
        expect(table.locator("tbody tr", has_text="session/prompt")).to_have_count(1)
        expect(pg.locator("dl.facts").first.locator("a[href='#/sessions/warm']")).to_have_text(
            "warm"
        )
        shot(pg, "recovery-own-records")
        assert not seen.page_errors
    finally:
        stop_service(process)
