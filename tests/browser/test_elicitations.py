"""The agent's questions (elicitations) answered on a run's page, against a real `baton serve`
and the scripted agent's ``elicit`` mode: a form built from the schema subset, its answer
reaching the agent exactly; a URL shown and never opened by the page."""

from __future__ import annotations

import json
from typing import Any

from playwright.sync_api import Page, Request, expect

from .conftest import PageWatch, Served, shot_path

#: What the scripted agent's ``elicit url`` asks the person to open (nothing listens there).
SCRIPTED_URL = "https://127.0.0.1:9/scripted-sign-in"


def reported(record: dict[str, Any]) -> list[Any]:
    """The answers the scripted agent reported receiving (its text output), in order."""
    text = "".join(i["content"].get("text", "") for i in record["items"] if i["kind"] == "text")
    prefix = "elicitation answer: "
    return [
        json.loads(line[len(prefix) :]) for line in text.splitlines() if line.startswith(prefix)
    ]


def outbound_answers(served: Served, run_id: str) -> list[Any]:
    """Baton's answers to the agent's elicitation/create, from the run's journal."""
    journal = served.api("GET", f"/api/v1/runs/{run_id}/journal?limit=500")
    return [
        json.loads(r["raw"])["result"]
        for r in journal["records"]
        if r["direction"] == "outbound" and '"action"' in r["raw"]
    ]


def test_a_form_is_answered_on_the_runs_page(page: tuple[Page, PageWatch], served: Served) -> None:
    pg, seen = page
    run_id = served.start("elicit form")
    served.sign_in(pg, f"#/runs/{run_id}")
    card = pg.locator(".question-card")
    expect(card).to_have_count(1)
    expect(card).to_contain_text("The scripted agent needs a few details")
    # Titles, required marks and the field kinds of the schema subset.
    expect(card.locator("label[for$='-0']")).to_contain_text("Project name *")
    expect(card.locator("label[for$='-1']")).to_contain_text("Replicas *")
    expect(card.locator("select[name='region'] option")).to_have_text(
        ["— no answer —", "Europe", "Americas"]
    )
    expect(card.locator("input[name='replicas']")).to_have_attribute("type", "number")
    expect(card.locator("input[name='replicas']")).to_have_attribute("max", "5")
    card.locator("input[name='name']").fill("web")
    card.locator("input[name='replicas']").fill("9")
    card.locator("select[name='region']").select_option("us")
    card.locator("select[name='confirm']").select_option("true")
    card.locator("button[data-id='accept']").click()
    # 9 is above the maximum: the service refuses it (422) and the question stays open.
    expect(card.locator(".answer-status")).to_contain_text("ELICITATION_ANSWER_INVALID")
    expect(card.locator(".answer-status")).to_contain_text("replicas")
    pg.screenshot(path=str(shot_path("elicitation-form")), full_page=False)
    card.locator("input[name='replicas']").fill("2")
    card.locator("button[data-id='accept']").click()
    expect(card.locator(".answer-status")).to_contain_text("accept sent")
    record = served.wait_run(run_id)
    assert record["status"] == "COMPLETED", record
    content = {"name": "web", "replicas": 2, "region": "us", "confirm": True}
    assert reported(record) == [{"action": "accept", "content": content}]
    assert outbound_answers(served, run_id) == [{"action": "accept", "content": content}]
    [item] = [i["content"] for i in record["items"] if i["kind"] == "elicitation"]
    assert item["chosenBy"] == "user"
    expect(pg.get_by_test_id("connection")).to_have_attribute("data-state", "finished")
    assert not seen.page_errors and not seen.dialogs, (seen.page_errors, seen.dialogs)


def test_a_url_is_shown_and_never_opened(page: tuple[Page, PageWatch], served: Served) -> None:
    pg, seen = page
    context = pg.context
    requested: list[str] = []

    def on_request(request: Request) -> None:
        requested.append(request.url)

    context.on("request", on_request)
    run_id = served.start("elicit url")
    # The Permissions page lists every run's open questions too.
    served.sign_in(pg, "#/permissions")
    expect(pg.locator(".question-card code")).to_have_text(SCRIPTED_URL)
    pg.goto(f"{served.url}/#/runs/{run_id}")
    card = pg.locator(".question-card")
    expect(card).to_have_count(1)
    expect(card.locator("code")).to_have_text(SCRIPTED_URL)
    link = card.locator("a.external-link")
    expect(link).to_have_attribute("href", SCRIPTED_URL)
    expect(link).to_have_attribute("rel", "noopener noreferrer")
    expect(link).to_have_attribute("target", "_blank")
    pg.screenshot(path=str(shot_path("elicitation-url")), full_page=False)
    pg.wait_for_timeout(1500)  # several polls of the page: still nothing opened
    assert len(context.pages) == 1, [p.url for p in context.pages]
    assert not [u for u in requested if u.startswith("https://127.0.0.1:9")], requested
    card.locator("button[data-id='decline']").click()
    expect(card.locator(".answer-status")).to_contain_text("decline sent")
    record = served.wait_run(run_id)
    assert reported(record) == [{"action": "decline"}]
    assert len(context.pages) == 1
    assert not [u for u in requested if u.startswith("https://127.0.0.1:9")], requested
    assert not seen.page_errors and not seen.dialogs, (seen.page_errors, seen.dialogs)
