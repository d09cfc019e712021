"""Ctrl-C on a real terminal (pexpect): a cancel in progress says what it waits for; a second
Ctrl-C abandons it naming the run and the exact `baton recover` to run."""

from __future__ import annotations

import re
from pathlib import Path

import pexpect

from baton.cli import exit_codes

from .helpers import AGENT, last_run, spawn


def test_ctrl_c_twice_on_an_agent_that_ignores_cancel(tmp_path: Path) -> None:
    child = spawn(tmp_path, "run", "--agent-command", AGENT, "ignore_cancel 50")
    child.expect("ignoring cancel 2")
    child.sendintr()
    # At once, not after the 15 s deadline: what it waits for and how to stop waiting.
    child.expect(r"cancelling: waiting up to 15s for the agent to confirm", timeout=5)
    child.expect("Ctrl-C again", timeout=5)
    child.sendintr()
    child.expect(r"`baton recover (run-[0-9a-f]+)`", timeout=30)
    run_id = child.match.group(1)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == exit_codes.INTERRUPTED
    record = last_run(tmp_path)
    assert record["id"] == run_id and record["status"] == "RECOVERY_REQUIRED"


def test_one_ctrl_c_on_a_cooperative_agent_interrupts(tmp_path: Path) -> None:
    child = spawn(tmp_path, "run", "--agent-command", AGENT, "wait_for_cancel 50")
    child.expect("waiting for cancel 2")
    child.sendintr()
    child.expect("cancelling", timeout=5)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == exit_codes.INTERRUPTED
    assert re.search(r"— cancelled .* run run-", child.before)
