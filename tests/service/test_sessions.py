"""Sessions through the API: create, prompt (run id at once, FIFO queue with positions),
history, controls by {controlId, value, revision} only, cancel, close."""

from __future__ import annotations

import asyncio
from typing import Any

from .conftest import AGENT, AUTH, Api, create_session


async def prompt(api: Api, name: str, text: str) -> dict[str, Any]:
    answer = await api.client.post(
        f"/api/v1/sessions/{name}/prompt", json={"prompt": text}, headers=AUTH
    )
    assert answer.status_code == 202, answer.text
    body: dict[str, Any] = answer.json()
    return body


async def settled(api: Api, name: str, prompt_id: str) -> dict[str, Any]:
    for _ in range(1500):
        answer = await api.client.get(f"/api/v1/sessions/{name}/prompts/{prompt_id}", headers=AUTH)
        body: dict[str, Any] = answer.json()
        if body["state"] in ("ended", "failed"):
            return body
        await asyncio.sleep(0.02)
    raise AssertionError("the prompt never ended")


async def test_a_session_keeps_its_provider_session_across_prompts(api: Api) -> None:
    record = await create_session(api, "fix-login")
    assert record["name"] == "fix-login" and record["status"] == "IDLE"
    first = await prompt(api, "fix-login", "echo one")
    assert first["position"] == 0 and first["runId"]
    events = await api.events(first["runId"])
    assert events[-1]["data"]["status"] == "COMPLETED"
    second = await prompt(api, "fix-login", "echo two")
    again = await api.events(second["runId"])
    sessions = {e["data"]["providerSessionId"] for e in events + again if e["event"] == "session"}
    assert len(sessions) == 1  # the same provider session both times
    history = (await api.client.get("/api/v1/sessions/fix-login/history", headers=AUTH)).json()
    assert [t["reply"] for t in history["turns"]] == ["one", "two"]
    listed = (await api.client.get("/api/v1/sessions", headers=AUTH)).json()["sessions"]
    assert [s["name"] for s in listed] == ["fix-login"]
    shown = (await api.client.get("/api/v1/sessions/fix-login", headers=AUTH)).json()
    assert shown["attachedHere"] is True and shown["queue"] == []
    assert {r["id"] for r in shown["runs"]} >= {first["runId"], second["runId"]}
    taken = await api.client.post(
        "/api/v1/sessions", json={"name": "fix-login", "agentCommand": AGENT}, headers=AUTH
    )
    assert taken.status_code == 409 and taken.json()["error"]["code"] == "SESSION_NAME_TAKEN"
    missing = await api.client.post(
        "/api/v1/sessions/nope/prompt", json={"prompt": "hi"}, headers=AUTH
    )
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "SESSION_NOT_FOUND"


async def test_prompts_to_a_busy_session_queue_in_order(api: Api) -> None:
    await create_session(api, "queue")
    running = await prompt(api, "queue", "slow 0.5; echo first")
    queued = [await prompt(api, "queue", f"echo later {i}") for i in range(2)]
    assert running["position"] == 0 and running["runId"]
    assert [q["position"] for q in queued] == [1, 2]
    assert all(q["runId"] is None and q["state"] == "queued" for q in queued)
    shown = (await api.client.get("/api/v1/sessions/queue", headers=AUTH)).json()
    assert [q["promptId"] for q in shown["queue"]] == [
        running["promptId"],
        *(q["promptId"] for q in queued),
    ]
    ends = [await settled(api, "queue", q["promptId"]) for q in queued]
    assert all(e["state"] == "ended" and e["runId"] for e in ends)
    history = (await api.client.get("/api/v1/sessions/queue/history", headers=AUTH)).json()
    assert [t["reply"] for t in history["turns"]] == ["first", "later 0", "later 1"]


async def test_controls_take_only_a_current_revision_between_turns(api: Api) -> None:
    await create_session(api, "ctl")
    controls = (await api.client.get("/api/v1/sessions/ctl/controls", headers=AUTH)).json()
    revision = controls["revision"]
    mutable = [c for c in controls["controls"] if c["mutable"]]
    assert mutable, controls
    control = next(c for c in mutable if c["type"] == "SELECT")
    other = next(ch["value"] for ch in control["choices"] if ch["value"] != control["value"])
    url = "/api/v1/sessions/ctl/controls"
    stale = await api.client.post(
        url, json={"controlId": control["id"], "value": other, "revision": "0" * 64}, headers=AUTH
    )
    assert stale.status_code == 409
    assert stale.json()["error"]["code"] == "CONTROL_REVISION_STALE"
    wrong = await api.client.post(
        url, json={"controlId": control["id"], "value": True, "revision": revision}, headers=AUTH
    )
    assert wrong.status_code == 422 and wrong.json()["error"]["code"] == "CONTROL_WRONG_TYPE"
    bogus = await api.client.post(
        url,
        json={"controlId": control["id"], "value": "not-offered", "revision": revision},
        headers=AUTH,
    )
    assert bogus.status_code == 422
    assert bogus.json()["error"]["code"] == "CONTROL_CHOICE_NOT_ADVERTISED"
    raw = await api.client.post(
        url,
        json={"controlId": control["id"], "value": other, "revision": revision, "method": "x"},
        headers=AUTH,
    )
    assert raw.status_code == 400  # nothing but {controlId, value, revision}
    changed = await api.client.post(
        url, json={"controlId": control["id"], "value": other, "revision": revision}, headers=AUTH
    )
    assert changed.status_code == 200, changed.text
    now = {c["id"]: c["value"] for c in changed.json()["controls"]}
    assert now[control["id"]] == other and changed.json()["revision"] != revision
    busy_turn = await prompt(api, "ctl", "slow 1; echo done")
    busy = await api.client.post(
        url,
        json={"controlId": control["id"], "value": control["value"], "revision": "x"},
        headers=AUTH,
    )
    assert busy.status_code == 409 and busy.json()["error"]["code"] == "CONTROL_BUSY"
    await api.events(busy_turn["runId"])


async def test_cancel_and_close(api: Api) -> None:
    await create_session(api, "stop-me")
    turn = await prompt(api, "stop-me", "wait_for_cancel 20")
    for _ in range(500):
        if turn["runId"] in api.service.runtime.runs:
            break
        await asyncio.sleep(0.02)
    cancelled = await api.client.post("/api/v1/sessions/stop-me/cancel", headers=AUTH)
    assert cancelled.status_code == 202
    events = await api.events(turn["runId"])
    assert events[-1]["data"]["status"] == "INTERRUPTED"
    idle = await api.client.post("/api/v1/sessions/stop-me/cancel", headers=AUTH)
    assert idle.status_code == 409
    closed = await api.client.post("/api/v1/sessions/stop-me/close", headers=AUTH)
    assert closed.status_code == 200 and closed.json()["status"] == "CLOSED"
    refused = await api.client.post(
        "/api/v1/sessions/stop-me/prompt", json={"prompt": "echo hi"}, headers=AUTH
    )
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "SESSION_CLOSED"
