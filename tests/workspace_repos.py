"""Temporary git repositories for the workspace tests: set up with hooks, filters and
fsmonitor off and no system or global config, whatever the machine has."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

SAFE = ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"]


def git_env() -> dict[str, str]:
    """The environment of a test's own git commands."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "HOME": os.devnull,
        "GIT_AUTHOR_NAME": "Test",
        "GIT_AUTHOR_EMAIL": "test@example.invalid",
        "GIT_COMMITTER_NAME": "Test",
        "GIT_COMMITTER_EMAIL": "test@example.invalid",
    }


def git(repo: Path, *args: str, check: bool = True) -> str:
    """Run a test's own git command in ``repo`` (hooks and fsmonitor off)."""
    done = subprocess.run(
        ["git", *SAFE, *args],
        cwd=repo,
        env=git_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    if check and done.returncode != 0:
        raise AssertionError(f"git {args}: {done.stderr}")
    return done.stdout


def make_repo(path: Path, files: dict[str, str] | None = None) -> Path:
    """A repository at ``path`` with ``files`` committed (default: three small text files)."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    for name, text in (
        files or {"a.txt": "alpha\n", "b.txt": "beta\n", "c.txt": "gamma\n"}
    ).items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    return path
