"""Baton against the official SDKs' experimental ACP v2 agents (Python 1.0.0rc3, TypeScript
2.4.0): a text turn, a tool call with a diff, a permission request, a cancel, and resume.
Baton runs them with ``--protocol 2``: the explicit opt-in (issue 29: ``auto`` offers the stable
1, which these v2-only agents refuse with -32602)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from baton.runtime.run import Run
from baton.runtime.runtime import RunRequest, RunResult, Runtime
from baton.runtime.turns.events import RunEvent
from baton.wire.version import ProtocolChoice

#: The explicit opt-in to the v2 draft these agents need.
V2 = ProtocolChoice(2)


@pytest.fixture
async def runtime(tmp_path: Path) -> AsyncIterator[Runtime]:
    rt = Runtime(data_dir=tmp_path / "data", environ=dict(os.environ), interrupt_timeout=10.0)
    await rt.open()
    yield rt
    await rt.close()


async def run(
    rt: Runtime, agent: list[str], prompt: str, cwd: Path, **kwargs: Any
) -> tuple[RunResult, list[RunEvent]]:
    events: list[RunEvent] = []
    interrupt_on_text = kwargs.pop("interrupt_on_text", False)
    runs: list[Run] = []

    def on_event(event: RunEvent) -> None:
        events.append(event)
        if interrupt_on_text and event.type == "text" and runs:
            runs[0].interrupt_nowait("user")

    kwargs.setdefault("protocol", V2)
    request = RunRequest(prompt=prompt, agent_command=agent, cwd=str(cwd), **kwargs)
    runs.append(await rt.start(request, on_event=on_event))
    return await runs[0].result(), events


def texts(events: list[RunEvent]) -> str:
    return "".join(e.data["text"] for e in events if e.type == "text")


def states(events: list[RunEvent]) -> list[str]:
    return [e.data["state"] for e in events if e.type == "state"]


async def test_a_text_turn(runtime: Runtime, sdk_agent: list[str], tmp_path: Path) -> None:
    result, events = await run(runtime, sdk_agent, "text", tmp_path)
    assert (result.status, result.stop_reason, result.exit_code) == ("COMPLETED", "end_turn", 0)
    assert texts(events).startswith("Hello from the ") and texts(events).endswith("SDK agent.")
    assert states(events) == ["running", "idle"]
    lane = next(iter(runtime._lanes.values()))
    assert lane.client is not None and lane.client.codec.version == 2


async def test_a_tool_call_with_a_diff(
    runtime: Runtime, sdk_agent: list[str], tmp_path: Path
) -> None:
    result, events = await run(runtime, sdk_agent, "diff", tmp_path)
    assert result.status == "COMPLETED" and result.tool_calls == 1
    calls = [e.data for e in events if e.type == "tool_call"]
    assert calls[0]["status"] == "in_progress" and calls[0]["kind"] == "edit"
    final = calls[-1]
    assert final["status"] == "completed"
    assert final["paths"] == [str(tmp_path / "a.txt")]
    diff = final["diff"]
    assert (diff["files"], diff["added"], diff["removed"]) == (1, 2, 1)
    # The inspector's view of it: the changed path and the git patch (v2 sends no texts).
    change = diff["changes"][0]
    assert change["path"] == str(tmp_path / "a.txt") and change["oldText"] is None
    assert change["patch"].startswith("diff --git a/a.txt b/a.txt")


async def test_a_permission_request_allowed_by_policy(
    runtime: Runtime, sdk_agent: list[str], tmp_path: Path
) -> None:
    result, events = await run(
        runtime, sdk_agent, "permission", tmp_path, policy="auto-edits", allow_unattended=True
    )
    assert result.status == "COMPLETED"
    assert "permission: selected allow" in texts(events)
    asked = [e.data for e in events if e.type == "permission"]
    assert asked and asked[0]["toolCallId"] == "write-1" and asked[0]["chosenBy"] == "policy"
    assert states(events) == ["running", "requires_action", "running", "idle"]


async def test_a_permission_request_nobody_answers_is_cancelled(
    runtime: Runtime, sdk_agent: list[str], tmp_path: Path
) -> None:
    result, events = await run(runtime, sdk_agent, "permission", tmp_path)
    assert result.status == "COMPLETED"
    assert "permission: cancelled" in texts(events)


async def test_a_cancel(runtime: Runtime, sdk_agent: list[str], tmp_path: Path) -> None:
    # Interrupted once the turn streams (its first text), through the run's handle.
    result, events = await run(runtime, sdk_agent, "wait", tmp_path, interrupt_on_text=True)
    assert (result.status, result.stop_reason, result.exit_code) == (
        "INTERRUPTED",
        "cancelled",
        130,
    )
    assert "tick 1" in texts(events)


async def test_resume(runtime: Runtime, sdk_agent: list[str], tmp_path: Path) -> None:
    first, _ = await run(runtime, sdk_agent, "text", tmp_path)
    assert first.status == "COMPLETED" and first.provider_session_id is not None
    second, events = await run(
        runtime, sdk_agent, "text", tmp_path, attach_session=first.provider_session_id
    )
    assert second.status == "COMPLETED", second
    session = next(e.data for e in events if e.type == "session")
    assert session["attachedBy"] == "session/resume"
    assert session["providerSessionId"] == first.provider_session_id
    assert texts(events).endswith("SDK agent.")
