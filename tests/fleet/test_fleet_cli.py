"""The fleet's command line as good as `baton run` (issue 30, item 4): `baton submit --wait`
prints a followed queued run with `baton run`'s printer and exits with its codes; `--timeout`
bounds the time a run waits in the queue; a queue no live worker reads is warned about;
`baton cancel` stops a running fleet run from another host through the engine's abort (the
worker interrupts the turn through the run's interrupt path); `baton worker` prints a line
per job and one at stop. Needs a PostgreSQL server (`make test-fleet`)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from typing import Any

import pytest

from baton.store import Store

pytestmark = pytest.mark.slow


async def _baton(env: dict[str, str], *argv: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "baton",
        *argv,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 180)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


def _elsewhere(fleet: Any) -> dict[str, str]:
    """A submitter on "another host" (not a worker's), its own data directory."""
    env = {**os.environ, "BATON_HOST": "submitter-host", "BATON_HOME": str(fleet.root / "sub")}
    env.pop("BATON_STORE", None)
    return env


async def test_submit_wait_prints_the_run_as_baton_run_does(fleet: Any) -> None:
    fleet.start_worker("w1", "default")
    env = _elsewhere(fleet)
    code, out, err = await _baton(
        env,
        "submit",
        "--store",
        fleet.url,
        "--agent-command",
        fleet.agent_command(),
        "--policy",
        "auto-edits",
        "--allow-unattended",
        "--wait",
        r"echo line one\nline two\n; write notes.txt hello; usage 54 1000000",
    )
    assert code == 0, err
    run_id, *reply = out.splitlines()
    assert run_id.startswith("run-")
    assert reply == ["line one", "line two"]  # real newlines, not \x0a
    assert "\\x0a" not in out
    lines = err.splitlines()
    assert any("⚙ edit Write notes.txt" in line and "[completed]" in line for line in lines)
    assert any("✓ permission: allow (chosen by policy)" in line for line in lines)
    summary = next(line for line in lines if line.startswith("— "))
    assert "end_turn" in summary and "1 tool call" in summary and run_id in summary
    assert "54/1,000,000 tokens" in summary
    assert "NO_LIVE_WORKER" not in err  # w1 reads the default queue


async def test_submit_wait_fails_with_the_code_message_and_exit_of_baton_run(
    fleet: Any,
) -> None:
    fleet.start_worker("w1", "default")
    env = _elsewhere(fleet)
    code, _out, err = await _baton(
        env, "submit", "--store", fleet.url, "--agent-command", "no-such-agent-h30", "--wait", "hi"
    )
    assert code == 5, err  # `baton run` exits 5 for an agent that is not there
    assert "AGENT_LAUNCH_FAILED: " in err and "no-such-agent-h30" in err
    assert "next: install the agent" in err
    code, _out, err = await _baton(
        env,
        "submit",
        "--store",
        fleet.url,
        "--agent-command",
        fleet.agent_command(),
        "--wait",
        "stop refusal",
    )
    assert code == 1
    assert "— refusal" in err and "STOP_REFUSAL: the agent stopped the turn: refusal" in err


async def test_a_queue_without_a_live_worker_is_warned_and_timeout_bounds_the_wait(
    fleet: Any,
) -> None:
    env = _elsewhere(fleet)
    code, out, err = await _baton(
        env,
        "submit",
        "--store",
        fleet.url,
        "--queue",
        "nobody-reads",
        "--agent-command",
        fleet.agent_command(),
        "--timeout",
        "2",
        "--wait",
        "echo never",
    )
    assert code == 3, err  # a budget elapsed, as `baton run --timeout` exits
    assert "NO_LIVE_WORKER" in err and "nobody-reads" in err
    assert "BUDGET_EXPIRED: no worker started it within its --timeout of 2s" in err
    run_id = out.splitlines()[0]
    with Store(fleet.url, read_only=True) as store:
        run = store.get_run(run_id)
    assert (run.status, run.error_code) == ("CANCELLED", "BUDGET_EXPIRED")
    # A worker that starts later does not run it.
    fleet.start_worker("late", "nobody-reads")
    await asyncio.sleep(3)
    assert fleet.prompts() == []


async def test_a_worker_expires_a_run_whose_timeout_passed_in_the_queue(fleet: Any) -> None:
    env = _elsewhere(fleet)
    code, out, err = await _baton(
        env,
        "submit",
        "--store",
        fleet.url,
        "--agent-command",
        fleet.agent_command(),
        "--timeout",
        "1",
        "echo too late",
    )
    assert code == 0 and "NO_LIVE_WORKER" in err
    run_id = out.strip()
    await asyncio.sleep(1.5)
    fleet.start_worker("w1", "default")
    runs = await fleet.wait_ended([run_id])
    assert (runs[run_id].status, runs[run_id].error_code) == ("CANCELLED", "BUDGET_EXPIRED")
    assert fleet.prompts() == []


async def test_cancel_from_another_host_interrupts_a_running_fleet_turn(fleet: Any) -> None:
    worker = fleet.start_worker("w1", "default")
    env = _elsewhere(fleet)
    waiter = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "baton",
        "submit",
        "--store",
        fleet.url,
        "--agent-command",
        fleet.agent_command(),
        "--wait",
        "wait_for_cancel 200",
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert waiter.stdout is not None
    run_id = (await asyncio.wait_for(waiter.stdout.readline(), 120)).decode().strip()
    # Wait until the agent is in the turn (its first tick reached the submitter).
    first = await asyncio.wait_for(waiter.stdout.readline(), 120)
    assert first.startswith(b"waiting for cancel")
    other = {**env, "BATON_HOST": "third-host"}
    code, out, err = await _baton(other, "cancel", run_id, "--store", fleet.url, "--json")
    assert code == 0, err
    assert '"how":"aborted"' in out.replace(" ", "")
    _rest, err_bytes = await asyncio.wait_for(waiter.communicate(), 120)
    assert waiter.returncode == 130, err_bytes.decode()
    with Store(fleet.url, read_only=True) as store:
        run = store.get_run(run_id)
    # The normal interrupt path: session/cancel, and the agent's cancelled answer.
    assert run.status == "INTERRUPTED"
    assert "session/cancel" in (run.diagnostic or "")
    code, _out, err = await _baton(other, "cancel", run_id, "--store", fleet.url)
    assert code == 2 and "RUN_NOT_CANCELLABLE" in err and "already ended" in err
    # The worker said so, one line per job, and one line at its stop.
    worker.process.send_signal(signal.SIGTERM)
    worker.process.wait(timeout=60)
    log = worker.log.read_text()
    assert f"▶ {run_id} started" in log
    assert f"■ {run_id} INTERRUPTED" in log
    assert "w1: stopped: 1 job run (1 interrupted)" in log


async def test_cancel_of_a_queued_fleet_run(fleet: Any) -> None:
    env = _elsewhere(fleet)
    code, out, _err = await _baton(
        env, "submit", "--store", fleet.url, "--agent-command", fleet.agent_command(), "echo x"
    )
    run_id = out.strip()
    code, _out, err = await _baton(env, "cancel", run_id[:12], "--store", fleet.url)
    assert code == 0 and "cancelled (no worker had started it)" in err
    with Store(fleet.url, read_only=True) as store:
        assert store.get_run(run_id).status == "CANCELLED"
