"""`baton run` killed with SIGKILL mid-turn leaves no agent process and no descendant of it:
the keeper ends the tree when its Baton dies (Linux)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .helpers import BATON, env

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's"
)

#: Seconds the test waits for the tree to be gone after the kill (a bound, not a speed claim).
GONE_WITHIN_SECONDS = 20.0


def _marked(marker: str) -> list[int]:
    """Live (not zombie) processes whose command line names ``marker``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        if marker.encode() in cmdline and stat[stat.rfind(")") + 2] != "Z":
            found.append(int(entry))
    return found


def _agent_script(tmp_path: Path) -> Path:
    marker = str(tmp_path)
    sleeper = f"{sys.executable} -c 'import time; time.sleep(600)' {marker}"
    script = tmp_path / "agent.sh"
    script.write_text(
        "#!/bin/sh\n"
        f"{sleeper} &\n"  # a grandchild in the agent's group
        f"setsid {sleeper} &\n"  # one that left the group
        f'exec {sys.executable} -m baton.agents.scripted --prompt-log {marker}/prompts "$@"\n'
    )
    script.chmod(0o755)
    return script


def test_sigkill_of_baton_run_mid_turn_leaves_no_agent_behind(tmp_path: Path) -> None:
    marker = str(tmp_path)
    script = _agent_script(tmp_path)
    child = subprocess.Popen(
        [*BATON, "run", "--agent-command", str(script), "--json", "echo started; slow 300"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=str(tmp_path),
        env=env(tmp_path),
    )
    try:
        deadline = time.monotonic() + GONE_WITHIN_SECONDS * 3
        prompts = tmp_path / "prompts"
        # Mid-turn: the agent has the prompt (its prompt log says so) and pauses in it.
        while not (prompts.exists() and prompts.read_text()) and time.monotonic() < deadline:
            assert child.poll() is None, "baton run ended before the turn started"
            time.sleep(0.05)
        while len(_marked(marker)) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(_marked(marker)) >= 3, "the agent and its two sleepers should be running"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    deadline = time.monotonic() + GONE_WITHIN_SECONDS
    while _marked(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = _marked(marker)
    for pid in left:  # never leave them running, whatever the verdict
        os.kill(pid, signal.SIGKILL)
    assert left == []
