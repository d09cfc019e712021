"""Every page of the inspector against a real `baton serve` and the scripted agent."""

from __future__ import annotations

import json

from playwright.sync_api import BrowserContext, Page, expect

from .conftest import AGENT_COMMAND, PageWatch, Served, shot_path, watch

#: The deltas of the streaming test (the issue's 5,000).
DELTAS = 5_000

#: Agent text that would run code if it were ever parsed as HTML.
HOSTILE = "<img src=x onerror=alert(1)><script>alert(2)</script>"


def shot(page: Page, name: str) -> None:
    page.screenshot(path=str(shot_path(name)), full_page=False)


def transcript_text(page: Page) -> str:
    """The agent text of the whole transcript, walking its pages from the first."""
    page.get_by_role("button", name="First").click()
    parts: list[str] = []
    while True:
        parts.extend(page.locator("li[data-kind='text'] .text").all_text_contents())
        label = page.locator(".page-label").inner_text()  # "page N of M"
        words = label.split()
        if words[1] == words[3]:
            return "".join(parts)
        page.get_by_role("button", name="Newer").click()
        expect(page.locator(".page-label")).to_have_text(f"page {int(words[1]) + 1} of {words[3]}")


def assert_inert(page: Page, seen: PageWatch) -> None:
    assert page.locator("#view img, #view script, #view svg").count() == 0
    assert not seen.dialogs, seen.dialogs
    assert not seen.page_errors, seen.page_errors


def test_sign_in_with_the_one_time_token(context: BrowserContext, served: Served) -> None:
    page = context.pages[0] if context.pages else context.new_page()
    seen = watch(page)
    answer = page.goto(served.url + "/")
    assert answer is not None and answer.status == 401
    expect(page.get_by_role("heading", name="Baton")).to_be_visible()
    page.get_by_label("Token").fill(served.token)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(served.url + "/")  # the token left the address bar
    expect(page.get_by_role("heading", name="Agents")).to_be_visible()
    card = page.get_by_test_id("agent-scripted")
    expect(card.locator("h2 .badge")).to_have_text("DISCOVERED")
    shot(page, "agents")
    # Markup in a profile's name stays text.
    expect(card.locator("h2")).to_contain_text("<img src=x onerror=alert('profile')>")
    card.get_by_role("button", name="Live check scripted").click()
    fresh = page.get_by_test_id("agent-scripted")
    expect(fresh.locator("h2 .badge")).to_have_text("READY")
    expect(fresh).to_contain_text("baton-scripted")
    # The sign-in methods the agent advertised are shown, never run (no button).
    expect(fresh.locator(".auth-methods")).to_contain_text("sign-in")
    assert fresh.locator(".auth-methods button").count() == 0
    assert_inert(page, seen)


def test_a_request_without_the_token_gets_the_login_page(
    context: BrowserContext, served: Served
) -> None:
    page = context.pages[0] if context.pages else context.new_page()
    answer = page.goto(served.url + "/inspector/js/main.js")
    assert answer is not None and answer.status == 401
    expect(page.get_by_label("Token")).to_be_visible()
    shot(page, "login")


def test_a_run_streams_its_deltas_and_a_diff(page: tuple[Page, PageWatch], served: Served) -> None:
    pg, seen = page
    run_id = served.start(
        f"write notes/a.txt hello\\nworld; stream {DELTAS}",
        policy="auto-edits",
        allowUnattended=True,
    )
    served.sign_in(pg, f"#/runs/{run_id}")
    expect(pg.get_by_test_id("connection")).to_have_attribute("data-state", "finished")
    wanted = "".join(f"chunk {i}\n" for i in range(1, DELTAS + 1))
    assert transcript_text(pg) == wanted
    tool = pg.locator("li[data-kind='tool_call']").first
    lines = tool.locator(".diff-line").evaluate_all(
        "nodes => nodes.map(n => [n.dataset.kind, n.textContent])"
    )
    assert lines == [["added", "+ hello\n"], ["added", "+ world\n"]]
    expect(tool.locator(".paths")).to_contain_text("notes/a.txt")
    expect(pg.locator("li[data-kind='result']")).to_contain_text("COMPLETED", ignore_case=True)
    pg.get_by_role("button", name="First").click()
    shot(pg, "run")
    assert_inert(pg, seen)


def test_a_permission_is_answered_with_exactly_its_option(
    page: tuple[Page, PageWatch], served: Served
) -> None:
    pg, seen = page
    run_id = served.start("write b.txt data")
    served.sign_in(pg, "#/permissions")
    card = pg.locator(".permission-card")
    expect(card).to_have_count(1)
    expect(card).to_contain_text("Write b.txt")
    # The provider's labels, exactly, of the options Baton offers (it never offers the
    # remembered "Always allow" of an ad-hoc agent: docs/permissions.md).
    buttons = card.locator(".option-buttons button")
    expect(buttons).to_have_text(
        [
            "Allow (allow_once)",
            "Reject (reject_once)",
            "Cancel the request",
        ]
    )
    shot(pg, "permissions")
    allow = card.locator("button[data-id='allow']")
    allow.focus()
    pg.keyboard.press("Enter")  # keyboard operation
    expect(card.locator(".answer-status")).to_contain_text("sent")
    record = served.wait_run(run_id)
    assert record["status"] == "COMPLETED"
    [interaction] = record["interactions"]
    assert interaction["choice"] == "allow" and interaction["chosenBy"] == "user"
    assert (served.cwd / "b.txt").read_text(encoding="utf-8") == "data"
    # What the agent received: the journal's answer to its request names exactly "allow".
    journal = served.api("GET", f"/api/v1/runs/{run_id}/journal?limit=500")
    answers = [
        json.loads(r["raw"])
        for r in journal["records"]
        if r["direction"] == "outbound" and '"outcome"' in r["raw"]
    ]
    assert [a["result"]["outcome"] for a in answers] == [
        {"outcome": "selected", "optionId": "allow"}
    ]
    # Answered: the card says so and cannot send a second answer (it could only be refused).
    expect(card.locator("h2 .badge")).to_have_text("answered")
    expect(allow).to_be_disabled()
    assert not seen.page_errors


def test_hostile_agent_text_runs_nothing(page: tuple[Page, PageWatch], served: Served) -> None:
    pg, seen = page
    prompt = "; ".join(
        [
            f"echo {HOSTILE}",
            f"think {HOSTILE}",
            f"plan {HOSTILE}|<svg onload=alert(3)>",
            f"title {HOSTILE}",
            f"write <img/src=x/onerror=alert(4)>.txt {HOSTILE}\\n<svg onload=alert(5)>",
        ]
    )
    run_id = served.start(prompt)
    served.sign_in(pg, f"#/runs/{run_id}")
    card = pg.locator(".permission-card")
    expect(card).to_have_count(1)
    expect(card.locator(".diff-lines")).to_contain_text(HOSTILE)
    assert_inert(pg, seen)
    card.locator("button[data-id='allow']").click()
    expect(pg.get_by_test_id("connection")).to_have_attribute("data-state", "finished")
    pg.locator("details").evaluate_all("ds => ds.forEach(d => d.open = true)")
    expect(pg.locator("li[data-kind='text']").first).to_contain_text(HOSTILE)
    expect(pg.locator("li[data-kind='thought']").first).to_contain_text(HOSTILE)
    expect(pg.locator("li[data-kind='tool_call']").first).to_contain_text(
        "Write <img/src=x/onerror=alert(4)>.txt"
    )
    assert_inert(pg, seen)
    # The same text in the lists and the journal.
    pg.goto(f"{served.url}/#/runs")
    expect(pg.locator("table")).to_contain_text("echo <img src=x")
    pg.goto(f"{served.url}/#/journal/run/{run_id}")
    expect(pg.get_by_test_id("journal-verification")).to_contain_text("OK", ignore_case=True)
    assert_inert(pg, seen)
    assert not seen.console_errors, seen.console_errors


def test_runs_list_filters_and_journal(page: tuple[Page, PageWatch], served: Served) -> None:
    pg, seen = page
    run_id = served.start("echo listed", policy="auto-edits", allowUnattended=True)
    served.wait_run(run_id)
    served.sign_in(pg, "#/runs")
    expect(pg.locator("table")).to_contain_text(run_id)
    pg.get_by_label("Status").select_option("FAILED")
    pg.get_by_role("button", name="Filter").click()
    expect(pg.locator("table, p.muted").first).not_to_contain_text(run_id)
    pg.get_by_label("Status").select_option("COMPLETED")
    pg.get_by_role("button", name="Filter").click()
    expect(pg.locator("table")).to_contain_text(run_id)
    shot(pg, "runs")
    pg.locator(f"a[href='#/runs/{run_id}']").click()
    expect(pg.get_by_test_id("connection")).to_have_attribute("data-state", "finished")
    expect(pg.locator("li[data-kind='text']")).to_have_text(["agentlisted"])
    pg.get_by_role("link", name="the run's journal records").click()
    expect(pg.get_by_test_id("journal-verification")).to_contain_text("OK", ignore_case=True)
    expect(pg.locator(".journal-record").first).to_be_visible()
    shot(pg, "journal")
    assert not seen.page_errors and not seen.console_errors


def test_a_run_started_from_the_page(page: tuple[Page, PageWatch], served: Served) -> None:
    pg, seen = page
    served.sign_in(pg, "#/runs")
    pg.get_by_text("Start a run").click()
    form = pg.get_by_role("form", name="start a run")
    form.get_by_label("Agent command").fill(AGENT_COMMAND)
    form.get_by_label("Working directory").fill(str(served.cwd))
    form.get_by_label("Prompt").fill("echo started from the page")
    form.get_by_role("button", name="Start").click()
    expect(pg.get_by_test_id("connection")).to_have_attribute("data-state", "finished")
    assert "#/runs/run-" in pg.url
    expect(pg.locator("li[data-kind='text'] .text")).to_have_text(["started from the page"])
    assert not seen.page_errors and not seen.console_errors


def test_the_runs_list_and_a_run_name_its_host(
    page: tuple[Page, PageWatch], served: Served
) -> None:
    pg, seen = page
    run_id = served.start("echo hosted", policy="auto-edits", allowUnattended=True)
    record = served.wait_run(run_id)
    host = record["host"]
    assert host  # the owner column names the service's host (BATON_HOST, else its name)
    served.sign_in(pg, "#/runs")
    headings = pg.locator("table thead th")
    expect(headings).to_contain_text(["run", "status", "agent", "host"])
    column = headings.all_inner_texts().index("host")
    row = pg.locator("table tbody tr", has_text=run_id)
    expect(row.locator("td").nth(column)).to_have_text(host)
    # The data directory's own store is not shared: no workers table.
    expect(pg.get_by_test_id("workers")).to_have_count(0)
    pg.locator(f"a[href='#/runs/{run_id}']").click()
    facts = pg.locator("dl.facts")
    expect(facts.locator("dt", has_text="host")).to_have_count(1)
    expect(facts.locator("dt:text-is('host') + dd")).to_have_text(host)
    assert not seen.page_errors and not seen.console_errors
