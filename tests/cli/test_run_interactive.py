"""`baton run` with the ask policy on a real pseudo-terminal (pexpect)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pexpect

AGENT = f"{sys.executable} -m baton.agents.scripted"


def spawn(tmp_path: Path, prompt: str) -> pexpect.spawn:
    return pexpect.spawn(
        sys.executable,
        [
            "-m",
            "baton.cli.main",
            "run",
            "--data-dir",
            str(tmp_path / "d"),
            "--cwd",
            str(tmp_path),
            "--agent-command",
            AGENT,
            prompt,
        ],
        encoding="utf-8",
        timeout=30,
        cwd=str(tmp_path),
    )


def test_the_user_allows_a_write_at_the_terminal(tmp_path: Path) -> None:
    child = spawn(tmp_path, "write a.txt hello from a person")
    child.expect(r"1\) Allow")
    child.expect("Ctrl-C cancels")
    child.sendline("1")
    child.expect("permission: allow \\(chosen by user\\)")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert (tmp_path / "a.txt").read_text() == "hello from a person"


def test_ctrl_c_at_the_prompt_answers_cancelled(tmp_path: Path) -> None:
    child = spawn(tmp_path, "write b.txt never")
    child.expect("Ctrl-C cancels")
    child.sendcontrol("c")
    child.expect("permission: cancelled")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert not (tmp_path / "b.txt").exists()


def test_a_run_waiting_at_the_terminal_is_awaiting_approval_everywhere(tmp_path: Path) -> None:
    child = spawn(tmp_path, "write a.txt hello")
    child.expect("Ctrl-C cancels")
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "BATON_HOME": str(tmp_path / "d"),
        "BATON_AUTOSTART": "0",
    }

    def runs(*flags: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "baton.cli.main", "runs", *flags],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    [row] = [json.loads(line) for line in runs("--json").splitlines()]
    assert (row["status"], row["pendingQuestions"]) == ("AWAITING_APPROVAL", 1)
    assert row["runId"] == row["id"]  # `id` is the deprecated spelling
    header, line = runs().splitlines()
    assert header.split()[:3] == ["RUN", "STATUS", "WAITING"]
    assert line.split()[1:3] == ["AWAITING_APPROVAL", "1"]
    child.sendline("1")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    [row] = [json.loads(line) for line in runs("--json").splitlines()]
    assert (row["status"], row["pendingQuestions"]) == ("COMPLETED", 0)
    assert "WAITING" not in runs()
