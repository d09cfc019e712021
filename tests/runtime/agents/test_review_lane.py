"""Grok's read-only review lane: its own process with the native read-only sandbox, edits and
MCP tools refused by Baton too, writable repository roots rejected, and no unconfined start."""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from baton.errors import ConfigurationError
from baton.runtime.agents.environment import GROK_ENVIRONMENT
from baton.runtime.agents.profiles import GROK, LaunchProbe
from baton.runtime.agents.review_lane import (
    SandboxNotApplied,
    check_review_root,
    check_sandbox_applied,
)
from baton.runtime.runtime import RunRequest, Runtime


@pytest.fixture
def repo() -> Iterator[Path]:
    """A repository outside every location the sandbox lets Grok write (not under /tmp)."""
    path = Path(tempfile.mkdtemp(prefix="baton-review-", dir=Path.home()))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def fake_grok(tmp_path: Path, stderr_line: str = "") -> tuple[Path, Path]:
    """A wrapper standing in for grok: answers the probe, records its argv, speaks ACP."""
    args = tmp_path / "argv.txt"
    script = tmp_path / "grok"
    script.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = "--help" ]; then exec '
        + sys.executable
        + " -m baton.agents.scripted --help; fi\n"
        f'echo "$@" > {args}\n'
        + (f"echo '{stderr_line}' >&2\n" if stderr_line else "")
        + f"exec {sys.executable} -m baton.agents.scripted\n"
    )
    script.chmod(0o755)
    return script, args


def runtime(tmp_path: Path, exe: Path) -> Runtime:
    grok = replace(
        GROK,
        version_argv=None,
        probe=LaunchProbe(("--help",), (re.compile(r"deterministic ACP v1 agent"),)),
        environment=GROK_ENVIRONMENT,
    )
    env = {**os.environ, "BATON_GROK_ACP_BIN": str(exe)}
    return Runtime(data_dir=tmp_path / "data", environ=env, profiles={"grok": grok})


async def test_the_review_lane_runs_with_the_read_only_sandbox_and_refuses_edits(
    tmp_path: Path, repo: Path
) -> None:
    exe, argv = fake_grok(tmp_path)
    async with runtime(tmp_path, exe) as rt:
        events: list = []
        result = await rt.run(
            RunRequest(
                prompt="write notes.txt nope; shell ls",
                agent="grok",
                lane="review",
                policy="full",
                cwd=str(repo),
            ),
            on_event=events.append,
        )
        assert result.status == "COMPLETED"
        assert argv.read_text().split() == [
            "--no-auto-update", "--permission-mode", "default", "--sandbox", "read-only", "agent", "stdio",
        ]  # fmt: skip
        assert not (repo / "notes.txt").exists()
        write, shell = [e.data for e in events if e.type == "permission"]
        assert write["outcome"] == "cancelled"
        assert shell["outcome"] == "selected", "execution is still the policy's to allow"
        [lane_identity] = rt._lanes
        assert lane_identity[2] == "review"


async def test_the_normal_lane_has_no_sandbox_flag(tmp_path: Path, repo: Path) -> None:
    exe, argv = fake_grok(tmp_path)
    async with runtime(tmp_path, exe) as rt:
        result = await rt.run(RunRequest(prompt="echo hi", agent="grok", cwd=str(repo)))
    assert result.status == "COMPLETED"
    assert "--sandbox" not in argv.read_text()


async def test_a_repository_in_a_writable_location_is_rejected(tmp_path: Path) -> None:
    exe, _ = fake_grok(tmp_path)
    async with runtime(tmp_path, exe) as rt:
        with pytest.raises(ConfigurationError) as caught:
            await rt.run(
                RunRequest(prompt="echo hi", agent="grok", lane="review", cwd=str(tmp_path))
            )
    assert caught.value.code == "REVIEW_ROOT_WRITABLE"


async def test_a_sandbox_that_was_not_applied_stops_the_lane(tmp_path: Path, repo: Path) -> None:
    exe, _ = fake_grok(tmp_path, stderr_line="warning: sandbox could not be applied (landlock)")
    async with runtime(tmp_path, exe) as rt:
        result = await rt.run(
            RunRequest(prompt="echo hi", agent="grok", lane="review", cwd=str(repo))
        )
    assert result.status == "FAILED"
    assert result.error_code == "GROK_SANDBOX_NOT_APPLIED"


def test_root_overlap_rules() -> None:
    env = {"HOME": "/home/u", "TMPDIR": "/scratch/tmp"}
    for bad in (
        "/tmp",
        "/tmp/repo",
        "/var/tmp/x",
        "/home/u/.grok",
        "/home/u/.grok/sub",
        "/scratch/tmp/r",
        "/",
    ):
        with pytest.raises(ConfigurationError):
            check_review_root(bad, env)
    check_review_root("/home/u/src/repo", env)


def test_sandbox_report_patterns() -> None:
    check_sandbox_applied("grok starting\nloaded 3 tools\n")
    with pytest.raises(SandboxNotApplied):
        check_sandbox_applied("WARN Sandbox unavailable on this kernel; running unrestricted")


async def test_only_profiles_with_a_sandbox_have_a_review_lane(tmp_path: Path) -> None:
    async with Runtime(data_dir=tmp_path / "d") as rt:
        with pytest.raises(ConfigurationError):
            await rt.run(
                RunRequest(
                    prompt="echo",
                    agent_command=[sys.executable, "-m", "baton.agents.scripted"],
                    lane="review",
                )
            )
