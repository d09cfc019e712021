"""Recovery, the journal, readiness, the service's description and the OpenAPI document."""

from __future__ import annotations

from starlette.routing import Route

from baton.service.app import routes
from baton.service.openapi import OPERATIONS

from .conftest import AGENT, AUTH, Api


async def test_recovery_lists_and_settles_ambiguous_runs(api: Api) -> None:
    store = api.service.runtime.store
    assert store is not None
    run_id = store.create_run("a prompt", policy="ask").id
    await store.update_run_status(run_id, "RUNNING")
    await store.update_run_status(run_id, "RECOVERY_REQUIRED", recovery_reason="test")
    done = await api.start("echo fine")
    await api.finish(done)
    listed = (await api.client.get("/api/v1/recovery", headers=AUTH)).json()["runs"]
    assert [r["id"] for r in listed] == [run_id]
    assert listed[0]["recoverable"] is True and listed[0]["journalTail"] == []
    assert listed[0]["journalIncomplete"] is False
    one = await api.client.get(f"/api/v1/recovery?runId={done}", headers=AUTH)
    assert one.json()["runs"][0]["recoverable"] is False
    refused = await api.client.post(f"/api/v1/recovery/{done}/attach", headers=AUTH)
    assert refused.status_code == 409
    marked = await api.client.post(f"/api/v1/recovery/{run_id}/fail", headers=AUTH)
    assert marked.status_code == 200
    assert marked.json()["status"] == "FAILED"
    assert marked.json()["errorCode"] == "MARKED_FAILED_BY_USER"
    again = await api.client.post(f"/api/v1/recovery/{run_id}/fail", headers=AUTH)
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "RUN_NOT_RECOVERABLE"
    assert (await api.client.get("/api/v1/recovery", headers=AUTH)).json()["runs"] == []


async def test_the_journal_pages_by_sequence(api: Api) -> None:
    run_id = await api.start("echo journaled")
    view = await api.finish(run_id)
    records = []
    after = 0
    pages = 0
    while True:
        page = await api.client.get(
            f"/api/v1/runs/{run_id}/journal?after={after}&limit=3", headers=AUTH
        )
        assert page.status_code == 200
        body = page.json()
        assert body["serverInstanceId"] == view["serverInstanceId"] and body["runId"] == run_id
        assert len(body["records"]) <= 3
        records.extend(body["records"])
        pages += 1
        if body["next"] is None:
            break
        after = body["next"]
    sequences = [r["sequence"] for r in records]
    assert sequences == sorted(sequences) and len(set(sequences)) == len(sequences)
    assert pages > 1
    assert any('"method":"session/prompt"' in r["raw"] for r in records)
    server = body["serverInstanceId"]
    by_server = await api.client.get(f"/api/v1/servers/{server}/journal", headers=AUTH)
    assert by_server.json()["runId"] is None
    assert by_server.json()["records"][0]["sequence"] == sequences[0]
    missing = await api.client.get("/api/v1/servers/nothing-here/journal", headers=AUTH)
    assert missing.status_code == 404


async def test_readiness_is_the_doctors_record(api: Api) -> None:
    answer = await api.client.get("/api/v1/readiness?profile=claude", headers=AUTH)
    assert answer.status_code == 200
    [record] = answer.json()["profiles"]
    assert record["profile"] == "claude"
    assert record["state"] == "NOT_INSTALLED"  # the test's PATH holds no adapter
    assert record["next_action"]
    unknown = await api.client.get("/api/v1/readiness?profile=nope", headers=AUTH)
    assert unknown.status_code == 400
    live = await api.client.post("/api/v1/readiness/claude/live", headers=AUTH)
    assert live.status_code == 200
    assert live.json()["state"] == "NOT_INSTALLED"


async def test_the_description_and_the_openapi_document(api: Api) -> None:
    described = (await api.client.get("/api/v1", headers=AUTH)).json()
    assert described["service"] == "baton" and described["policy"] == "ask"
    document = (await api.client.get("/api/v1/openapi.json", headers=AUTH)).json()
    assert document["openapi"].startswith("3.1")
    served = {
        (method.lower(), route.path.replace(":path}", "}"))
        for route in routes()
        if isinstance(route, Route)
        for method in (route.methods or set()) - {"HEAD"}
    }
    documented = {(op.method, op.path) for op in OPERATIONS}
    assert served == documented
    assert set(document["paths"]) == {path for _method, path in documented}


async def test_the_inspector_is_served_with_its_security_headers(api: Api) -> None:
    page = await api.client.get("/", headers=AUTH)
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert "script-src 'self'" in page.headers["content-security-policy"]
    script = await api.client.get("/inspector/js/api.js", headers=AUTH)
    assert script.status_code == 200 and "javascript" in script.headers["content-type"]
    for name in ("../errors.py", "js/nothing.js", "%2e%2e/x.js"):
        missing = await api.client.get(f"/inspector/{name}", headers=AUTH)
        assert missing.status_code == 404, name
    # API answers carry the same headers (the page's calls are covered by its policy too).
    listed = await api.client.get("/api/v1/runs", headers=AUTH)
    assert listed.headers["x-content-type-options"] == "nosniff"
    assert (await api.client.get("/")).status_code == 401  # the page needs the token too


async def test_attach_to_look_runs_on_the_recorded_session(api: Api) -> None:
    agent = f"{AGENT} --state-dir {api.cwd.parent / 'state'}"
    lost = await api.start("echo before the loss; crash 9", agentCommand=agent)
    view = await api.finish(lost)
    assert view["status"] == "RECOVERY_REQUIRED"
    answer = await api.client.post(f"/api/v1/recovery/{lost}/attach", headers=AUTH)
    assert answer.status_code == 202, answer.text
    assert answer.json()["of"] == lost
    attached = answer.json()["runId"]
    events = await api.events(attached)
    assert events[-1]["data"]["status"] == "COMPLETED", events[-1]
    [session] = [e["data"] for e in events if e["event"] == "session"]
    assert session["attachedBy"] in ("session/resume", "session/load")
    again = (await api.client.get(f"/api/v1/runs/{lost}", headers=AUTH)).json()
    assert again["status"] == "RECOVERY_REQUIRED"  # looking settles nothing
    links = [o["payload"]["recovery"] for o in again["observations"] if "recovery" in o["payload"]]
    assert links == [{"action": "attach", "runId": attached}]
