"""A reader that leaves is not the agent's fault: real pipes, real subprocesses."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from baton.cli import exit_codes

from .helpers import AGENT, BATON, baton, env, json_lines, last_run


def closed_reader(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    """`baton ARGS` writing into a pipe whose reader is already gone."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [*BATON, *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            timeout=120,
            cwd=str(tmp_path),
            env=env(tmp_path),
        )
    finally:
        os.close(write_end)


@pytest.mark.parametrize("fmt", [[], ["--json"]])
def test_head_ends_the_turn_cleanly_not_ambiguously(tmp_path: Path, fmt: list[str]) -> None:
    proc = subprocess.Popen(
        [*BATON, "run", "--agent-command", AGENT, *fmt, "stream 200000"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        cwd=str(tmp_path),
        env=env(tmp_path),
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.readline()
    proc.stdout.close()  # `| head -2`
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == exit_codes.PIPE_CLOSED, stderr
    assert "Traceback" not in stderr and "AGENT_MUTATION_AMBIGUOUS" not in stderr
    record = last_run(tmp_path)
    assert record["status"] == "INTERRUPTED", (  # cancelled cleanly, not RECOVERY_REQUIRED
        record.get("errorCode"),
        record.get("recoveryReason"),
        stderr,
    )


@pytest.mark.parametrize(
    "args", [["runs"], ["runs", "--json"], ["show", "run-"], ["journal", "show", "run-"]]
)
def test_listing_verbs_stop_quietly(tmp_path: Path, args: list[str]) -> None:
    assert baton(tmp_path, "run", "--agent-command", AGENT, "echo hi").returncode == 0
    done = closed_reader(tmp_path, *args)
    assert done.returncode == exit_codes.PIPE_CLOSED, done.stderr
    assert b"Traceback" not in done.stderr and b"BrokenPipe" not in done.stderr


def test_a_closed_stdout_before_the_turn_still_cancels_cleanly(tmp_path: Path) -> None:
    done = closed_reader(tmp_path, "run", "--agent-command", AGENT, "--json", "stream 50 100")
    assert done.returncode == exit_codes.PIPE_CLOSED, done.stderr
    assert b"Traceback" not in done.stderr
    assert last_run(tmp_path)["status"] != "RECOVERY_REQUIRED"
    assert json_lines(baton(tmp_path, "runs", "--json").stdout)
