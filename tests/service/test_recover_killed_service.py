"""A turn of `baton serve` left RECOVERY_REQUIRED by a SIGKILL of the service: `baton recover
--json` shows the plan and tool calls the journal holds for it."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import orjson
from tests.cli.helpers import baton
from tests.cli.test_recover_killed_owner import SCRIPT, assert_journal_output

from .test_serve_e2e import AGENT, launch

#: Seconds each step may take (a bound, not a speed claim).
WAIT_SECONDS = 60.0


def _baton(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return baton(data_dir.parent, *args, BATON_HOME=str(data_dir))


def _view(data_dir: Path, run_id: str) -> dict[str, Any]:
    done = _baton(data_dir, "recover", run_id, "--json")
    assert done.returncode == 0, done.stderr
    view: dict[str, Any] = orjson.loads(done.stdout)
    return view


def test_a_killed_service_leaves_its_turn_recoverable_with_its_output(tmp_path: Path) -> None:
    served = launch(tmp_path)
    try:
        run_id = served.start(SCRIPT)
        deadline = time.monotonic() + WAIT_SECONDS
        # Mid-turn: the journal holds the plan and the tool call, the store none of them.
        while not {"plan", "tool_call"} <= {
            i["kind"] for i in _view(served.data_dir, run_id)["items"]
        }:
            assert time.monotonic() < deadline, "the turn never reached its tool call"
            time.sleep(0.2)
    finally:
        served.process.send_signal(signal.SIGKILL)
        served.process.wait()
    # The next process on the data directory settles the dead service's run.
    _baton(served.data_dir, "run", "--agent-command", AGENT, "echo next")
    view = _view(served.data_dir, run_id)
    assert view["status"] == "RECOVERY_REQUIRED"
    assert_journal_output(view)
