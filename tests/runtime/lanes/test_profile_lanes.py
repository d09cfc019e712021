"""Profile-launched lanes: discovery feeds the lane identity, and a changed executable restarts
an idle lane but never terminates an active prompt."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from baton.errors import AgentNotInstalled
from baton.runtime.agents.environment import CLAUDE_ENVIRONMENT
from baton.runtime.agents.profiles import LaunchProbe, Profile
from baton.runtime.runtime import RunRequest, Runtime

OVERRIDE = "BATON_SCRIPTED_TEST_BIN"


def scripted_profile() -> Profile:
    return Profile(
        id="scripted",
        display_name="Scripted (test)",
        executables=("baton-scripted-test-agent",),
        override_env=OVERRIDE,
        launch_argv=(),
        version_argv=None,
        probe=LaunchProbe(("--help",), (re.compile(r"deterministic ACP v1 agent"),)),
        environment=CLAUDE_ENVIRONMENT,
        allowed_policies=("ask", "auto-edits", "full"),
    )


def wrapper(path: Path, marker: str) -> Path:
    path.write_text(f'#!/bin/sh\n# {marker}\nexec {sys.executable} -m baton.agents.scripted "$@"\n')
    path.chmod(0o755)
    return path


def runtime_for(tmp_path: Path, executable: Path) -> Runtime:
    env = {**os.environ, OVERRIDE: str(executable)}
    return Runtime(
        data_dir=tmp_path / "data", environ=env, profiles={"scripted": scripted_profile()}
    )


async def test_a_profile_run_goes_through_discovery(tmp_path: Path) -> None:
    exe = wrapper(tmp_path / "agent.sh", "v1")
    async with runtime_for(tmp_path, exe) as rt:
        result = await rt.run(
            RunRequest(prompt="echo via profile", agent="scripted", cwd=str(tmp_path))
        )
        assert result.status == "COMPLETED"
        assert result.text == "via profile"
        [identity] = rt._lanes
        assert identity == ("scripted", str(exe), "default")


async def test_a_changed_executable_restarts_an_idle_lane(tmp_path: Path) -> None:
    exe = wrapper(tmp_path / "agent.sh", "v1")
    async with runtime_for(tmp_path, exe) as rt:
        first = await rt.run(RunRequest(prompt="echo one", agent="scripted", cwd=str(tmp_path)))
        [old_lane] = rt._lanes.values()
        old_server = old_lane.server_id
        wrapper(exe, "v2 with a different size")
        second = await rt.run(RunRequest(prompt="echo two", agent="scripted", cwd=str(tmp_path)))
        assert first.status == second.status == "COMPLETED"
        [new_lane] = rt._lanes.values()
        assert new_lane is not old_lane
        assert new_lane.server_id != old_server
        assert rt.store is not None
        assert old_server is not None
        assert rt.store.get_server_instance(old_server).state == "EXITED"


async def test_a_changed_executable_never_terminates_a_busy_lane(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    exe = wrapper(tmp_path / "agent.sh", "v1")
    async with runtime_for(tmp_path, exe) as rt:
        await rt.run(RunRequest(prompt="echo one", agent="scripted", cwd=str(tmp_path)))
        [old_lane] = rt._lanes.values()
        monkeypatch.setattr(type(old_lane), "busy", property(lambda self: self is old_lane))
        wrapper(exe, "v2 with a different size")
        events = []
        result = await rt.run(
            RunRequest(prompt="echo two", agent="scripted", cwd=str(tmp_path)),
            on_event=events.append,
        )
        assert result.status == "COMPLETED"
        assert old_lane.running, "the busy lane keeps running"
        assert any(
            e.type == "warning" and e.data["code"] == "RUNTIME_RESTART_REQUIRED" for e in events
        )


async def test_a_missing_executable_is_not_installed(tmp_path: Path) -> None:
    async with runtime_for(tmp_path, tmp_path / "nope") as rt:
        with pytest.raises(AgentNotInstalled):
            await rt.run(RunRequest(prompt="echo", agent="scripted", cwd=str(tmp_path)))


async def test_the_exact_plan_gate_message_fails_the_turn_retryably(tmp_path: Path) -> None:
    """Cursor reports its usage gate as ordinary text followed by end_turn."""
    from dataclasses import replace

    exe = wrapper(tmp_path / "agent.sh", "v1")
    gated = replace(scripted_profile(), terminal_failure_text="Upgrade your plan to continue")
    env = {**os.environ, OVERRIDE: str(exe)}
    async with Runtime(data_dir=tmp_path / "data", environ=env, profiles={"scripted": gated}) as rt:
        gate = await rt.run(
            RunRequest(
                prompt="echo Upgrade your plan to continue", agent="scripted", cwd=str(tmp_path)
            )
        )
        assert (gate.status, gate.stop_reason, gate.exit_code) == ("FAILED", "end_turn", 1)
        assert gate.retryable and gate.error_code == "PROVIDER_USAGE_GATE"
        assert gate.text == "Upgrade your plan to continue"
        other = await rt.run(
            RunRequest(
                prompt="echo Upgrade your plan to continue, please",
                agent="scripted",
                cwd=str(tmp_path),
            )
        )
        assert other.status == "COMPLETED", "only the complete message is the gate"
        empty = await rt.run(
            RunRequest(prompt="stop end_turn", agent="scripted", cwd=str(tmp_path))
        )
        assert empty.status == "COMPLETED"
