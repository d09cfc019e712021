"""Inspector bugs seen in Chromium (issue 30, item 6), each fixed with a test that failed on the
code before: a run page opened by a unique id prefix, the live header, answered cards, the
transcript's notice labels."""

from __future__ import annotations

from playwright.sync_api import BrowserContext, Page, expect

from .conftest import PageWatch, Served, shot_path


def test_a_run_page_opened_by_a_prefix_shows_its_waiting_request(
    page: tuple[Page, PageWatch], served: Served
) -> None:
    pg, seen = page
    run_id = served.start("write prefix.txt data")
    served.sign_in(pg, f"#/runs/{run_id[:12]}")
    expect(pg.locator("h1 code")).to_have_text(run_id)  # the full id, once resolved
    card = pg.locator(".permission-card")
    expect(card).to_have_count(1)
    expect(card).to_contain_text("Write prefix.txt")
    # The live header follows the run: not stuck at STARTING, with its agent and cwd.
    facts = pg.locator("dl").first
    expect(facts).to_contain_text("AWAITING_APPROVAL")
    expect(facts).to_contain_text(str(served.cwd))
    expect(facts).to_contain_text("custom")
    # The notice label and its text do not run into each other.
    notice = pg.locator("li[data-kind='notice']", has_text="waiting for an answer").first
    label, text = notice.locator(".row-label"), notice.locator(".notice")
    expect(label).to_have_text("permission request")
    label_box, text_box = label.bounding_box(), text.bounding_box()
    assert label_box is not None and text_box is not None
    assert label_box["x"] + label_box["width"] < text_box["x"]
    pg.screenshot(path=str(shot_path("run-prefix-waiting")), full_page=False)
    allow = card.locator("button[data-id='allow']")
    allow.click()
    # Answered: the badge says so and the buttons are no longer live.
    expect(card.locator("h2 .badge")).to_have_text("answered")
    expect(card.locator("button")).to_have_count(3)
    for index in range(3):
        expect(card.locator("button").nth(index)).to_be_disabled()
    expect(pg.get_by_test_id("connection")).to_have_attribute("data-state", "finished")
    expect(facts).to_contain_text("COMPLETED")
    assert served.wait_run(run_id)["status"] == "COMPLETED"
    assert not seen.page_errors


def test_the_login_page_is_styled_and_says_how_in_without_a_terminal(
    context: BrowserContext, served: Served
) -> None:
    page = context.pages[0] if context.pages else context.new_page()
    answer = page.goto(served.url + "/login")
    assert answer is not None and answer.status == 200
    family = page.evaluate("getComputedStyle(document.body).fontFamily")
    assert "serif" not in family.replace("sans-serif", ""), family  # the inspector's font
    expect(page.locator("main")).to_contain_text("baton inspect")
    expect(page.locator("main")).to_contain_text("serve.json")
    expect(page.locator("main")).to_contain_text("without a terminal")
    page.screenshot(path=str(shot_path("login-styled")), full_page=False)
    # The stylesheet is public; the pages' scripts and the API still need the token.
    with_css = page.request.get(served.url + "/inspector/inspector.css")
    assert with_css.status == 200
    assert page.request.get(served.url + "/inspector/js/main.js").status == 401
    assert page.request.get(served.url + "/api/v1/runs").status == 401
