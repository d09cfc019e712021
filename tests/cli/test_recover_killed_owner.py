"""`baton recover --json` of a turn whose owner was killed mid-turn shows the plan and tool
calls the journal holds (the owner died before writing them to the store)."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from .helpers import AGENT, BATON, baton, env, json_lines

#: Seconds the test waits for each step (a bound, not a speed claim).
WAIT_SECONDS = 60.0
SCRIPT = "plan first|second; echo streamed before the kill; shell make deploy; slow 300"


def recover(tmp_path: Path, run_id: str) -> dict[str, Any]:
    done = baton(tmp_path, "recover", run_id, "--json")
    assert done.returncode == 0, done.stderr
    [view] = json_lines(done.stdout)
    return view


def journal_shows_the_turn(view: dict[str, Any]) -> bool:
    kinds = {item["kind"] for item in view["items"]}
    return {"plan", "tool_call"} <= kinds


def test_a_killed_cli_owner_leaves_its_turn_recoverable_with_its_output(tmp_path: Path) -> None:
    owner = subprocess.Popen(
        [*BATON, "run", "--agent-command", AGENT, "--json", SCRIPT],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=str(tmp_path),
        env=env(tmp_path),
        text=True,
    )
    try:
        assert owner.stdout is not None
        started = json_lines(owner.stdout.readline())[0]
        run_id = started["runId"]
        deadline = time.monotonic() + WAIT_SECONDS
        while not journal_shows_the_turn(recover(tmp_path, run_id)):
            assert time.monotonic() < deadline, "the turn's updates never reached the journal"
            time.sleep(0.2)
    finally:
        owner.send_signal(signal.SIGKILL)
        owner.wait()
    # The next process settles the dead owner's run (RECOVERY_REQUIRED) and shows its output.
    baton(tmp_path, "run", "--agent-command", AGENT, "echo next")
    view = recover(tmp_path, run_id)
    assert view["status"] == "RECOVERY_REQUIRED"
    assert_journal_output(view)
    text = baton(tmp_path, "recover", run_id)
    assert "- tool_call:" in text.stdout and "- plan:" in text.stdout


def assert_journal_output(view: dict[str, Any]) -> None:
    """The plan and tool call of :data:`SCRIPT`, as the journal holds them: ids, kinds,
    statuses and names (their text is provider content, which the journal keeps redacted)."""
    by_kind = {item["kind"]: item for item in view["items"]}
    assert all(item.get("source") == "journal" for item in view["items"])
    assert [e["status"] for e in by_kind["plan"]["content"]["entries"]] == [
        "completed",
        "in_progress",
    ]
    call = by_kind["tool_call"]["content"]
    assert (call["toolCallId"], call["kind"], call["name"]) == ("call_1", "execute", "Bash")
