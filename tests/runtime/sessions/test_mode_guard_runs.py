"""The native-mode guard end to end: the scripted agent advertises modes under flags and a
profile declares them, as claude-agent-acp 0.101.0's ``auto`` start would be."""

from __future__ import annotations

import os
import re
import shlex
import sys
from pathlib import Path
from typing import Any

from baton.runtime.agents.environment import CLAUDE_ENVIRONMENT
from baton.runtime.agents.native_modes import NativeModes
from baton.runtime.agents.profiles import LaunchProbe, Profile
from baton.runtime.runtime import RunRequest, RunResult, Runtime
from baton.runtime.turns.events import RunEvent

OVERRIDE = "BATON_MODES_TEST_BIN"
AUTO = "auto:Claude handles permission decisions"
DEFAULT = "default:Always ask before making changes"
ACCEPT = "acceptEdits:Automatically accept all file edits"


def _profile() -> Profile:
    return Profile(
        id="modal",
        display_name="Modal (test)",
        executables=("baton-modes-test-agent",),
        override_env=OVERRIDE,
        launch_argv=(),
        version_argv=None,
        probe=LaunchProbe(("--help",), (re.compile(r"deterministic ACP v1 agent"),)),
        environment=CLAUDE_ENVIRONMENT,
        allowed_policies=("ask", "auto-edits", "full"),
        native_modes=NativeModes(
            asking=("default",), self_acting=frozenset({"auto", "acceptEdits"})
        ),
    )


def _wrapper(tmp_path: Path, *modes: str) -> Path:
    flags = " ".join(f"--native-mode {shlex.quote(m)}" for m in modes)
    log = tmp_path / "prompts.jsonl"
    path = tmp_path / "agent.sh"
    path.write_text(
        f"#!/bin/sh\nexec {sys.executable} -m baton.agents.scripted {flags} "
        f'--prompt-log {shlex.quote(str(log))} "$@"\n'
    )
    path.chmod(0o755)
    return path


async def _run(
    tmp_path: Path, modes: tuple[str, ...], **request: Any
) -> tuple[RunResult, list[RunEvent], list[dict[str, Any]]]:
    exe = _wrapper(tmp_path, *modes)
    events: list[RunEvent] = []
    env = {**os.environ, OVERRIDE: str(exe)}
    rt = Runtime(data_dir=tmp_path / "data", environ=env, profiles={"modal": _profile()})
    async with rt:
        result = await rt.run(
            RunRequest(prompt="echo done", agent="modal", cwd=str(tmp_path), **request),
            on_event=events.append,
        )
        assert rt.store is not None
        resolved = [o.payload for o in rt.store.list_observations(kind="BATON_RESOLUTION")]
    return result, events, resolved


def _mode_control(events: list[RunEvent]) -> Any:
    [controls] = [e for e in events if e.type == "controls"]
    [mode] = [c for c in controls.data["controls"] if c["group"] == "mode"]
    return mode["value"]


def _prompts(tmp_path: Path) -> list[str]:
    log = tmp_path / "prompts.jsonl"
    return log.read_text().splitlines() if log.exists() else []


async def test_a_session_starting_in_a_self_acting_mode_is_moved_to_one_that_asks(
    tmp_path: Path,
) -> None:
    result, events, resolved = await _run(tmp_path, (AUTO, ACCEPT, DEFAULT))
    assert result.status == "COMPLETED", result.message
    assert _mode_control(events) == "default"
    assert any(p.get("modes", {}).get("currentModeId") == "default" for p in resolved)
    assert result.warnings == []


async def test_no_mode_that_asks_refuses_the_run_before_any_prompt(tmp_path: Path) -> None:
    result, events, _resolved = await _run(tmp_path, (AUTO, ACCEPT))
    assert result.status == "FAILED"
    assert result.error_code == "MODE_ACTS_WITHOUT_ASKING"
    assert result.exit_code == 2
    assert "'auto'" in (result.message or "")
    assert _prompts(tmp_path) == []
    assert not [e for e in events if e.type == "text"]


async def test_an_explicit_self_acting_mode_runs_and_is_said(tmp_path: Path) -> None:
    result, events, _resolved = await _run(tmp_path, (DEFAULT, AUTO), mode="auto")
    assert result.status == "COMPLETED", result.message
    assert _mode_control(events) == "auto"
    [warning] = result.warnings
    assert warning["code"] == "MODE_ACTS_WITHOUT_ASKING"
    assert [e.data["code"] for e in events if e.type == "warning"] == ["MODE_ACTS_WITHOUT_ASKING"]
    assert result.to_event().data["warnings"] == [warning]


async def test_full_keeps_the_starting_mode(tmp_path: Path) -> None:
    result, events, _resolved = await _run(
        tmp_path, (AUTO, DEFAULT), policy="full", allow_unattended=True
    )
    assert result.status == "COMPLETED", result.message
    assert _mode_control(events) == "auto"


async def test_an_agent_command_starting_in_a_bypassing_mode_is_warned_about(
    tmp_path: Path,
) -> None:
    events: list[RunEvent] = []
    command = [
        sys.executable,
        "-m",
        "baton.agents.scripted",
        "--native-mode",
        "yolo:Runs every tool without asking",
        "--native-mode",
        DEFAULT,
    ]
    async with Runtime(data_dir=tmp_path / "data", environ=dict(os.environ)) as rt:
        result = await rt.run(
            RunRequest(prompt="echo done", agent_command=command, cwd=str(tmp_path)),
            on_event=events.append,
        )
    assert result.status == "COMPLETED", result.message
    assert _mode_control(events) == "yolo"
    assert [w["code"] for w in result.warnings] == ["MODE_MAY_BYPASS_APPROVALS"]
