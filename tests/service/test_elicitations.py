"""Elicitations of runs under ask, answered through the API (the scripted agent's ``elicit``
reports the answer it got as agent text, so each test reads what reached the agent)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson

from .conftest import AUTH, BASE, Api, make_api


async def pending(api: Api, run_id: str, after: str | None = None) -> dict[str, Any]:
    """The run's one pending question (other than ``after``, one just answered)."""
    for _ in range(1000):
        answer = await api.client.get(f"/api/v1/elicitations?runId={run_id}", headers=AUTH)
        assert answer.status_code == 200, answer.text
        found: list[dict[str, Any]] = [e for e in answer.json()["elicitations"] if e["id"] != after]
        if found:
            [only] = found
            return only
        await asyncio.sleep(0.02)
    raise AssertionError("no pending elicitation")


async def answer(api: Api, elicitation_id: str, body: dict[str, Any]) -> Any:
    return await api.client.post(
        f"/api/v1/elicitations/{elicitation_id}/answer",
        json=body,
        headers={**AUTH, "Origin": BASE},
    )


def reported(view: dict[str, Any]) -> list[dict[str, Any]]:
    """The answers the agent reported receiving, in order."""
    text = "".join(i["content"].get("text", "") for i in view["items"] if i["kind"] == "text")
    lines = [line for line in text.splitlines() if line.startswith("elicitation answer: ")]
    return [orjson.loads(line.removeprefix("elicitation answer: ")) for line in lines]


def offered(view: dict[str, Any]) -> dict[str, Any]:
    """The clientCapabilities the scripted agent reports it was offered (``offered``)."""
    text = "".join(i["content"].get("text", "") for i in view["items"] if i["kind"] == "text")
    [line] = [line for line in text.splitlines() if line.startswith("client capabilities: ")]
    found: dict[str, Any] = orjson.loads(line.removeprefix("client capabilities: "))
    return found


def elicitation_items(view: dict[str, Any]) -> list[dict[str, Any]]:
    return [i["content"] for i in view["items"] if i["kind"] == "elicitation"]


async def initialize_capabilities(api: Api, run_id: str) -> dict[str, Any]:
    """The clientCapabilities Baton sent in the run's server's initialize (the journal)."""
    journal = await api.client.get(f"/api/v1/runs/{run_id}/journal?limit=500", headers=AUTH)
    for record in journal.json()["records"]:
        if record["direction"] == "outbound" and '"method":"initialize"' in record["raw"]:
            capabilities: dict[str, Any] = orjson.loads(record["raw"])["params"][
                "clientCapabilities"
            ]
            return capabilities
    raise AssertionError("no initialize in the run's journal")


async def test_a_form_answer_reaches_the_agent_exactly(api: Api) -> None:
    run_id = await api.start("elicit form")
    question = await pending(api, run_id)
    assert question["runId"] == run_id and question["mode"] == "form"
    assert question["message"] == "The scripted agent needs a few details"
    fields = {f["name"]: f for f in question["fields"]}
    assert list(fields) == ["name", "replicas", "region", "confirm"]
    assert fields["name"]["required"] and fields["name"]["maxLength"] == 40
    assert fields["replicas"]["type"] == "integer" and fields["replicas"]["maximum"] == 5
    assert fields["region"]["choices"] == [
        {"value": "eu", "title": "Europe"},
        {"value": "us", "title": "Americas"},
    ]
    # An answer that breaks the form is refused and leaves the question pending.
    invalid = await answer(
        api, question["id"], {"action": "accept", "content": {"name": "web", "replicas": 9}}
    )
    assert invalid.status_code == 422
    assert invalid.json()["error"]["code"] == "ELICITATION_ANSWER_INVALID"
    assert "replicas" in invalid.json()["error"]["message"]
    missing = await answer(api, question["id"], {"action": "accept", "content": {"name": "web"}})
    assert missing.status_code == 422
    assert (await pending(api, run_id))["id"] == question["id"]
    bad_action = await answer(api, question["id"], {"action": "maybe"})
    assert bad_action.status_code == 400
    content = {"name": "web", "replicas": 2, "region": "us", "confirm": True}
    ok = await answer(api, question["id"], {"action": "accept", "content": content})
    assert ok.status_code == 200 and ok.json() == {
        "id": question["id"],
        "runId": run_id,
        "action": "accept",
    }
    view = await api.finish(run_id)
    assert view["status"] == "COMPLETED"
    assert reported(view) == [{"action": "accept", "content": content}]
    [record] = elicitation_items(view)
    assert record["chosenBy"] == "user" and record["reasonCode"] == "answered"
    events = await api.events(run_id)
    kinds = [e["event"] for e in events]
    assert kinds.count("elicitation_request") == 1 and kinds.count("elicitation_closed") == 1
    [opened] = [e["data"] for e in events if e["event"] == "elicitation_request"]
    assert opened["id"] == question["id"] and opened["mode"] == "form"
    late = await answer(api, question["id"], {"action": "decline"})
    assert late.status_code == 409
    assert late.json()["error"]["code"] == "ELICITATION_NOT_PENDING"
    unknown = await answer(api, "elic-0000", {"action": "decline"})
    assert unknown.status_code == 404
    assert unknown.json()["error"]["code"] == "ELICITATION_NOT_FOUND"


async def test_decline_and_a_url_that_is_only_shown(api: Api) -> None:
    run_id = await api.start("elicit form; elicit url")
    form = await pending(api, run_id)
    with_content = await answer(api, form["id"], {"action": "decline", "content": {"name": "x"}})
    assert with_content.status_code == 400  # content goes only with accept
    assert (await answer(api, form["id"], {"action": "decline"})).status_code == 200
    url = await pending(api, run_id, after=form["id"])
    assert url["mode"] == "url" and url["url"] == "https://127.0.0.1:9/scripted-sign-in"
    assert url["elicitationId"] and "fields" not in url
    assert (await answer(api, url["id"], {"action": "accept"})).status_code == 200
    view = await api.finish(run_id)
    assert reported(view) == [{"action": "decline"}, {"action": "accept"}]
    assert [r["chosenBy"] for r in elicitation_items(view)] == ["user", "user"]


async def test_nobody_answering_is_declined_no_user(tmp_path: Path) -> None:
    made, runtime = await make_api(tmp_path, elicitation_wait=0.3)
    try:
        run_id = await made.start("elicit form")
        view = await made.finish(run_id)
        assert view["status"] == "COMPLETED"
        assert reported(view) == [{"action": "decline"}]
        [record] = elicitation_items(view)
        assert record["chosenBy"] == "baton" and record["reasonCode"] == "no_user"
        assert made.service.elicitor.list() == []
    finally:
        await made.service.launcher.stop(0.1)
        await made.client.aclose()
        await runtime.close()


async def test_a_cancelled_run_withdraws_its_question(api: Api) -> None:
    run_id = await api.start("elicit form")
    question = await pending(api, run_id)
    cancel = await api.client.post(
        f"/api/v1/runs/{run_id}/cancel", headers={**AUTH, "Origin": BASE}
    )
    assert cancel.status_code == 202
    view = await api.finish(run_id)
    [record] = elicitation_items(view)
    assert record["action"] == "cancel" and record["reasonCode"] == "turn_cancelled"
    assert record["chosenBy"] == "baton"
    assert api.service.elicitor.list() == []
    late = await answer(api, question["id"], {"action": "accept", "content": {}})
    assert late.status_code == 409
    # The agent was answered cancel (the journal's outbound answer to its request).
    journal = await api.client.get(f"/api/v1/runs/{run_id}/journal?limit=500", headers=AUTH)
    answers = [
        r["raw"]
        for r in journal.json()["records"]
        if r["direction"] == "outbound" and '"action"' in r["raw"]
    ]
    assert len(answers) == 1 and '"action":"cancel"' in answers[0]


#: The turn budget of the run whose question the budget withdraws: it must cover the prompt
#: up to the question on a loaded machine (the lane is started beforehand, so it does not
#: also cover the agent's start-up, as a 1 s budget once did and failed under contention).
WITHDRAWING_BUDGET_SECONDS = 5.0


async def test_a_turn_budget_withdraws_its_question(api: Api) -> None:
    await api.finish(await api.start("offered"))  # the lane is up before the budget starts
    run_id = await api.start("elicit form", timeout=WITHDRAWING_BUDGET_SECONDS)
    await pending(api, run_id)
    view = await api.finish(run_id)
    assert view["errorCode"] == "BUDGET_EXPIRED", view
    [record] = elicitation_items(view)
    assert record["action"] == "cancel" and record["reasonCode"] == "turn_cancelled"
    assert api.service.elicitor.list() == []


async def test_an_unattended_run_is_not_offered_elicitation(api: Api) -> None:
    run_id = await api.start("offered; elicit form", policy="full", allowUnattended=True)
    view = await api.finish(run_id)
    assert "elicitation" not in offered(view)  # what the agent says it was offered
    assert "elicitation" not in await initialize_capabilities(api, run_id)
    assert reported(view) == [{"action": "decline"}]
    [record] = elicitation_items(view)
    assert record["reasonCode"] == "mode_not_offered" and record["chosenBy"] == "baton"
    assert api.service.elicitor.list() == []


async def test_a_shared_lane_never_asks_for_an_unattended_run(api: Api) -> None:
    first = await api.start("offered")  # under ask: the lane it starts advertises elicitation
    assert offered(await api.finish(first))["elicitation"] == {"form": {}, "url": {}}
    assert (await initialize_capabilities(api, first))["elicitation"] == {"form": {}, "url": {}}
    run_id = await api.start("elicit form", policy="full", allowUnattended=True)
    view = await api.finish(run_id)
    assert reported(view) == [{"action": "decline"}]
    [record] = elicitation_items(view)
    assert record["reasonCode"] == "no_answerer" and record["chosenBy"] == "baton"
    assert api.service.elicitor.list() == []
