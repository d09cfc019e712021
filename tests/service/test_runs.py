"""Runs through the API: start, list with filters, show, the event stream and its resume,
cancel, and refusals before a run exists."""

from __future__ import annotations

import asyncio
from pathlib import Path

from baton.runtime.runtime import RunRequest
from baton.service.context import ServiceSettings
from baton.views.contract import document
from baton.views.runs import run_view

from .conftest import AGENT, AUTH, Api, make_api


async def test_a_run_starts_at_once_and_streams_the_cli_events(api: Api) -> None:
    run_id = await api.start("echo hello; stream 3")
    events = await api.events(run_id)
    types = [e["event"] for e in events]
    assert types[0] == "run_started" and types[-1] == "result"
    assert [int(e["id"]) for e in events] == list(range(1, len(events) + 1))
    assert all(e["data"]["runId"] == run_id and e["data"]["type"] == e["event"] for e in events)
    text = "".join(e["data"]["text"] for e in events if e["event"] == "text")
    assert text == "hellochunk 1\nchunk 2\nchunk 3\n"
    assert events[-1]["data"]["status"] == "COMPLETED"


async def test_last_event_id_resumes_after_that_event(api: Api) -> None:
    run_id = await api.start("echo one; echo two")
    everything = await api.events(run_id)
    resumed = await api.events(run_id, last="2")
    assert resumed == everything[2:]
    assert await api.events(run_id, last=everything[-1]["id"]) == []
    bad = await api.client.get(
        f"/api/v1/runs/{run_id}/events", headers={**AUTH, "Last-Event-ID": "x"}
    )
    assert bad.status_code == 400


async def test_a_run_this_service_does_not_hold_replays_from_the_store(api: Api) -> None:
    # A run made by the same runtime without the launcher: no feed, only the store.
    result = await api.service.runtime.run(
        RunRequest(prompt="echo stored", agent_command=AGENT, cwd=str(api.cwd))
    )
    events = await api.events(result.run_id)
    assert [e["event"] for e in events] == ["replay"]
    assert events[0]["id"] is None  # not a feed id: Last-Event-ID stays the client's own
    run = events[0]["data"]["run"]
    assert run["status"] == "COMPLETED"
    assert run["items"][0]["content"]["text"] == "stored"


async def test_list_show_and_filters_are_the_cli_contract(api: Api) -> None:
    first = await api.start("echo a")
    await api.finish(first)
    second = await api.start("stop refusal")
    await api.finish(second)
    listed = (await api.client.get("/api/v1/runs", headers=AUTH)).json()["runs"]
    assert [r["id"] for r in listed] == [second, first]
    assert listed[0]["schemaVersion"] == 1 and listed[0]["cwd"] == str(api.cwd.resolve())
    failed = await api.client.get("/api/v1/runs?status=failed", headers=AUTH)
    assert [r["id"] for r in failed.json()["runs"]] == [second]
    by_agent = await api.client.get("/api/v1/runs?agent=custom&limit=1", headers=AUTH)
    assert [r["id"] for r in by_agent.json()["runs"]] == [second]
    assert (await api.client.get("/api/v1/runs?agent=claude", headers=AUTH)).json()["runs"] == []
    by_cwd = await api.client.get(
        "/api/v1/runs", params={"cwd": str(api.cwd.resolve())}, headers=AUTH
    )
    assert len(by_cwd.json()["runs"]) == 2
    limited = await api.client.get("/api/v1/runs?limit=1", headers=AUTH)
    assert len(limited.json()["runs"]) == 1
    assert (await api.client.get("/api/v1/runs?status=nope", headers=AUTH)).status_code == 400
    assert (await api.client.get("/api/v1/runs?limit=0", headers=AUTH)).status_code == 400
    shown = (await api.client.get(f"/api/v1/runs/{first[:10]}", headers=AUTH)).json()
    store = api.service.runtime.store
    assert store is not None
    expected = document(run_view(store, first))
    assert shown == {**expected, "durationSeconds": shown["durationSeconds"]}
    missing = await api.client.get("/api/v1/runs/run-ffffffffffff", headers=AUTH)
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "RUN_NOT_FOUND"


async def test_refusals_before_a_run_exists_keep_their_codes(api: Api) -> None:
    cases = [
        ({"prompt": "hi"}, 400, "API_REQUEST_INVALID"),
        ({"prompt": "hi", "agent": "nope"}, 400, "CONFIG_ERROR"),
        ({"prompt": "", "agentCommand": AGENT}, 400, "API_REQUEST_INVALID"),
        ({"prompt": "hi", "agentCommand": AGENT, "policy": "yolo"}, 400, "API_REQUEST_INVALID"),
        ({"prompt": "hi", "agentCommand": AGENT, "cwd": "rel"}, 400, "API_REQUEST_INVALID"),
        ({"prompt": "hi", "agentCommand": AGENT, "timeout": -1}, 400, "API_REQUEST_INVALID"),
        ({"prompt": "hi", "agentCommand": AGENT, "policy": "full"}, 400, "POLICY_NOT_AVAILABLE"),
    ]
    for body, status, code in cases:
        answer = await api.client.post("/api/v1/runs", json=body, headers=AUTH)
        assert (answer.status_code, answer.json()["error"]["code"]) == (status, code), body
    assert (await api.client.get("/api/v1/runs", headers=AUTH)).json()["runs"] == []


async def test_agent_commands_need_the_services_permission(tmp_path: Path) -> None:
    made, runtime = await make_api(tmp_path, settings=ServiceSettings())
    try:
        answer = await made.client.post(
            "/api/v1/runs", json={"prompt": "hi", "agentCommand": AGENT}, headers=AUTH
        )
        assert answer.status_code == 400
        assert "--allow-agent-command" in answer.json()["error"]["message"]
    finally:
        await made.client.aclose()
        await runtime.close()


async def test_cancel_interrupts_the_turn(api: Api) -> None:
    run_id = await api.start("wait_for_cancel 20")
    for _ in range(200):
        if run_id in api.service.launcher.turns:
            break
        await asyncio.sleep(0.02)
    answer = await api.client.post(f"/api/v1/runs/{run_id}/cancel", headers=AUTH)
    assert answer.status_code == 202
    view = await api.finish(run_id)
    assert view["status"] == "INTERRUPTED"
    again = await api.client.post(f"/api/v1/runs/{run_id}/cancel", headers=AUTH)
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "RUN_NOT_ACTIVE"


async def test_a_stopping_service_takes_no_new_prompt(api: Api) -> None:
    await api.service.launcher.stop(0.1)
    answer = await api.client.post(
        "/api/v1/runs", json={"prompt": "echo hi", "agentCommand": AGENT}, headers=AUTH
    )
    assert answer.status_code == 503
    assert answer.json()["error"]["code"] == "SERVICE_STOPPING"
    described = (await api.client.get("/api/v1", headers=AUTH)).json()
    assert described["stopping"] is True
