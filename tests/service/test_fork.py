"""``POST /api/v1/sessions/{name}/fork`` (issue 29): 201 with the fork's record where the agent
advertises session/fork, its own provider session continuing the parent's context; 422 with
a stable code where it does not, or for ``atTurn`` without Baton's fork extension."""

from __future__ import annotations

from typing import Any

from .conftest import AGENT, AUTH, Api

FORKING = f"{AGENT} --cap sessionCapabilities.fork={{}}"


async def _session(api: Api, name: str, command: str) -> None:
    answer = await api.client.post(
        "/api/v1/sessions",
        json={"name": name, "agentCommand": command, "cwd": str(api.cwd)},
        headers=AUTH,
    )
    assert answer.status_code == 201, answer.text


async def _turn(api: Api, name: str, text: str) -> dict[str, Any]:
    answer = await api.client.post(
        f"/api/v1/sessions/{name}/prompt", json={"prompt": text}, headers=AUTH
    )
    assert answer.status_code == 202, answer.text
    view = await api.finish(answer.json()["runId"])
    assert view["status"] == "COMPLETED", view
    return view


async def _fork(api: Api, name: str, body: dict[str, Any]) -> Any:
    return await api.client.post(f"/api/v1/sessions/{name}/fork", json=body, headers=AUTH)


async def test_a_fork_through_the_api_is_a_session_of_its_own(api: Api) -> None:
    await _session(api, "main", FORKING)
    await _turn(api, "main", "echo one")
    answer = await _fork(api, "main", {"name": "alt"})
    assert answer.status_code == 201, answer.text
    record = answer.json()
    assert (record["name"], record["forkedFrom"], record["forkTurns"]) == ("alt", "main", 1)
    assert record["status"] == "IDLE"
    await _turn(api, "alt", "echo two")
    history = (await api.client.get("/api/v1/sessions/alt/history", headers=AUTH)).json()
    assert [(t["prompt"], t["inheritedFrom"]) for t in history["turns"]] == [
        ("echo one", "main"),
        ("echo two", None),
    ]
    parent = (await api.client.get("/api/v1/sessions/main", headers=AUTH)).json()
    assert parent["session"]["providerSessionId"] != record["providerSessionId"]
    again = await _fork(api, "main", {"name": "alt"})
    assert again.status_code == 409 and again.json()["error"]["code"] == "SESSION_NAME_TAKEN"
    missing = await _fork(api, "nobody", {"name": "x"})
    assert missing.status_code == 404


async def test_refusals_have_stable_codes(api: Api) -> None:
    await _session(api, "plain", AGENT)
    await _turn(api, "plain", "echo one")
    refused = await _fork(api, "plain", {"name": "alt"})
    assert refused.status_code == 422, refused.text
    error = refused.json()["error"]
    assert (
        error["code"] == "SESSION_FORK_NOT_ADVERTISED" and "baton session new" in error["message"]
    )
    await _session(api, "forking", FORKING)
    await _turn(api, "forking", "echo one")
    early = await _fork(api, "forking", {"name": "early", "atTurn": 1})
    assert early.status_code == 422
    assert early.json()["error"]["code"] == "SESSION_FORK_AT_TURN_UNSUPPORTED"
    for bad in (0, "1", True):
        invalid = await _fork(api, "forking", {"name": "early", "atTurn": bad})
        assert invalid.status_code == 400, bad
    names = {
        s["name"]
        for s in (await api.client.get("/api/v1/sessions", headers=AUTH)).json()["sessions"]
    }
    assert names == {"plain", "forking"}
