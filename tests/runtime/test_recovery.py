"""Recovery: ambiguous outcomes are never replayed, dead generations change nothing, and a
restart finds every interrupted run marked for the user."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from baton.journal import Journal
from baton.runtime.permissions.ask import AskAnswer, AskPrompt
from baton.runtime.runtime import RunRequest, RunResult, Runtime
from baton.runtime.turns.events import RunEvent

AGENT = [sys.executable, "-m", "baton.agents.scripted"]
BATON = [sys.executable, "-m", "baton.cli.main"]


@pytest.fixture
async def runtime(tmp_path: Path) -> AsyncIterator[Runtime]:
    rt = Runtime(data_dir=tmp_path / "data", interrupt_timeout=1.0)
    await rt.open()
    yield rt
    await rt.close()


async def run(
    rt: Runtime, prompt: str, cwd: Path, **kwargs: Any
) -> tuple[RunResult, list[RunEvent]]:
    events: list[RunEvent] = []
    result = await rt.run(
        RunRequest(prompt=prompt, agent_command=AGENT, cwd=str(cwd), **kwargs),
        on_event=events.append,
    )
    return result, events


def prompts_sent(data_dir: Path) -> int:
    journal = Journal.in_data_dir(data_dir)
    return sum(
        1
        for server in journal.servers()
        for record in journal.records(server)
        if record.metadata.method == "session/prompt" and record.direction == "outbound"
    )


@pytest.mark.parametrize(
    "script",
    [
        "crash 3",  # before the agent said anything about the prompt
        "echo partial; crash 4",  # after output began
        "stream 200; crash 5",  # in the middle of a stream
    ],
)
async def test_a_crash_at_each_step_is_recovery_required_and_not_replayed(
    runtime: Runtime, tmp_path: Path, script: str
) -> None:
    result, _ = await run(runtime, script, tmp_path)
    assert result.status == "RECOVERY_REQUIRED"
    assert result.exit_code == 6
    assert runtime.store is not None
    record = runtime.store.get_run(result.run_id)
    assert record.status == "RECOVERY_REQUIRED"
    assert record.prompt_ref is not None
    assert prompts_sent(runtime.data_dir) == 1
    # The lane was quarantined: an idle session can start again on a new process.
    again, _ = await run(runtime, "echo fresh", tmp_path)
    assert again.status == "COMPLETED"
    assert prompts_sent(runtime.data_dir) == 2


class KillingAsker:
    """An asker that kills the agent while its permission request is pending."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    async def ask(self, prompt: AskPrompt) -> AskAnswer:
        [lane] = self.runtime._lanes.values()
        assert lane.process is not None
        os.killpg(lane.process.pid, signal.SIGKILL)
        await asyncio.sleep(30)
        return AskAnswer.user_cancelled()


async def test_a_crash_with_a_permission_pending_never_becomes_an_approval(tmp_path: Path) -> None:
    rt = Runtime(data_dir=tmp_path / "data", interrupt_timeout=1.0)
    rt.asker = KillingAsker(rt)
    async with rt:
        result, events = await run(rt, "write a.txt never", tmp_path)
        assert result.status == "RECOVERY_REQUIRED"
        assert not (tmp_path / "a.txt").exists()
        permissions = [e for e in events if e.type == "permission"]
        assert all(e.data["outcome"] == "cancelled" for e in permissions)


async def test_an_unknown_response_id_quarantines_the_lane(
    runtime: Runtime, tmp_path: Path
) -> None:
    result, _ = await run(runtime, "unknown_id; wait_for_cancel 50", tmp_path)
    assert result.status == "RECOVERY_REQUIRED"
    assert runtime.store is not None
    [lane] = runtime._lanes.values()
    assert not lane.running


async def test_late_messages_of_a_dead_generation_change_nothing(
    runtime: Runtime, tmp_path: Path
) -> None:
    first, _ = await run(runtime, "echo one", tmp_path)
    assert first.status == "COMPLETED"
    [lane] = runtime._lanes.values()
    old_generation = lane.generation
    await lane.quarantine("test quarantine")
    assert lane.generation > old_generation
    late = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "session-1", "update": {"sessionUpdate": "plan", "entries": []}},
    }
    before = lane.fenced_messages
    lane._route_updates(old_generation, [late], [None])
    assert lane.fenced_messages == before + 1
    outcome = await lane._route_permission(
        old_generation,
        _inbound({"sessionId": "session-1", "toolCall": {"toolCallId": "x"}, "options": []}),
    )
    assert outcome == {"outcome": {"outcome": "cancelled"}}
    second, _ = await run(runtime, "echo two", tmp_path)
    assert second.status == "COMPLETED"


def _inbound(params: dict[str, Any]) -> Any:
    from baton.connection import InboundRequest

    return InboundRequest(0, "session/request_permission", params, {"params": params})


async def test_a_second_runtime_reconciles_only_a_dead_owners_runs(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with Runtime(data_dir=data) as rt:
        assert rt.store is not None
        live = rt.store.create_run("mine", status="RUNNING")
        # A second process opening the same store leaves a live owner's run alone...
        async with Runtime(data_dir=data) as other:
            assert live.id not in other.reconciled
        # ...but a run whose owner is dead is reconciled.
        dead = rt.store.create_run("orphan", status="RUNNING")
        rt.store._conn.execute("UPDATE runs SET owner = ? WHERE id = ?", ("999999:1", dead.id))
    async with Runtime(data_dir=data) as later:
        assert dead.id in later.reconciled
        assert later.store is not None
        assert later.store.get_run(dead.id).status == "RECOVERY_REQUIRED"


def _baton(*args: str, data: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [*BATON, *args, "--data-dir", str(data)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if check:
        assert done.returncode == 0, done.stderr
    return done


def test_sigkill_of_baton_mid_turn_is_found_by_the_next_process(tmp_path: Path) -> None:
    data = tmp_path / "data"
    state = tmp_path / "agent-state"
    work = tmp_path / "work"
    work.mkdir()
    agent_command = " ".join([*AGENT, "--state-dir", str(state)])
    proc = subprocess.Popen(
        [
            *BATON,
            "run",
            "--agent-command",
            agent_command,
            "--data-dir",
            str(data),
            "--cwd",
            str(work),
            "--format",
            "json",
            "echo started; wait_for_cancel 50",
        ],
        stdout=subprocess.PIPE,
        stderr=(tmp_path / "baton.stderr").open("wb"),
    )
    assert proc.stdout is not None
    deadline = time.monotonic() + 30
    run_id = None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        event = orjson.loads(line)
        run_id = event["runId"]
        if event["type"] == "text":
            break
    assert run_id is not None, (tmp_path / "baton.stderr").read_text()
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)

    runs = [orjson.loads(line) for line in _baton("runs", "--json", data=data).stdout.splitlines()]
    [record] = [r for r in runs if r["id"] == run_id]
    assert record["status"] == "RECOVERY_REQUIRED"
    assert record["errorCode"] == "RUNTIME_RESTARTED"
    _baton("journal", "verify", "--all", data=data)

    shown = _baton("recover", run_id, data=data).stdout
    assert "never resubmits" in shown and "wait_for_cancel" in shown

    looked = _baton("recover", run_id, "--attach", "--agent-command", agent_command, data=data)
    assert "attached by session/" in looked.stdout
    assert prompts_sent(data) == 1, "attaching to look never resubmits the prompt"

    _baton("recover", run_id, "--mark-failed", data=data)
    runs = [orjson.loads(line) for line in _baton("runs", "--json", data=data).stdout.splitlines()]
    [record] = [r for r in runs if r["id"] == run_id]
    assert record["status"] == "FAILED"
    assert record["errorCode"] == "MARKED_FAILED_BY_USER"


async def test_shutdown_waits_for_a_quarantine_in_flight(tmp_path: Path) -> None:
    """An adapter that ignores stdin EOF must not outlive Baton when a quarantine races the
    runtime's shutdown."""
    from baton.runtime.processes.process import group_alive

    rt = Runtime(data_dir=tmp_path / "data")
    await rt.open()
    request = RunRequest(
        prompt="echo hi", agent_command=[*AGENT, "--eof", "ignore"], cwd=str(tmp_path)
    )
    result = await rt.run(request)
    assert result.status == "COMPLETED"
    [lane] = rt._lanes.values()
    assert lane.process is not None
    pgid = lane.process.pid
    quarantine = asyncio.ensure_future(lane.quarantine("raced by shutdown"))
    await asyncio.sleep(0)
    await rt.close()
    await quarantine
    assert not group_alive(pgid)
    assert not rt.opened
