"""`baton run` against an agent that streams updates for a session it never created: the run
ends RECOVERY_REQUIRED and the process exits (issue 15, class 1: it used to hang, the lane's
router awaiting a quarantine that waited for the read loop the router ran in)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

AGENT = f"{sys.executable} -m baton.agents.scripted"

#: The wall-clock guard: a hang fails the test instead of stalling the suite. Far above what
#: the run takes (a few seconds on a loaded machine).
WALL_CLOCK_GUARD_SECONDS = 90


@pytest.mark.parametrize("kind", ["text", "tool_call"])
def test_an_update_for_a_never_created_session_ends_the_run_and_the_process(
    tmp_path: Path, kind: str
) -> None:
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "baton.cli.main",
                "run",
                "--agent-command",
                AGENT,
                "--format",
                "json",
                f"echo before; foreign_update {kind}; wait_for_cancel 50",
            ],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=WALL_CLOCK_GUARD_SECONDS,
            cwd=str(tmp_path),
            env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "BATON_HOME": str(tmp_path / "d")},
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"baton run did not exit within {WALL_CLOCK_GUARD_SECONDS} s: {exc.stdout!r}")
    events = [orjson.loads(line) for line in done.stdout.splitlines() if line.strip()]
    result = events[-1]
    assert result["type"] == "result", done.stdout
    assert result["status"] == "RECOVERY_REQUIRED", result
    assert done.returncode == result["exitCode"] != 0
    # The diagnosis names the cause (issue 15, class 4), not only "the agent was lost".
    assert "a session this lane does not own" in result["message"], result
    assert "Traceback" not in done.stderr
