"""The service on either store (issue 22): every run and session names its host, the workers
route, the CANCELLED filter, and on a shared store a session held by another host refuses
writes (SESSION_ON_OTHER_HOST) while it can still be read."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from baton.store.owner import current_host

from .conftest import AUTH, Api, close_api, create_session, make_api

ELSEWHERE = "1:2@host-elsewhere"


@pytest.fixture
async def fleet_api(tmp_path: Path, store_target: Any) -> AsyncIterator[Api]:
    """The service over each backend's store (PostgreSQL skipped without a server)."""
    made, runtime = await make_api(tmp_path, store=store_target.url)
    made.backend = store_target.backend  # type: ignore[attr-defined]
    try:
        yield made
    finally:
        await close_api(made, runtime)


def _set_owner(api: Api, run_id: str, owner: str) -> None:
    """Make a run look owned by a process of another host (what a worker there writes)."""
    store = api.service.runtime.store
    assert store is not None
    store._conn.execute("UPDATE runs SET owner = ? WHERE id = ?", (owner, run_id))


def _session(store: Any) -> str:
    """Any session of the store (a run's session must exist: a foreign key)."""
    return str(store.list_runs(status="COMPLETED")[0].session_id)


async def test_runs_name_their_host_and_cancelled_is_a_filter(fleet_api: Api) -> None:
    api = fleet_api
    here = await api.start("echo here")
    view = await api.finish(here)
    assert view["status"] == "COMPLETED" and view["host"] == current_host()
    store = api.service.runtime.store
    assert store is not None
    there = store.create_run("queued elsewhere").id
    _set_owner(api, there, ELSEWHERE)
    await store.update_run_status(there, "CANCELLED", expected="QUEUED")
    rows = (await api.client.get("/api/v1/runs", headers=AUTH)).json()["runs"]
    assert {row["id"]: row["host"] for row in rows} == {
        here: current_host(),
        there: "host-elsewhere",
    }
    cancelled = await api.client.get("/api/v1/runs?status=cancelled", headers=AUTH)
    assert [row["id"] for row in cancelled.json()["runs"]] == [there]
    assert cancelled.json()["runs"][0]["startedAt"] is None
    shown = (await api.client.get(f"/api/v1/runs/{there}", headers=AUTH)).json()
    assert (shown["status"], shown["host"]) == ("CANCELLED", "host-elsewhere")
    replay = await api.events(there)
    assert replay[0]["event"] == "replay" and replay[0]["data"]["run"]["host"] == "host-elsewhere"
    journal = await api.client.get(f"/api/v1/runs/{here}/journal", headers=AUTH)
    assert journal.status_code == 200 and journal.json()["records"]
    server = store.create_server_instance("custom", "default", 1)
    store.set_run_session(there, session_id=_session(store), server_instance_id=server.id)
    refused = await api.client.get(f"/api/v1/runs/{there}/journal", headers=AUTH)
    assert refused.status_code == 404
    assert refused.json()["error"]["code"] == "JOURNAL_ON_OTHER_HOST"
    assert "host-elsewhere" in refused.json()["error"]["message"]
    document = (await api.client.get("/api/v1/openapi.json", headers=AUTH)).json()
    assert "CANCELLED" in document["components"]["schemas"]["RunStatus"]["enum"]


async def test_the_workers_route_and_the_description(fleet_api: Api) -> None:
    api = fleet_api
    shared = api.backend == "postgresql"  # type: ignore[attr-defined]
    described = (await api.client.get("/api/v1", headers=AUTH)).json()
    assert (described["sharedStore"], described["host"]) == (shared, current_host())
    assert (described["store"] != "" and ":***@" not in described["store"]) or shared
    empty = (await api.client.get("/api/v1/workers", headers=AUTH)).json()
    assert empty == {"workers": [], "shared": shared}
    store = api.service.runtime.store
    assert store is not None
    store.register_worker("w-1", host="host-w", queues=["gpu", "default"], concurrency=3)
    busy = store.create_run("busy", status="RUNNING").id  # owned by this process, as w-1 is
    [worker] = (await api.client.get("/api/v1/workers", headers=AUTH)).json()["workers"]
    assert (worker["name"], worker["host"], worker["queues"], worker["concurrency"]) == (
        "w-1",
        "host-w",
        ["gpu", "default"],
        3,
    )
    assert worker["state"] == "RUNNING" and worker["running"] == [busy]
    assert worker["heartbeatAgeSeconds"] >= 0
    # A queued session pinned to that worker is listed beside the conversations.
    store.pin_session("review-42", worker="w-1", queue="worker:w-1")
    listed = (await api.client.get("/api/v1/sessions", headers=AUTH)).json()
    assert listed["sessions"] == []
    [pinned] = listed["queued"]
    assert (pinned["kind"], pinned["name"], pinned["worker"], pinned["host"]) == (
        "queued",
        "review-42",
        "w-1",
        "host-w",
    )


async def test_a_session_held_by_another_host_is_read_but_not_written(
    tmp_path: Path, postgres_database: str
) -> None:
    api, runtime = await make_api(tmp_path, store=postgres_database)
    try:
        made = await create_session(api, "held-here")
        assert made["host"] == current_host()
        held = await create_session(api, "held-there")
        store = runtime.store
        assert store is not None
        for run in store.list_runs():
            if run.prompt_text.startswith("(baton session new held-there"):
                _set_owner(api, run.id, ELSEWHERE)
        listed = (await api.client.get("/api/v1/sessions", headers=AUTH)).json()["sessions"]
        assert {s["name"]: s["host"] for s in listed} == {
            "held-here": current_host(),
            "held-there": "host-elsewhere",
        }
        shown = (await api.client.get("/api/v1/sessions/held-there", headers=AUTH)).json()
        assert shown["session"]["host"] == "host-elsewhere"
        for path, body in (
            ("prompt", {"prompt": "echo no"}),
            ("close", None),
            ("controls", {"controlId": "x", "value": True, "revision": "r"}),
        ):
            refused = await api.client.post(
                f"/api/v1/sessions/held-there/{path}", json=body, headers=AUTH
            )
            assert refused.status_code == 409, (path, refused.text)
            error = refused.json()["error"]
            assert error["code"] == "SESSION_ON_OTHER_HOST" and "host-elsewhere" in error["message"]
        assert held["status"] == "IDLE"
        assert store.get_conversation("held-there").status == "IDLE"  # nothing was claimed
        assert not any(r.prompt_text == "echo no" for r in store.list_runs())  # nothing ran
        history = await api.client.get("/api/v1/sessions/held-there/history", headers=AUTH)
        assert history.status_code == 200
        # The session held here still takes prompts.
        answer = await api.client.post(
            "/api/v1/sessions/held-here/prompt", json={"prompt": "echo yes"}, headers=AUTH
        )
        assert answer.status_code == 202, answer.text
        events = await api.events(answer.json()["runId"])
        assert events[-1]["data"]["status"] == "COMPLETED"
    finally:
        await api.service.launcher.stop(0.1)
        await api.client.aclose()
        await runtime.close()
