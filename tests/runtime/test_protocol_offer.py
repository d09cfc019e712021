"""Issue 29: which ACP version a run offers, from the profile's declaration and ``--protocol``,
end to end against the scripted agent under ``--protocol auto`` (it speaks the version offered).
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from baton.runtime.agents.environment import CLAUDE_ENVIRONMENT
from baton.runtime.agents.profiles import LaunchProbe, Profile
from baton.runtime.runtime import RunRequest, Runtime
from baton.wire.version import ProtocolChoice


def _profile(*, v2_declared: bool) -> Profile:
    return Profile(
        id="scripted-auto",
        display_name="Scripted agent speaking the offered version (test)",
        executables=("baton-scripted-test-agent",),
        override_env="BATON_SCRIPTED_AUTO_TEST_BIN",
        launch_argv=("--protocol", "auto"),
        version_argv=None,
        probe=LaunchProbe(("--help",), (re.compile(r"deterministic ACP v1 agent"),)),
        environment=CLAUDE_ENVIRONMENT,
        protocol=ProtocolChoice(v2_declared=v2_declared),
    )


@pytest.mark.parametrize(
    ("v2_declared", "pin", "negotiated"),
    [
        (False, None, 1),  # the default: stable v1
        (True, None, 2),  # a profile that declared v2: auto offers 2
        (True, ProtocolChoice(), 2),  # --protocol auto keeps the declaration
        (True, ProtocolChoice(1), 1),  # --protocol 1 wins
        (False, ProtocolChoice(2), 2),  # --protocol 2 is the explicit opt-in
    ],
)
async def test_the_offer_follows_the_declaration_and_the_pin(
    tmp_path: Path, v2_declared: bool, pin: ProtocolChoice | None, negotiated: int
) -> None:
    exe = tmp_path / "agent.sh"
    exe.write_text(f'#!/bin/sh\nexec {sys.executable} -m baton.agents.scripted "$@"\n')
    exe.chmod(0o755)
    env = {**os.environ, "BATON_SCRIPTED_AUTO_TEST_BIN": str(exe)}
    profile = _profile(v2_declared=v2_declared)
    async with Runtime(
        data_dir=tmp_path / "data", environ=env, profiles={profile.id: profile}
    ) as rt:
        request = RunRequest(prompt="echo hi", agent=profile.id, cwd=str(tmp_path), protocol=pin)
        spec = await rt.resolve(request)
        assert spec.protocol.v2_declared is v2_declared
        result = await rt.run(request)
        assert result.status == "COMPLETED", result.message
        lane = next(iter(rt.lanes.values()))
        assert lane.client is not None and lane.client.codec.version == negotiated


async def test_an_ad_hoc_command_never_inherits_a_declaration(tmp_path: Path) -> None:
    async with Runtime(data_dir=tmp_path / "data", environ=dict(os.environ)) as rt:
        request = RunRequest(
            prompt="echo hi",
            agent_command=[sys.executable, "-m", "baton.agents.scripted", "--protocol", "auto"],
            cwd=str(tmp_path),
            protocol=replace(ProtocolChoice(), v2_declared=True),
        )
        spec = await rt.resolve(request)
        assert spec.protocol.offered == 1 and not spec.protocol.v2_declared
