"""Running `baton` as a user does: a real subprocess (or a pseudo-terminal), its own data
directory, a PATH without the venv (the bundled agent is started through this interpreter)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pexpect

AGENT = f"{sys.executable} -m baton.agents.scripted"
BATON = [sys.executable, "-m", "baton.cli.main"]


def env(tmp_path: Path, **extra: str) -> dict[str, str]:
    base = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "BATON_HOME": str(tmp_path / "d"),
        "TERM": "xterm",
        # No `baton serve` started in the background by a session's turn (issue 30): a test
        # that wants one says so (BATON_AUTOSTART="1").
        "BATON_AUTOSTART": "0",
    }
    return {**base, **extra}


def baton(
    tmp_path: Path, *args: str, stdin: str | None = None, **extra: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*BATON, *args],
        capture_output=True,
        text=True,
        input=stdin if stdin is not None else "",
        timeout=120,
        cwd=str(tmp_path),
        env=env(tmp_path, **extra),
    )


def json_lines(text: str) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in text.splitlines() if line.strip()]


def last_run(tmp_path: Path) -> dict[str, Any]:
    done = baton(tmp_path, "runs", "--json", "--limit", "1")
    assert done.returncode == 0, done.stderr
    [record] = json_lines(done.stdout)
    return record


def spawn(tmp_path: Path, *args: str, **extra: str) -> pexpect.spawn:
    return pexpect.spawn(
        sys.executable,
        ["-m", "baton.cli.main", *args],
        encoding="utf-8",
        timeout=60,
        cwd=str(tmp_path),
        env={**os.environ, **env(tmp_path, **extra)},
        dimensions=(40, 200),
    )
