"""Steering a running turn (issue 29) against the scripted agent under ``--steering``, through
a profile with the steering extension: injected into the running turn, never by cancelling
it; queued as the next turn where the agent does not advertise it or no turn runs. Both ACP
versions."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from baton.errors import InvalidArgument
from baton.journal import Journal
from baton.runtime.agents.environment import CLAUDE_ENVIRONMENT
from baton.runtime.agents.profiles import EXT_SESSION_STEERING, LaunchProbe, Profile
from baton.runtime.conversations import QUEUED, Conversations, NewConversation
from baton.runtime.runtime import Runtime
from baton.runtime.turns.events import RunEvent

OVERRIDE = "BATON_SCRIPTED_STEER_TEST_BIN"


def _profile(*, extension: bool, flags: tuple[str, ...]) -> Profile:
    return Profile(
        id="scripted-steer",
        display_name="Scripted agent with the steering contract (test)",
        executables=("baton-scripted-test-agent",),
        override_env=OVERRIDE,
        launch_argv=flags,
        version_argv=None,
        probe=LaunchProbe(("--help",), (re.compile(r"deterministic ACP v1 agent"),)),
        environment=CLAUDE_ENVIRONMENT,
        extensions=frozenset({EXT_SESSION_STEERING}) if extension else frozenset(),
    )


@pytest.fixture(params=[(), ("--protocol", "2")], ids=["v1", "v2"])
def protocol(request: pytest.FixtureRequest) -> tuple[str, ...]:
    return tuple(request.param)


async def _conversations(
    tmp_path: Path, *, extension: bool, flags: tuple[str, ...]
) -> AsyncIterator[Conversations]:
    exe = tmp_path / "agent.sh"
    exe.write_text(f'#!/bin/sh\nexec {sys.executable} -m baton.agents.scripted "$@"\n')
    exe.chmod(0o755)
    profile = _profile(extension=extension, flags=flags)
    runtime = Runtime(
        data_dir=tmp_path / "data",
        environ={**os.environ, OVERRIDE: str(exe)},
        profiles={profile.id: profile},
        interrupt_timeout=1.0,
    )
    await runtime.open()
    try:
        conversations = Conversations(runtime)
        await conversations.create(
            NewConversation(name="work", agent=profile.id, cwd=str(tmp_path))
        )
        yield conversations
    finally:
        await runtime.close()


async def _running(conversations: Conversations, events: list[RunEvent]) -> asyncio.Task[object]:
    """Start a slow turn and wait until its first text streamed."""
    started = asyncio.Event()

    def emit(event: RunEvent) -> None:
        events.append(event)
        if event.type == "text":
            started.set()

    task = asyncio.create_task(
        conversations.prompt("work", "stream 1; slow 2; echo done", on_event=emit)
    )
    await asyncio.wait_for(started.wait(), 30)
    return task  # type: ignore[return-value]


async def test_steering_is_injected_into_the_running_turn(
    tmp_path: Path, protocol: tuple[str, ...]
) -> None:
    async for conversations in _conversations(
        tmp_path, extension=True, flags=("--steering", *protocol)
    ):
        events: list[RunEvent] = []
        task = await _running(conversations, events)
        steered = await conversations.steer("work", "also check the README")
        assert (steered.outcome, steered.queued) == ("injected", False), steered.reason
        result = await task
        assert result.status == "COMPLETED"  # type: ignore[attr-defined]
        # The text reached the running turn (the agent reports it there): not a new turn,
        # not a cancel.
        assert "steered: also check the README" in result.text  # type: ignore[attr-defined]
        [shown] = [e.data for e in events if e.type == "steer"]
        assert shown == {"text": "also check the README", "outcome": "injected"}
        journal = Journal.in_data_dir(tmp_path / "data")
        methods = [
            r.metadata.method
            for server in journal.servers()
            for r in journal.records(server)
            if r.direction == "outbound"
        ]
        assert "_session/steering" in methods and "session/cancel" not in methods
        # Idle now: nothing to steer, the text is the caller's to queue.
        idle = await conversations.steer("work", "next")
        assert idle.queued and "no turn" in idle.reason


async def test_without_the_advertisement_the_text_is_queued(tmp_path: Path) -> None:
    # The profile reads the contract, but the agent does not advertise it: nothing is sent.
    async for conversations in _conversations(tmp_path, extension=True, flags=()):
        events: list[RunEvent] = []
        task = await _running(conversations, events)
        steered = await conversations.steer("work", "also check the README")
        assert steered.outcome == QUEUED
        assert steered.reason == "the agent does not advertise steering"
        result = await task
        assert "steered:" not in result.text  # type: ignore[attr-defined]
        assert not [e for e in events if e.type == "steer"]


async def test_a_profile_without_the_extension_never_reads_the_advertisement(
    tmp_path: Path,
) -> None:
    async for conversations in _conversations(tmp_path, extension=False, flags=("--steering",)):
        task = await _running(conversations, [])
        steered = await conversations.steer("work", "hello")
        assert steered.queued
        await task


async def test_empty_text_is_refused_before_anything(tmp_path: Path) -> None:
    async for conversations in _conversations(tmp_path, extension=True, flags=("--steering",)):
        with pytest.raises(InvalidArgument):
            await conversations.steer("work", "   ")
