"""The connection over in-memory pipes: correlation, dispatch, violations, budgets, the tap."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson
import pytest

from baton.connection import Connection, InboundRequest, Mark, RpcError, memory_pipe
from baton.connection.core import cancelled_by_agent
from baton.errors import (
    AgentRequestError,
    AuthenticationRequired,
    BudgetExpired,
    FrameTooLarge,
    TapFailed,
    TransportClosed,
    UsageError,
)
from baton.wire.budget import TurnBudget
from baton.wire.jsonrpc import Skipped

from .conftest import Peer

#: The generic connection is driven with made-up frames (no ACP client builds them).
pytestmark = pytest.mark.off_schema_outbound

Pair = tuple[Connection[Any], Peer]


async def test_baton_request_ids_are_integers_from_one(pair: Pair) -> None:
    conn, peer = pair
    first = await conn.send_request("initialize", {"protocolVersion": 1})
    second = await conn.send_request("session/new", {})
    assert (first, second) == (1, 2)
    assert (await peer.recv())["id"] == 1
    assert (await peer.recv())["id"] == 2


async def test_a_response_resolves_its_request(pair: Pair) -> None:
    conn, peer = pair
    task = asyncio.create_task(conn.request("initialize", {}))
    request = await peer.recv()
    peer.send({"jsonrpc": "2.0", "id": request["id"], "result": {"protocolVersion": 1}})
    assert await task == {"protocolVersion": 1}


async def test_agent_errors_raise_with_the_agents_code(pair: Pair) -> None:
    conn, peer = pair
    task = asyncio.create_task(conn.request("session/new", {}))
    request = await peer.recv()
    peer.send(
        {
            "jsonrpc": "2.0",
            "id": request["id"],
            "error": {"code": -32000, "message": "Authentication required"},
        }
    )
    with pytest.raises(AuthenticationRequired) as caught:
        await task
    assert caught.value.rpc_code == -32000
    task = asyncio.create_task(conn.request("session/new", {}))
    request = await peer.recv()
    peer.send({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32602, "message": "bad"}})
    with pytest.raises(AgentRequestError) as other:
        await task
    assert other.value.rpc_code == -32602
    assert not isinstance(other.value, AuthenticationRequired)


async def test_cancelling_a_wait_keeps_the_request_pending(pair: Pair) -> None:
    conn, peer = pair
    request_id = await conn.send_request("session/prompt", {})
    waiter = asyncio.create_task(conn.await_response(request_id))
    await asyncio.sleep(0)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    await peer.recv()
    peer.send({"jsonrpc": "2.0", "id": request_id, "result": {"stopReason": "end_turn"}})
    assert await conn.await_response(request_id, timeout=5) == {"stopReason": "end_turn"}
    assert conn.late_responses == 0
    assert conn.violation_count == 0


async def test_an_expired_wait_leaves_the_request_pending_until_abandoned(pair: Pair) -> None:
    conn, peer = pair
    request_id = await conn.send_request("session/prompt", {})
    with pytest.raises(BudgetExpired) as caught:
        await conn.await_response(request_id, timeout=0.05)
    assert caught.value.bound == "request"
    peer.send({"jsonrpc": "2.0", "id": request_id, "result": {"stopReason": "cancelled"}})
    assert await conn.await_response(request_id, timeout=5) == {"stopReason": "cancelled"}


async def test_a_late_answer_to_an_abandoned_id_is_dropped_and_counted(pair: Pair) -> None:
    conn, peer = pair
    with pytest.raises(BudgetExpired):
        await conn.request("session/set_mode", {}, timeout=0.05)
    request = await peer.recv()
    # Issue 29: the expired request is cancelled at the agent too.
    assert await peer.recv() == {
        "jsonrpc": "2.0",
        "method": "$/cancel_request",
        "params": {"requestId": request["id"]},
    }
    peer.send({"jsonrpc": "2.0", "id": request["id"], "result": {}})
    # A round trip after it proves the late answer was read and handled first.
    task = asyncio.create_task(conn.request("ping", {}))
    ping = await peer.recv()
    peer.send({"jsonrpc": "2.0", "id": ping["id"], "result": {}})
    await task
    assert conn.late_responses == 1
    assert conn.violation_count == 0


async def test_a_response_to_an_id_never_sent_is_a_violation_not_a_crash(pair: Pair) -> None:
    conn, peer = pair
    seen: list[str] = []
    conn._on_violation = lambda violation: seen.append(violation.kind)
    peer.send({"jsonrpc": "2.0", "id": 987654, "result": {}})
    peer.send({"jsonrpc": "2.0", "id": "weird-string-id", "result": {}})
    task = asyncio.create_task(conn.request("ping", {}))
    ping = await peer.recv()
    peer.send({"jsonrpc": "2.0", "id": ping["id"], "result": {"ok": True}})
    assert await task == {"ok": True}
    assert seen == ["unknown_response_id", "unknown_response_id"]
    assert conn.violation_count == 2


async def test_a_second_answer_to_one_id_is_a_violation(pair: Pair) -> None:
    conn, peer = pair
    task = asyncio.create_task(conn.request("ping", {}))
    ping = await peer.recv()
    peer.send({"jsonrpc": "2.0", "id": ping["id"], "result": {}})
    peer.send({"jsonrpc": "2.0", "id": ping["id"], "result": {}})
    await task
    task = asyncio.create_task(conn.request("ping", {}))
    ping = await peer.recv()
    peer.send({"jsonrpc": "2.0", "id": ping["id"], "result": {}})
    await task
    assert [v.kind for v in conn.violations] == ["unknown_response_id"]


@pytest.mark.parametrize("agent_id", [0, 7, "", "3f2b9c1e-0000-4000-8000-000000000000"])
async def test_agent_request_ids_are_echoed_exactly(pair: Pair, agent_id: object) -> None:
    conn, peer = pair

    async def allow(request: InboundRequest) -> Any:
        return {"outcome": {"outcome": "cancelled"}, "seen": request.id}

    conn.on_request("session/request_permission", allow)
    peer.send(
        {"jsonrpc": "2.0", "id": agent_id, "method": "session/request_permission", "params": {}}
    )
    reply = await peer.recv()
    assert reply["id"] == agent_id
    assert type(reply["id"]) is type(agent_id)
    assert reply["result"]["seen"] == agent_id


async def test_agent_ids_colliding_with_batons_stay_separate(pair: Pair) -> None:
    """Claude's adapter numbers its requests from 0, like a client: the tables are separate."""
    conn, peer = pair
    conn.on_request("session/request_permission", _answer({"outcome": {"outcome": "cancelled"}}))
    task = asyncio.create_task(conn.request("ping", {}))
    ping = await peer.recv()
    peer.send(
        {"jsonrpc": "2.0", "id": ping["id"], "method": "session/request_permission", "params": {}}
    )
    reply = await peer.recv()
    assert reply["id"] == ping["id"] and "result" in reply
    peer.send({"jsonrpc": "2.0", "id": ping["id"], "result": {"pong": 1}})
    assert await task == {"pong": 1}


def _answer(result: Any) -> Any:
    async def handler(request: InboundRequest) -> Any:
        return result

    return handler


@pytest.mark.parametrize(
    ("method", "capability"),
    [
        ("fs/read_text_file", "fs.readTextFile"),
        ("fs/write_text_file", "fs.writeTextFile"),
        ("terminal/create", "terminal"),
        ("_vendor/thing", "no capability"),
    ],
)
async def test_unhandled_requests_get_method_not_found_naming_the_capability(
    pair: Pair, method: str, capability: str
) -> None:
    _conn, peer = pair
    peer.send({"jsonrpc": "2.0", "id": 0, "method": method, "params": {}})
    reply = await peer.recv()
    assert reply["error"]["code"] == -32601
    assert method in reply["error"]["message"]
    assert capability in reply["error"]["message"]


async def test_a_handler_error_becomes_a_json_rpc_error(pair: Pair) -> None:
    conn, peer = pair

    async def refuse(request: InboundRequest) -> Any:
        raise RpcError(-32602, "invalid permission params")

    conn.on_request("session/request_permission", refuse)
    peer.send({"jsonrpc": "2.0", "id": "x", "method": "session/request_permission", "params": {}})
    reply = await peer.recv()
    assert reply == {
        "jsonrpc": "2.0",
        "id": "x",
        "error": {"code": -32602, "message": "invalid permission params"},
    }


async def test_inbound_cancel_request_cancels_the_handler_with_32800(pair: Pair) -> None:
    conn, peer = pair
    started = asyncio.Event()

    async def wait_forever(request: InboundRequest) -> Any:
        started.set()
        await asyncio.Event().wait()

    conn.on_request("session/request_permission", wait_forever)
    peer.send({"jsonrpc": "2.0", "id": 5, "method": "session/request_permission", "params": {}})
    await asyncio.wait_for(started.wait(), 5)
    assert conn.pending_inbound() == [5]
    peer.send({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 5}})
    reply = await peer.recv()
    assert reply["id"] == 5
    assert reply["error"]["code"] == -32800
    assert conn.pending_inbound() == []


async def test_outbound_cancel_request_is_sent_and_the_request_stays_pending(pair: Pair) -> None:
    conn, peer = pair
    request_id = await conn.send_request("session/prompt", {})
    await peer.recv()
    await conn.cancel_request(request_id)
    assert await peer.recv() == {
        "jsonrpc": "2.0",
        "method": "$/cancel_request",
        "params": {"requestId": request_id},
    }
    peer.send(
        {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32800, "message": "cancelled"}}
    )
    with pytest.raises(AgentRequestError) as caught:
        await conn.await_response(request_id, timeout=5)
    assert caught.value.rpc_code == -32800


async def test_a_cancelled_caller_gives_its_request_up_at_the_agent(pair: Pair) -> None:
    # Issue 29: a bounded request whose caller is cancelled is abandoned and cancelled at the
    # agent ($/cancel_request); the late answer is dropped and counted, never a violation.
    conn, peer = pair
    task = asyncio.create_task(conn.request("session/new", {"cwd": "/w"}))
    request = await peer.recv()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await peer.recv() == {
        "jsonrpc": "2.0",
        "method": "$/cancel_request",
        "params": {"requestId": request["id"]},
    }
    assert conn.cancel_requests_sent == 1
    peer.send({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32800, "message": "x"}})
    await _round_trip(conn, peer)
    assert conn.late_responses == 1
    assert conn.violation_count == 0


async def test_an_unbounded_wait_sends_no_cancel(pair: Pair) -> None:
    # session/prompt is awaited without a bound: cancelling the wait cancels nothing remotely.
    conn, peer = pair
    request_id = await conn.send_request("session/prompt", {})
    waiter = asyncio.create_task(conn.await_response(request_id))
    await asyncio.sleep(0)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    await peer.recv()
    await _round_trip(conn, peer)
    assert conn.cancel_requests_sent == 0


async def test_the_agent_cancelling_its_request_says_so_to_the_handler(pair: Pair) -> None:
    conn, peer = pair
    seen: list[bool] = []

    async def wait_forever(request: InboundRequest) -> Any:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError as exc:
            seen.append(cancelled_by_agent(exc))
            raise

    conn.on_request("elicitation/create", wait_forever)
    peer.send({"jsonrpc": "2.0", "id": "q", "method": "elicitation/create", "params": {}})
    await _round_trip(conn, peer)
    peer.send({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": "q"}})
    reply = await peer.recv()
    assert (reply["id"], reply["error"]["code"]) == ("q", -32800)
    assert seen == [True]
    assert conn.agent_cancelled_requests == 1


async def test_unhandled_notifications_go_to_the_catch_all_never_violations(pair: Pair) -> None:
    conn, peer = pair
    caught: list[str] = []

    def catch_all(message: dict[str, Any], ref: object) -> None:
        caught.append(message["method"])

    conn.on_any_notification(catch_all)
    peer.send({"jsonrpc": "2.0", "method": "_auth/status_update", "params": {}})
    peer.send({"jsonrpc": "2.0", "method": "_x.ai/models/update", "params": {}})
    await _round_trip(conn, peer)
    assert caught == ["_auth/status_update", "_x.ai/models/update"]
    assert conn.violation_count == 0


async def _round_trip(conn: Connection[Any], peer: Peer) -> None:
    task = asyncio.create_task(conn.request("ping", {}))
    ping = await peer.recv()
    peer.send({"jsonrpc": "2.0", "id": ping["id"], "result": {}})
    await task


async def test_updates_are_handled_in_arrival_order(pair: Pair) -> None:
    # Handlers are plain functions called from the read loop (they cannot await), so nothing
    # can reorder a session's updates.
    conn, peer = pair
    order: list[int] = []

    def slow_then_fast(message: dict[str, Any], ref: object) -> None:
        index = message["params"]["i"]
        order.append(index)

    conn.on_notification("session/update", slow_then_fast)
    for i in range(50):
        peer.send({"jsonrpc": "2.0", "method": "session/update", "params": {"i": i}})
    await _round_trip(conn, peer)
    assert order == list(range(50))


async def test_updates_before_a_response_are_handled_before_it_resolves(pair: Pair) -> None:
    conn, peer = pair
    seen: list[int] = []

    def collect(message: dict[str, Any], ref: object) -> None:
        seen.append(message["params"]["i"])

    conn.on_notification("session/update", collect)
    request_id = await conn.send_request("session/prompt", {})
    await peer.recv()
    for i in range(20):
        peer.send({"jsonrpc": "2.0", "method": "session/update", "params": {"i": i}})
    peer.send({"jsonrpc": "2.0", "id": request_id, "result": {"stopReason": "end_turn"}})
    await conn.await_response(request_id, timeout=5)
    assert seen == list(range(20))


async def test_garbage_is_skipped_and_counted_blank_lines_are_not(pair: Pair) -> None:
    conn, peer = pair
    peer.send_raw(b'\n\n  \r\nnot json\n[1]\n{"jsonrpc":"1.0"}\n\xff\xfe\n')
    await _round_trip(conn, peer)
    assert conn.skipped_frames == 4


async def test_a_stream_of_only_garbage_trips_the_idle_bound(pair: Pair) -> None:
    conn, peer = pair
    request_id = await conn.send_request("session/prompt", {})
    loop = asyncio.get_running_loop()
    clock = TurnBudget(idle=0.3, absolute=30).start(loop.time())

    async def noise() -> None:
        while True:
            peer.send_raw(b"noise that is not json\n")
            await asyncio.sleep(0.01)

    task = asyncio.create_task(noise())
    try:
        with pytest.raises(BudgetExpired) as caught:
            await conn.await_response(request_id, budget=clock)
    finally:
        task.cancel()
    assert caught.value.bound == "idle"
    assert conn.skipped_frames > 0


async def test_a_streaming_agent_that_never_answers_trips_the_absolute_bound(pair: Pair) -> None:
    conn, peer = pair
    request_id = await conn.send_request("session/prompt", {})
    loop = asyncio.get_running_loop()
    clock = TurnBudget(idle=0.2, absolute=0.6).start(loop.time())

    async def stream() -> None:
        while True:
            peer.send({"jsonrpc": "2.0", "method": "session/update", "params": {}})
            await asyncio.sleep(0.02)

    task = asyncio.create_task(stream())
    try:
        with pytest.raises(BudgetExpired) as caught:
            await conn.await_response(request_id, budget=clock)
    finally:
        task.cancel()
    assert caught.value.bound == "absolute"
    assert caught.value.elapsed >= 0.6


async def test_an_oversized_frame_closes_the_connection_and_fails_pending_requests(
    pair: Pair,
) -> None:
    conn, peer = pair
    request_id = await conn.send_request("session/prompt", {})
    peer.send_raw(b"x" * (64 * 1024 + 10))
    with pytest.raises(FrameTooLarge) as caught:
        await conn.await_response(request_id, timeout=5)
    assert caught.value.cap == 64 * 1024
    assert isinstance(await conn.wait_closed(), FrameTooLarge)


async def test_eof_fails_pending_requests_as_transport_closed(pair: Pair) -> None:
    conn, peer = pair
    request_id = await conn.send_request("session/prompt", {})
    peer.close()
    with pytest.raises(TransportClosed):
        await conn.await_response(request_id, timeout=5)
    with pytest.raises(TransportClosed):
        await conn.send_request("ping", {})


async def test_the_unterminated_last_line_is_handled_at_eof(pair: Pair) -> None:
    conn, peer = pair
    request_id = await conn.send_request("session/prompt", {})
    peer.send_raw(b'{"jsonrpc":"2.0","id":%d,"result":{"stopReason":"end_turn"}}' % request_id)
    peer.close()
    assert await conn.await_response(request_id, timeout=5) == {"stopReason": "end_turn"}


async def test_await_response_for_an_unknown_id_is_a_usage_error(pair: Pair) -> None:
    conn, _peer = pair
    with pytest.raises(UsageError):
        await conn.await_response(99)


async def test_concurrent_writers_never_interleave_frames() -> None:
    to_agent_r, to_agent_w = memory_pipe(high_water=1024)
    to_client_r, _to_client_w = memory_pipe()
    conn = Connection(to_client_r, to_agent_w, max_frame_bytes=1024 * 1024)
    conn.start()
    peer = Peer(to_agent_r, _to_client_w)
    big = "b" * 50_000

    async def writer(n: int) -> None:
        await conn.notify("n", {"i": n, "pad": big})

    tasks = [asyncio.create_task(writer(n)) for n in range(20)]
    received = [await peer.recv() for _ in range(20)]
    await asyncio.gather(*tasks)
    assert sorted(message["params"]["i"] for message in received) == list(range(20))
    assert all(message["params"]["pad"] == big for message in received)
    await conn.close()


@dataclass
class Frame:
    direction: str
    raw: bytes
    message: dict[str, Any] | None
    skipped: Skipped | None


class RecordingTap:
    def __init__(self, fail_on: str | None = None) -> None:
        self.frames: list[Frame] = []
        self.fail_on = fail_on

    def _add(self, frame: Frame) -> int:
        if self.fail_on == frame.direction:
            raise OSError("disk full")
        self.frames.append(frame)
        return len(self.frames)

    async def record_inbound(
        self, raws: Sequence[bytes], messages: Sequence[dict[str, Any] | None], mark: Mark = None
    ) -> list[int]:
        skipped = mark if isinstance(mark, Skipped) else None
        return [
            self._add(Frame("inbound", raw, message, skipped))
            for raw, message in zip(raws, messages, strict=True)
        ]

    async def record_outbound(self, raw: bytes, message: dict[str, Any]) -> int:
        return self._add(Frame("outbound", raw, message, None))


async def _tapped(tap: RecordingTap) -> tuple[Connection[int], Peer]:
    to_agent_r, to_agent_w = memory_pipe()
    to_client_r, to_client_w = memory_pipe()
    conn = Connection(to_client_r, to_agent_w, tap=tap)
    conn.start()
    return conn, Peer(to_agent_r, to_client_w)


async def test_the_tap_sees_every_frame_before_dispatch_and_before_write() -> None:
    tap = RecordingTap()
    conn, peer = await _tapped(tap)
    refs: list[object] = []

    def on_update(message: dict[str, Any], ref: object) -> None:
        # The frame was recorded before this handler ran.
        assert tap.frames[-1].message is message
        refs.append(ref)

    conn.on_notification("session/update", on_update)
    request_id = await conn.send_request("session/prompt", {})
    assert tap.frames[0].direction == "outbound"
    assert conn.request_ref(request_id) == 1
    await peer.recv()
    peer.send_raw(b"garbage\n")
    peer.send({"jsonrpc": "2.0", "method": "session/update", "params": {}})
    peer.send({"jsonrpc": "2.0", "id": request_id, "result": {"stopReason": "end_turn"}})
    answer = await conn.await_answer(request_id, timeout=5)
    result, ref = answer.result, answer.ref
    assert result == {"stopReason": "end_turn"}
    kinds = [(f.direction, f.skipped.reason if f.skipped else None) for f in tap.frames]
    assert kinds == [
        ("outbound", None),
        ("inbound", "invalid_json"),
        ("inbound", None),
        ("inbound", None),
    ]
    assert refs == [3]
    assert ref == 4
    await conn.close()


async def test_a_failing_inbound_tap_closes_the_connection_before_dispatch() -> None:
    tap = RecordingTap(fail_on="inbound")
    conn, peer = await _tapped(tap)
    handled: list[object] = []

    def on_update(message: dict[str, Any], ref: object) -> None:
        handled.append(message)

    conn.on_notification("session/update", on_update)
    peer.send({"jsonrpc": "2.0", "method": "session/update", "params": {}})
    reason = await asyncio.wait_for(conn.wait_closed(), 5)
    assert isinstance(reason, TapFailed)
    assert handled == []


async def test_a_failing_outbound_tap_writes_nothing_and_closes() -> None:
    tap = RecordingTap(fail_on="outbound")
    conn, peer = await _tapped(tap)
    with pytest.raises(TapFailed):
        await conn.send_request("session/prompt", {})
    assert conn.is_closed
    assert await peer.reader.read(100) == b""


async def test_a_pipelined_request_flood_is_refused_within_bounds_and_is_a_violation() -> None:
    # The agent pipelines requests and never reads Baton's answers: at most 64 are served, at
    # most 64 refusals are owed, and the rest are request_flood violations (never a task or a
    # reply each, so memory does not grow with the flood).
    _to_agent_r, to_agent_w = memory_pipe(high_water=1024)  # the agent reads nothing
    to_client_r, to_client_w = memory_pipe()
    kinds: list[str] = []
    conn = Connection(to_client_r, to_agent_w, on_violation=lambda v: kinds.append(v.kind))
    never = asyncio.Event()

    async def hold(request: InboundRequest) -> Any:
        await never.wait()

    conn.on_request("session/request_permission", hold)
    conn.start()
    flood = 5_000
    frames = b"".join(
        orjson.dumps(
            {"jsonrpc": "2.0", "id": n, "method": "session/request_permission", "params": {}}
        )
        + b"\n"
        for n in range(flood)
    )
    to_client_w.write(frames)
    to_client_w.close()
    await asyncio.wait_for(conn.drained(), 10)
    assert len(conn.pending_inbound()) == 64
    assert conn.violation_count == flood - 64 - 64
    assert set(kinds) == {"request_flood"}
    assert len(conn.violations) <= 64
    await conn.close()


async def test_a_bounded_drain_ends_when_its_bound_expires(pair: Pair) -> None:
    # The agent never ends its output: a drain bounded by wait_for must give up (the lane then
    # fences), never swallow the cancellation and wait for ever.
    conn, _peer = pair
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(conn.drained(), 0.05)
    assert not conn.is_closed


async def test_a_given_up_request_and_its_cancel_are_both_recorded() -> None:
    # "Journaled": the cancel notification goes through the tap like every frame.
    tap = RecordingTap()
    conn, peer = await _tapped(tap)
    with pytest.raises(BudgetExpired):
        await conn.request("session/list", {}, timeout=0.05)
    await peer.recv()
    await peer.recv()
    sent = [f.message for f in tap.frames if f.direction == "outbound"]
    assert [m.get("method") for m in sent if m is not None] == ["session/list", "$/cancel_request"]
    await conn.close()
