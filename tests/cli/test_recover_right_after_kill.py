"""Issue 30, item 8 (part): `baton recover` right after a SIGKILL of `baton run --session`
offers recovery at once (the killed owner, not yet reaped by its parent, is a zombie: dead),
and attaching uses the session's agent without --agent-command."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from baton.views.recovery import attach_request

from .helpers import AGENT, BATON, baton, env, json_lines

#: Seconds the test waits for the turn to be under way (a bound, not a speed claim).
WAIT_SECONDS = 60.0


def _recover(tmp_path: Path, run_id: str, *args: str) -> subprocess.CompletedProcess[str]:
    return baton(tmp_path, "recover", run_id, *args)


def test_recover_right_after_a_sigkill_offers_recovery_with_the_sessions_agent(
    tmp_path: Path,
) -> None:
    created = baton(tmp_path, "session", "new", "killed", "--agent-command", AGENT)
    assert created.returncode == 0, created.stderr
    owner = subprocess.Popen(
        [*BATON, "run", "--session", "killed", "--json", "echo before the kill; slow 300"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=str(tmp_path),
        env=env(tmp_path),
        text=True,
    )
    try:
        assert owner.stdout is not None
        run_id = json_lines(owner.stdout.readline())[0]["runId"]
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            line = owner.stdout.readline()
            assert line and time.monotonic() < deadline, "the turn never streamed"
            if '"type":"text"' in line:
                break
        owner.send_signal(signal.SIGKILL)
        # Not reaped yet (no wait()): the killed owner is a zombie, which owns nothing.
        deadline = time.monotonic() + WAIT_SECONDS
        while _state(owner.pid) != "Z":
            assert time.monotonic() < deadline, "the killed process never ended"
            time.sleep(0.05)
        shown = _recover(tmp_path, run_id)
        assert shown.returncode == 0, shown.stderr
        assert f"run        {run_id} (RECOVERY_REQUIRED)" in shown.stdout, shown.stdout
        assert "nothing to recover" not in shown.stdout
        assert "session    killed" in shown.stdout
        [view] = json_lines(_recover(tmp_path, run_id, "--json").stdout)
        assert view["conversation"]["name"] == "killed"
    finally:
        owner.kill()
        owner.wait()
    attached = _recover(tmp_path, run_id, "--attach")
    assert attached.returncode == 0, attached.stderr
    assert "pass --agent-command" not in attached.stderr + attached.stdout
    assert f"recovering {run_id}" in attached.stdout


def _state(pid: int) -> str:
    data = Path(f"/proc/{pid}/stat").read_bytes()
    return data[data.rfind(b")") + 2 :].split()[0].decode()


def test_a_run_without_a_recorded_launch_uses_its_sessions_agent() -> None:
    known: dict[str, Any] = {
        "id": "run-1",
        "session": {"provider_session_id": "p-1", "cwd": "/tmp"},
        "server_instance": None,
        "observations": [],
        "conversation": {
            "name": "s",
            "profile": "custom",
            "agentCommand": "my-agent --acp",
            "envKeys": ["TOKEN"],
        },
    }
    request = attach_request(known)
    assert request.agent_command == "my-agent --acp" and request.env_keys == ("TOKEN",)
    profiled = {**known, "conversation": {"name": "s", "profile": "claude", "agentCommand": None}}
    assert attach_request(profiled).agent == "claude"
