"""Trajectories through the API: a run and a session as ATIF (checked against the OpenAPI
schema by the conftest's response hook) and as JSON lines; a bad format and an unknown
session refused."""

from __future__ import annotations

import orjson

from .conftest import AUTH, Api, create_session
from .test_sessions import prompt


async def test_a_run_as_atif_and_as_json_lines(api: Api) -> None:
    run_id = await api.start("echo hi; think hmm; cost 7")
    await api.finish(run_id)
    atif = await api.client.get(f"/api/v1/runs/{run_id}/trajectory", headers=AUTH)
    assert atif.status_code == 200, atif.text
    trajectory = atif.json()
    assert trajectory["trajectory_id"] == run_id
    agent = trajectory["steps"][1]
    assert agent["message"] == "hi" and agent["reasoning_content"] == "hmm"
    assert agent["metrics"]["cost_usd"] == 0.07
    lines = await api.client.get(
        f"/api/v1/runs/{run_id}/trajectory", params={"format": "acp-jsonl"}, headers=AUTH
    )
    assert lines.status_code == 200
    assert lines.headers["content-type"].startswith("application/x-ndjson")
    events = [orjson.loads(line) for line in lines.text.splitlines()]
    assert events[0]["type"] == "run_started" and events[-1]["type"] == "result"
    bad = await api.client.get(
        f"/api/v1/runs/{run_id}/trajectory", params={"format": "csv"}, headers=AUTH
    )
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "API_REQUEST_INVALID"
    absent = await api.client.get("/api/v1/runs/run-none/trajectory", headers=AUTH)
    assert absent.status_code == 404


async def test_a_session_as_one_trajectory(api: Api) -> None:
    await create_session(api, "evals")
    for text in ("echo one", "echo two"):
        ticket = await prompt(api, "evals", text)
        await api.events(ticket["runId"])
    answer = await api.client.get("/api/v1/sessions/evals/trajectory", headers=AUTH)
    assert answer.status_code == 200, answer.text
    steps = answer.json()["steps"]
    assert [(s["source"], s["message"]) for s in steps if s["source"] == "agent"] == [
        ("agent", "one"),
        ("agent", "two"),
    ]
    lines = await api.client.get("/api/v1/sessions/evals/trajectory?format=acp-jsonl", headers=AUTH)
    assert [orjson.loads(x)["type"] for x in lines.text.splitlines()].count("result") == 2
    missing = await api.client.get("/api/v1/sessions/nope/trajectory", headers=AUTH)
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "SESSION_NOT_FOUND"
    openapi = (await api.client.get("/api/v1/openapi.json", headers=AUTH)).json()
    content = openapi["paths"]["/api/v1/runs/{run}/trajectory"]["get"]["responses"]["200"]
    assert set(content["content"]) == {"application/json", "application/x-ndjson"}
