"""``POST /api/v1/sessions/{name}/steer`` (issue 29): the agent's outcome where it steers,
else the text queued as the session's next turn."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

from baton.runtime.agents.environment import CLAUDE_ENVIRONMENT
from baton.runtime.agents.profiles import EXT_SESSION_STEERING, LaunchProbe, Profile

from .conftest import AUTH, Api, close_api, create_session, make_api

OVERRIDE = "BATON_SCRIPTED_STEER_TEST_BIN"


async def _busy(api: Api) -> None:
    runtime = api.service.runtime
    for _ in range(1500):
        if any(s.active for lane in runtime._lanes.values() for s in lane.sessions.values()):
            return
        await asyncio.sleep(0.02)
    raise AssertionError("no turn started")


async def test_an_idle_session_queues_the_text_as_its_next_turn(api: Api) -> None:
    await create_session(api, "idle")
    answer = await api.client.post(
        "/api/v1/sessions/idle/steer", json={"text": "hello later"}, headers=AUTH
    )
    assert answer.status_code == 202, answer.text
    body = answer.json()
    assert (body["outcome"], body["reason"]) == (
        "queued",
        "no turn of this session is running in this process",
    )
    view = await api.finish(body["prompt"]["runId"])
    assert view["status"] == "COMPLETED"
    empty = await api.client.post("/api/v1/sessions/idle/steer", json={"text": ""}, headers=AUTH)
    assert empty.status_code == 400


async def test_a_running_turn_is_steered(tmp_path: Path) -> None:
    exe = tmp_path / "agent.sh"
    exe.write_text(f'#!/bin/sh\nexec {sys.executable} -m baton.agents.scripted --steering "$@"\n')
    exe.chmod(0o755)
    made, runtime = await make_api(tmp_path)
    runtime.environ[OVERRIDE] = str(exe)
    runtime.profiles["scripted-steer"] = Profile(
        id="scripted-steer",
        display_name="Scripted agent with the steering contract (test)",
        executables=("baton-scripted-test-agent",),
        override_env=OVERRIDE,
        launch_argv=(),
        version_argv=None,
        probe=LaunchProbe(("--help",), (re.compile(r"deterministic ACP v1 agent"),)),
        environment=CLAUDE_ENVIRONMENT,
        extensions=frozenset({EXT_SESSION_STEERING}),
    )
    try:
        created = await made.client.post(
            "/api/v1/sessions",
            json={"name": "busy", "agent": "scripted-steer", "cwd": str(made.cwd)},
            headers=AUTH,
        )
        assert created.status_code == 201, created.text
        prompted = await made.client.post(
            "/api/v1/sessions/busy/prompt",
            json={"prompt": "stream 1; slow 2; echo done"},
            headers=AUTH,
        )
        run_id = prompted.json()["runId"]
        await _busy(made)
        answer = await made.client.post(
            "/api/v1/sessions/busy/steer", json={"text": "and the docs"}, headers=AUTH
        )
        assert answer.status_code == 200, answer.text
        assert answer.json()["outcome"] == "injected"
        view = await made.finish(run_id)
        assert view["status"] == "COMPLETED"
        events = await made.events(run_id)
        [steer] = [e["data"] for e in events if e["event"] == "steer"]
        assert (steer["text"], steer["outcome"]) == ("and the docs", "injected")
    finally:
        await close_api(made, runtime)
