"""A Lane over in-memory pipes (the spawn factory hands it a fake child, no subprocess):
phases, fencing, quarantine ordering, routing from the read loop."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from baton.connection import InboundRequest, memory_pipe
from baton.errors import BatonError, LaneFenced
from baton.journal import Journal
from baton.runtime.agents.launch import LaunchSpec
from baton.runtime.lanes import lane as lane_module
from baton.runtime.lanes.lane import Lane, LaneSession
from baton.runtime.lanes.phase import LanePhase
from baton.runtime.lanes.recorder import Recorder
from baton.runtime.permissions.correlation import ToolCallTracker
from baton.runtime.permissions.engine import Resolution
from baton.runtime.processes.process import ShutdownResult
from baton.store import Store
from baton.wire.framing import FrameDecoder

WAIT = 10.0


class FakeChild:
    """An agent child over in-memory pipes: answers initialize and session/new, sends what the
    test asks, and logs its shutdown."""

    def __init__(self, log: list[str], *, survive: bool = False, drain: bool = True) -> None:
        self.log = log
        self.survive = survive
        self.drain = drain
        self.pid = 2**22 + 7  # never signalled: the fake's shutdown is its own
        self.stdout, self._out = memory_pipe()
        self._in, self.stdin = memory_pipe()
        self.returncode: int | None = None
        self._ended = asyncio.Event()
        self.shut = asyncio.Event()
        self._task = asyncio.ensure_future(self._serve())

    def send(self, *messages: dict[str, Any]) -> None:
        """Write ``messages`` in one write (Baton reads them together)."""
        self._out.write(b"".join(orjson.dumps(m) + b"\n" for m in messages))

    async def _serve(self) -> None:
        decoder = FrameDecoder(1 << 20)
        while True:
            data = await self._in.read(1 << 16)
            if not data:
                return
            for line in decoder.feed(data):
                if not line:
                    continue
                message = orjson.loads(line)
                method = message.get("method")
                if method == "initialize":
                    self.send(_result(message, {"protocolVersion": 1, "agentCapabilities": {}}))
                elif method == "session/new":
                    self.send(_result(message, {"sessionId": "sess-1"}))

    async def wait(self) -> int:
        await self._ended.wait()
        return self.returncode or 0

    def stderr_tail(self) -> str:
        return ""

    async def shutdown(self, *, term_grace: float = 1.0) -> ShutdownResult:
        self.log.append("shutdown")
        self.shut.set()
        if self.drain:
            self._out.close()
        self.returncode = -9 if self.survive else 0
        self._ended.set()
        self._task.cancel()
        return ShutdownResult(self.returncode, "stdin_eof", self.survive, 0.0)


def _result(request: dict[str, Any], result: object) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


def update(session: str, text: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": session,
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": text},
            },
        },
    }


class Turn:
    """An active run's handler that logs what reaches it."""

    def __init__(self, log: list[str]) -> None:
        self.log = log
        self.texts: list[str] = []
        self.lost: BatonError | None = None

    def on_updates(self, updates: list[dict[str, Any]]) -> None:
        self.texts.extend(u["content"]["text"] for u in updates)

    async def on_permission(self, request: InboundRequest) -> Resolution:
        raise AssertionError("no permission requests here")

    def on_lost(self, reason: BatonError) -> None:
        self.log.append("on_lost")
        self.lost = reason


Factory = Callable[..., Lane]


@pytest.fixture
async def make_lane(tmp_path: Path) -> AsyncIterator[Factory]:
    journal = Journal.in_data_dir(tmp_path / "data")
    store = Store.open(tmp_path / "data", flush=journal.flush_refs)
    lanes: list[Lane] = []

    def make(children: list[FakeChild], log: list[str], **options: Any) -> Lane:
        async def spawn(spec: LaunchSpec, redact: Callable[[str], str]) -> FakeChild:
            child = FakeChild(log, **options)
            children.append(child)
            return child

        spec = LaunchSpec("fake", ("/fake/agent",), {})
        lane = Lane(
            spec, journal=journal, recorder=Recorder(store), request_limit=WAIT, spawn=spawn
        )
        lanes.append(lane)
        return lane

    yield make
    for lane in lanes:
        await lane.shutdown()
    await journal.close()
    store.close()


async def _with_session(lane: Lane, turn: Turn | None) -> LaneSession:
    client = await lane.ensure_started(None)
    opened = await client.new_session("/work")
    session = LaneSession("ses-1", opened.session_id, "/work", ToolCallTracker(opened.session_id))
    session.active = turn
    lane.adopt(session)
    return session


async def test_a_lane_starts_idle_runs_and_stops_back_to_idle(make_lane: Factory) -> None:
    children: list[FakeChild] = []
    log: list[str] = []
    lane = make_lane(children, log)
    assert lane.phase is LanePhase.IDLE
    await lane.ensure_started(None)
    assert lane.phase is LanePhase.RUNNING
    first_generation = lane.generation
    await lane.quarantine("test")
    assert lane.phase is LanePhase.IDLE
    assert lane.generation > first_generation
    await lane.ensure_started(None)  # a replacement generation
    assert lane.phase is LanePhase.RUNNING
    assert len(children) == 2
    assert log == ["shutdown"]


async def test_a_child_that_survives_the_shutdown_fences_the_lane_for_good(
    make_lane: Factory,
) -> None:
    children: list[FakeChild] = []
    lane = make_lane(children, [], survive=True)
    await lane.ensure_started(None)
    await lane.quarantine("test")
    assert lane.phase is LanePhase.FENCED
    assert lane.fence == "the agent's process group survived SIGKILL"
    with pytest.raises(LaneFenced):
        await lane.ensure_started(None)
    assert len(children) == 1  # no replacement was spawned


async def test_output_that_cannot_be_drained_fences_the_lane(
    make_lane: Factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lane_module, "DRAIN_WAIT_SECONDS", 0.05)
    lane = make_lane([], [], drain=False)  # the child's output never ends
    await lane.ensure_started(None)
    await lane.quarantine("test")
    assert lane.phase is LanePhase.FENCED
    assert lane.fence == "the agent's output could not be drained"


async def test_a_quarantine_tells_the_active_run_before_the_child_is_stopped(
    make_lane: Factory,
) -> None:
    log: list[str] = []
    lane = make_lane([], log)
    turn = Turn(log)
    await _with_session(lane, turn)
    generation = lane.generation
    await lane.quarantine("test")
    assert log == ["on_lost", "shutdown"]
    assert lane.generation > generation
    assert lane.sessions == {}  # released after the stop


async def test_a_foreign_update_invalidates_the_lane_inside_the_read_and_fences_the_rest(
    make_lane: Factory,
) -> None:
    children: list[FakeChild] = []
    log: list[str] = []
    lane = make_lane(children, log)
    turn = Turn(log)
    session = await _with_session(lane, turn)
    generation = lane.generation
    fenced = lane.fenced_messages
    # One read: an update of the session, one of a session never created, one more of the
    # session. The router must not wait (it runs in the read loop): it invalidates the lane in
    # place and schedules the stop sequence.
    children[0].send(
        update(session.provider_id, "before"),
        update("never-created", "foreign"),
        update(session.provider_id, "after"),
    )
    await asyncio.wait_for(children[0].shut.wait(), WAIT)
    await asyncio.wait_for(lane._settled.wait(), WAIT)  # the scheduled stop sequence ended
    assert lane.phase is LanePhase.IDLE
    assert turn.texts == ["before"]
    assert log == ["on_lost", "shutdown"]
    assert lane.generation > generation
    assert lane.fenced_messages == fenced + 1  # the update after the foreign one


async def test_a_start_that_cannot_spawn_goes_back_to_idle(tmp_path: Path) -> None:
    journal = Journal.in_data_dir(tmp_path / "data")
    store = Store.open(tmp_path / "data", flush=journal.flush_refs)

    async def spawn(spec: LaunchSpec, redact: Callable[[str], str]) -> FakeChild:
        raise OSError("no such agent")

    lane = Lane(
        LaunchSpec("fake", ("/fake/agent",), {}),
        journal=journal,
        recorder=Recorder(store),
        request_limit=WAIT,
        spawn=spawn,
    )
    with pytest.raises(OSError):
        await lane.ensure_started(None)
    assert lane.phase is LanePhase.IDLE
    await journal.close()
    store.close()


async def test_a_flood_of_violations_schedules_one_quarantine(make_lane: Factory) -> None:
    children: list[FakeChild] = []
    log: list[str] = []
    lane = make_lane(children, log)
    await lane.ensure_started(None)
    connection = lane.connection
    assert connection is not None
    spawned: list[object] = []
    spawn_callback = lane._spawn_callback

    def counting(coro: Any) -> None:
        spawned.append(coro)
        spawn_callback(coro)

    lane._spawn_callback = counting  # type: ignore[method-assign]
    flood = 2_000
    children[0].send(*({"jsonrpc": "2.0", "id": 10_000 + n, "result": {}} for n in range(flood)))
    await asyncio.wait_for(children[0].shut.wait(), WAIT)
    await asyncio.wait_for(lane._settled.wait(), WAIT)
    assert connection.violation_count == flood
    assert len(spawned) == 1  # one quarantine task, not one per violation
    assert log == ["shutdown"]
    assert lane.phase is LanePhase.IDLE
