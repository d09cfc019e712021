"""`baton cancel RUN` on this host (issue 30, item 4): a `baton run` of another process is
interrupted through its own Ctrl-C path (session/cancel, exit 130); an ended run, a run of
a process that is not a `baton run`, and an unknown run are refused with a stable code. The
fleet's half (another host, the engine's abort) is in tests/fleet/test_fleet_cli.py."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from tests.cli.helpers import AGENT, BATON, baton, env, json_lines

from baton.cli.commands.cancel import _is_baton_command

#: How long the test waits for the other process's run to be RUNNING (seconds): generous
#: for a loaded machine; nothing is timed.
RUNNING_DEADLINE = 120.0


def _running_run(tmp_path: Path, process: subprocess.Popen[str]) -> str:
    deadline = time.monotonic() + RUNNING_DEADLINE
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        listed = baton(tmp_path, "runs", "--json", "--limit", "1")
        rows = json_lines(listed.stdout) if listed.returncode == 0 else []
        if rows and rows[0]["status"] == "RUNNING" and rows[0].get("promptRef"):
            return str(rows[0]["runId"] if "runId" in rows[0] else rows[0]["id"])
        time.sleep(0.2)
    raise AssertionError("the run did not start")


def test_cancel_interrupts_a_baton_run_of_another_process(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [*BATON, "run", "--agent-command", AGENT, "wait_for_cancel 100"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        cwd=str(tmp_path),
        env=env(tmp_path),
    )
    try:
        run_id = _running_run(tmp_path, process)
        done = baton(tmp_path, "cancel", run_id[:10])
        assert done.returncode == 0, done.stderr
        assert f"interrupt sent to its `baton` process {process.pid}" in done.stderr
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130, err
    assert "waiting for cancel" in out
    shown = baton(tmp_path, "show", run_id, "--json")
    [record] = json_lines(shown.stdout)
    assert record["status"] == "INTERRUPTED"
    again = baton(tmp_path, "cancel", run_id)
    assert again.returncode == 2 and "RUN_NOT_CANCELLABLE" in again.stderr
    assert "already ended (INTERRUPTED)" in again.stderr


def test_cancel_of_an_unknown_run_is_refused(tmp_path: Path) -> None:
    assert baton(tmp_path, "run", "--agent-command", AGENT, "echo hi").returncode == 0
    done = baton(tmp_path, "cancel", "run-nope", "--json")
    assert done.returncode == 2
    assert "RUN_NOT_FOUND" in done.stderr


def test_only_a_baton_run_process_is_sent_the_interrupt() -> None:
    # This test process is pytest, not `baton run`: never signalled.
    assert not _is_baton_command(os.getpid())
    serve = subprocess.Popen(
        [sys.executable, "-m", "baton", "serve", "--help"], stdout=subprocess.DEVNULL
    )
    try:
        assert not _is_baton_command(serve.pid)
    finally:
        serve.wait()
