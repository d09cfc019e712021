"""Permissions under --policy ask, answered through the API."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from .conftest import AUTH, BASE, Api, make_api


async def pending(api: Api, run_id: str, count: int = 1) -> list[dict[str, Any]]:
    for _ in range(500):
        answer = await api.client.get(f"/api/v1/permissions?runId={run_id}", headers=AUTH)
        found: list[dict[str, Any]] = answer.json()["permissions"]
        if len(found) >= count:
            return found
        await asyncio.sleep(0.02)
    raise AssertionError("no pending permission request")


async def test_an_answer_reaches_the_agent_as_exactly_that_option(api: Api) -> None:
    run_id = await api.start("write a.txt hello")
    [request] = await pending(api, run_id)
    assert request["runId"] == run_id
    assert request["toolCallId"] == "call_1"
    assert request["toolCall"]["kind"] == "edit"  # correlated with the agent's tool_call
    offered = [o["optionId"] for o in request["options"]]
    assert "allow" in offered and "reject" in offered
    wrong = await api.client.post(
        f"/api/v1/permissions/{request['id']}/answer", json={"optionId": "bogus"}, headers=AUTH
    )
    assert wrong.status_code == 422
    assert wrong.json()["error"]["code"] == "PERMISSION_OPTION_NOT_OFFERED"
    both = await api.client.post(
        f"/api/v1/permissions/{request['id']}/answer",
        json={"optionId": "allow", "cancel": True},
        headers=AUTH,
    )
    assert both.status_code == 400
    answer = await api.client.post(
        f"/api/v1/permissions/{request['id']}/answer",
        json={"optionId": "allow"},
        headers={**AUTH, "Origin": BASE},
    )
    assert answer.status_code == 200
    assert answer.json()["outcome"] == "selected"
    view = await api.finish(run_id)
    assert view["status"] == "COMPLETED"
    assert (api.cwd / "a.txt").read_text() == "hello"
    [interaction] = view["interactions"]
    assert interaction["choice"] == "allow" and interaction["chosenBy"] == "user"
    # The answer Baton wrote to the agent (the journal's outbound record) names exactly it.
    journal = await api.client.get(f"/api/v1/runs/{run_id}/journal?limit=500", headers=AUTH)
    answers = [
        r
        for r in journal.json()["records"]
        if r["direction"] == "outbound" and '"outcome":"selected"' in r["raw"]
    ]
    assert len(answers) == 1 and '"optionId":"allow"' in answers[0]["raw"]
    # The run's events announce the request, its close and the decision.
    events = await api.events(run_id)
    assert [e["event"] for e in events].count("permission_request") == 1
    assert [e["event"] for e in events].count("permission_closed") == 1
    [permission] = [e["data"] for e in events if e["event"] == "permission"]
    assert permission["optionId"] == "allow" and permission["chosenBy"] == "user"
    late = await api.client.post(
        f"/api/v1/permissions/{request['id']}/answer", json={"cancel": True}, headers=AUTH
    )
    assert late.status_code == 409
    assert late.json()["error"]["code"] == "PERMISSION_NOT_PENDING"


async def test_cancel_through_the_api_is_a_users_cancel(api: Api) -> None:
    run_id = await api.start("write b.txt hi")
    [request] = await pending(api, run_id)
    answer = await api.client.post(
        f"/api/v1/permissions/{request['id']}/answer", json={"cancel": True}, headers=AUTH
    )
    assert answer.status_code == 200 and answer.json()["outcome"] == "cancelled"
    view = await api.finish(run_id)
    assert not (api.cwd / "b.txt").exists()
    [interaction] = view["interactions"]
    assert interaction["choice"] is None and interaction["chosenBy"] == "user"


async def test_nobody_answering_is_no_user_available(tmp_path: Path) -> None:
    made, runtime = await make_api(tmp_path, permission_wait=0.3)
    try:
        run_id = await made.start("write c.txt hi")
        view = await made.finish(run_id)
        [interaction] = view["interactions"]
        assert interaction["choice"] is None
        assert interaction["chosenBy"] == "default"
        assert interaction["reason"] == "no_user: no user available"  # as the CLI records it
        assert made.service.asker.list() == []
    finally:
        await made.client.aclose()
        await runtime.close()


#: The turn budget of the run whose permission wait it bounds: it must cover the prompt up to
#: the request on a loaded machine; the lane is started first, so it does not also cover the
#: agent's start-up (a 1 s budget that did failed under contention: no request was asked).
WAIT_BOUNDING_BUDGET_SECONDS = 5.0


async def test_a_turn_budget_bounds_the_wait_as_in_the_cli(api: Api) -> None:
    await api.finish(await api.start("echo warm"))  # the lane is up before the budget starts
    run_id = await api.start("write d.txt hi", timeout=WAIT_BOUNDING_BUDGET_SECONDS)
    view = await api.finish(run_id)
    [interaction] = view["interactions"]
    assert interaction["choice"] is None and interaction["chosenBy"] == "default"
    assert api.service.asker.list() == []
