"""The PostgreSQL store off the event loop (issue 33, item 2): while one lane's store writes
are held up by the network (a pausable proxy on loopback between this process and the
database, paused: latency taken to its limit), another lane's events keep arriving, because
the store's round trips run on their own threads, not on the event loop every lane reads on.
Needs PostgreSQL (`make test-fleet`)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from baton.runtime.runtime import RunRequest, Runtime
from baton.runtime.turns.events import RunEvent
from baton.store import Store

from .pausable_proxy import PausableProxy

pytestmark = pytest.mark.slow

#: How long the test waits for a state it causes (seconds): generous for a loaded machine.
DEADLINE = 60.0
#: Events the streaming lane must deliver while the store does not answer.
EVENTS_WHILE_HELD = 40


async def _until(condition: Any, deadline: float = DEADLINE) -> None:
    loop = asyncio.get_running_loop()
    until = loop.time() + deadline
    while not condition():
        if loop.time() > until:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.05)


def _status(url: str, run_id: str | None) -> str | None:
    if run_id is None:
        return None
    with Store(url, read_only=True) as store:
        return store.get_run(run_id).status


async def test_a_held_store_write_does_not_stall_another_lanes_events(
    postgres_database: str, tmp_path: Path
) -> None:
    proxy, through = PausableProxy.for_url(postgres_database)
    agent = [sys.executable, "-m", "baton.agents.scripted"]
    a_events: list[RunEvent] = []
    b_events: list[RunEvent] = []
    try:
        async with Runtime(
            data_dir=tmp_path / "data", store=through, environ=dict(os.environ)
        ) as runtime:
            # Two agent executables, so two lanes (two agent processes).
            ending = asyncio.ensure_future(
                runtime.run(
                    RunRequest(
                        prompt="slow 2\necho a-done",
                        agent_command=[*agent, "--state-dir", str(tmp_path / "a")],
                        cwd=str(tmp_path),
                        allow_unattended=True,
                    ),
                    on_event=a_events.append,
                )
            )
            streaming = asyncio.ensure_future(
                runtime.run(
                    RunRequest(
                        prompt="stream 600 25",
                        agent_command=[*agent, "--state-dir", str(tmp_path / "b")],
                        cwd=str(tmp_path),
                        allow_unattended=True,
                    ),
                    on_event=b_events.append,
                )
            )

            def run_id(events: list[RunEvent]) -> str | None:
                return events[0].run_id if events else None

            # A has sent its prompt (RUNNING) and B streams.
            await _until(lambda: _status(postgres_database, run_id(a_events)) == "RUNNING")
            await _until(lambda: len(b_events) >= 10)
            proxy.pause()
            try:
                # A's turn ends while the store does not answer: its final writes (items,
                # status) wait on the network; B's events still arrive meanwhile.
                a_before = len(a_events)
                seen = len(b_events)
                await _until(lambda: len(b_events) >= seen + EVENTS_WHILE_HELD)
                assert not ending.done()  # A's end is still waiting on the store
                assert len(a_events) >= a_before
            finally:
                proxy.resume()
            a_result = await asyncio.wait_for(ending, DEADLINE)
            b_result = await asyncio.wait_for(streaming, DEADLINE)
    finally:
        proxy.close()
    assert (a_result.status, b_result.status) == ("COMPLETED", "COMPLETED")
    with Store(postgres_database, read_only=True) as store:
        assert store.get_run(a_result.run_id).status == "COMPLETED"
        assert [item.kind for item in store.list_items(a_result.run_id)] == ["text"]
