"""Runs that exercise every part of a trajectory, made with the scripted agent in-process:
text, thoughts, tool calls with a diff, a granted and a refused permission, usage with a
cost, a claude-style subagent, a crashed turn (RECOVERY_REQUIRED) and a refused one (FAILED) (used by the ATIF tests in tests/atif and
the main suite's structural tests)."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

from baton.runtime.agents.environment import CLAUDE_ENVIRONMENT
from baton.runtime.agents.profiles import EXT_CLAUDE_SUBAGENT_PARENT, LaunchProbe, Profile
from baton.runtime.runtime import RunRequest, Runtime
from baton.runtime.turns.events import RunEvent

AGENT = [sys.executable, "-m", "baton.agents.scripted", "--prompt-usage"]
#: The rich turn: text, a thought, an allowed write (a diff), a shell call the policy does not
#: allow headless, a plan, usage with a cost, more text.
RICH_PROMPT = (
    "echo Looking around.; think The notes file is missing; plan Read | Write | Report; "
    "write notes.txt first line; shell rm -rf build; cost 30; echo Done."
)
SUBAGENT_PROMPT = "echo Delegating.; subagent Explore the code; echo Back."
CRASH_PROMPT = "echo Starting.; crash 3"
#: A script the agent refuses before running it (-32602): a FAILED run.
REFUSED_PROMPT = "echo hi; no_such_command"


@dataclass(frozen=True)
class MadeRuns:
    """The run ids made, by what each shows."""

    rich: str
    subagent: str
    crashed: str
    failed: str


def claude_like_profile() -> Profile:
    """The scripted agent under the claude profile's subagent contract."""
    return Profile(
        id="scripted-claude",
        display_name="Scripted with Claude's subagent contract (test)",
        executables=("baton-scripted-test-agent",),
        override_env="BATON_SCRIPTED_CLAUDE_TEST_BIN",
        launch_argv=(),
        version_argv=None,
        probe=LaunchProbe(("--help",), (re.compile(r"deterministic ACP v1 agent"),)),
        environment=CLAUDE_ENVIRONMENT,
        allowed_policies=("ask",),
        extensions=frozenset({EXT_CLAUDE_SUBAGENT_PARENT}),
    )


async def make_runs(data_dir: Path, work: Path, environ: dict[str, str]) -> MadeRuns:
    """Make the four runs in ``data_dir``'s store, the agent working in ``work``."""
    work.mkdir(parents=True, exist_ok=True)
    exe = work.parent / "scripted-claude.sh"
    exe.write_text(f'#!/bin/sh\nexec {sys.executable} -m baton.agents.scripted "$@"\n')
    exe.chmod(0o755)
    env = {**environ, "BATON_SCRIPTED_CLAUDE_TEST_BIN": str(exe)}
    profiles = {"scripted-claude": claude_like_profile()}
    async with Runtime(data_dir=data_dir, environ=env, profiles=profiles) as rt:
        rich = await rt.run(
            RunRequest(
                prompt=RICH_PROMPT,
                agent_command=AGENT,
                cwd=str(work),
                policy="auto-edits",
                allow_unattended=True,
            )
        )
        sub = await rt.run(
            RunRequest(prompt=SUBAGENT_PROMPT, agent="scripted-claude", cwd=str(work))
        )
        crashed = await rt.run(RunRequest(prompt=CRASH_PROMPT, agent_command=AGENT, cwd=str(work)))
        failed = await rt.run(RunRequest(prompt=REFUSED_PROMPT, agent_command=AGENT, cwd=str(work)))
    return MadeRuns(rich.run_id, sub.run_id, crashed.run_id, failed.run_id)


async def make_streamed_run(data_dir: Path, work: Path, environ: dict[str, str]) -> str:
    """The rich turn with its live events stored as a fleet worker stores them
    (``run_events``, docs/fleet.md); its run id."""
    work.mkdir(parents=True, exist_ok=True)
    live: list[RunEvent] = []
    async with Runtime(data_dir=data_dir, environ=environ) as rt:
        result = await rt.run(
            RunRequest(
                prompt=RICH_PROMPT,
                agent_command=AGENT,
                cwd=str(work),
                policy="auto-edits",
                allow_unattended=True,
            ),
            on_event=live.append,
        )
        assert rt.store is not None
        rt.store.append_run_events(result.run_id, [e.to_dict() for e in live])
    return result.run_id
