"""Batch notification handlers: runs of consecutive notifications read together are journaled,
then handed over together, in arrival order, around every other kind of frame."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest

from baton.connection import Connection, Mark, memory_pipe
from baton.connection.streams import MemoryWriter
from baton.errors import InternalError, TapFailed
from baton.journal import Journal, JournalLimits, JournalRef, JournalTap
from baton.redaction.frames import redact_frame_message

#: The generic connection is driven with made-up frames (no ACP client builds them).
pytestmark = pytest.mark.off_schema_outbound

WAIT = 10.0
UPDATE = "session/update"

Message = dict[str, Any]


def update(n: int, session: str = "sess-1", **extra: Any) -> Message:
    """A streamed text delta numbered ``n`` (the number sits in the stream text)."""
    return {
        "jsonrpc": "2.0",
        "method": UPDATE,
        "params": {
            "sessionId": session,
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": f"delta {n} "},
                **extra,
            },
        },
    }


def number(message: Message) -> int:
    """The ``n`` of an :func:`update` (or of any message carrying ``params.n``)."""
    params = message["params"]
    if "n" in params:
        return int(params["n"])
    return int(params["update"]["content"]["text"].split()[1])


def other(n: int, method: str = "_test/other") -> Message:
    return {"jsonrpc": "2.0", "method": method, "params": {"n": n}}


def lines(*messages: Message | bytes) -> bytes:
    """One write's worth of frames (raw bytes are written as they are, plus a newline)."""
    return b"".join((m if isinstance(m, bytes) else orjson.dumps(m)) + b"\n" for m in messages)


class Calls:
    """A batch handler that logs every call and every message it handles."""

    def __init__(self, log: list[object] | None = None, tag: str = "") -> None:
        self.log: list[object] = log if log is not None else []
        self.tag = tag
        #: (number of messages in the call, refs given) per call
        self.calls: list[tuple[int, list[object]]] = []

    def __call__(self, messages: list[Message], refs: Sequence[object]) -> None:
        assert len(refs) == len(messages)
        self.calls.append((len(messages), list(refs)))
        for message in messages:
            self.log.append(f"{self.tag}{number(message)}")


def connection(tap: object = None) -> tuple[Connection[Any], MemoryWriter]:
    baton_in, agent_out = memory_pipe()
    _agent_in, baton_out = memory_pipe()
    conn = Connection(baton_in, baton_out, tap=tap)  # type: ignore[arg-type]
    return conn, agent_out


async def finish(conn: Connection[Any], agent_out: MemoryWriter) -> None:
    """End the stream and wait until every frame before the end was handled."""
    agent_out.close()
    await asyncio.wait_for(conn.drained(), WAIT)
    await conn.close()


async def test_a_run_is_delivered_in_order_in_one_call() -> None:
    conn, agent_out = connection()
    handler = Calls()
    conn.on_notifications(UPDATE, handler)
    conn.start()
    agent_out.write(lines(*(update(n) for n in range(20))))
    await finish(conn, agent_out)
    assert handler.log == [str(n) for n in range(20)]
    assert [size for size, _ in handler.calls] == [20]
    assert handler.calls[0][1] == [None] * 20  # no tap: no references
    assert conn.frames_in == 20
    assert conn.skipped_frames == 0


async def test_a_handler_that_returns_an_awaitable_is_a_baton_bug() -> None:
    # Read-loop handlers are plain functions: one that returns an awaitable would need the read
    # loop (or run unawaited). The connection closes with BATON_BUG and never runs it.
    conn, agent_out = connection()
    ran: list[int] = []

    async def later() -> None:
        ran.append(1)

    def handler(messages: list[Message], refs: Sequence[object]) -> Any:
        return later()

    conn.on_notifications(UPDATE, handler)
    conn.start()
    agent_out.write(lines(update(0)))
    reason = await asyncio.wait_for(conn.wait_closed(), WAIT)
    await conn.close()
    assert isinstance(reason, InternalError)
    assert reason.code == "BATON_BUG"
    assert "plain functions" in str(reason)
    assert ran == []


async def test_drained_from_inside_the_read_loop_is_a_baton_bug_not_a_hang() -> None:
    conn, agent_out = connection()
    failures: list[BaseException] = []

    def handler(messages: list[Message], refs: Sequence[object]) -> None:
        for waiting in (conn.drained(), conn.wait_closed()):
            try:
                waiting.send(None)
            except InternalError as exc:
                failures.append(exc)
            finally:
                waiting.close()

    conn.on_notifications(UPDATE, handler)
    conn.start()
    agent_out.write(lines(update(0)))
    await finish(conn, agent_out)
    assert [type(exc) for exc in failures] == [InternalError, InternalError]
    assert "read loop" in str(failures[0])


async def test_a_response_between_runs_resolves_in_order() -> None:
    baton_in, agent_out = memory_pipe()
    agent_in, baton_out = memory_pipe()
    conn = Connection(baton_in, baton_out)
    log: list[object] = []
    handler = Calls(log)
    conn.on_notifications(UPDATE, handler)
    conn.start()
    request_id = await conn.send_request("session/prompt", {"sessionId": "sess-1"})
    assert orjson.loads(await agent_in.read(1 << 16))["id"] == request_id
    conn.on_answer(request_id, lambda: log.append("answer"))
    response = {"jsonrpc": "2.0", "id": request_id, "result": {"stopReason": "end_turn"}}
    agent_out.write(
        lines(*(update(n) for n in range(5)), response, *(update(n) for n in range(5, 9)))
    )
    result = await asyncio.wait_for(conn.await_response(request_id), WAIT)
    assert result == {"stopReason": "end_turn"}
    await finish(conn, agent_out)
    assert log == ["0", "1", "2", "3", "4", "answer", "5", "6", "7", "8"]
    # The response ends the run before it: two calls, each of several messages.
    assert [size for size, _ in handler.calls] == [5, 4]
    assert conn.frames_in == 10


async def test_a_response_resolves_after_the_notifications_before_it() -> None:
    baton_in, agent_out = memory_pipe()
    agent_in, baton_out = memory_pipe()
    conn = Connection(baton_in, baton_out)
    request_id = await conn.send_request("session/prompt", {})
    await agent_in.read(1 << 16)
    handled: list[tuple[int, bool]] = []
    waiter = asyncio.ensure_future(conn.await_response(request_id, timeout=WAIT))

    def handler(messages: list[Message], refs: Sequence[object]) -> None:
        for message in messages:
            handled.append((number(message), waiter.done()))

    conn.on_notifications(UPDATE, handler)
    conn.start()
    await asyncio.sleep(0)  # the waiter is waiting
    response = {"jsonrpc": "2.0", "id": request_id, "result": {}}
    agent_out.write(lines(*(update(n) for n in range(4)), response))
    assert await asyncio.wait_for(waiter, WAIT) == {}
    assert handled == [(n, False) for n in range(4)]
    await finish(conn, agent_out)


async def test_another_method_ends_the_run_and_keeps_its_place() -> None:
    conn, agent_out = connection()
    log: list[object] = []
    handler = Calls(log)
    conn.on_notifications(UPDATE, handler)

    def on_other(message: Message, ref: object) -> None:
        log.append(f"other {number(message)}")

    fallback: list[object] = []

    def on_any(message: Message, ref: object) -> None:
        fallback.append(message["method"])
        log.append(f"any {number(message)}")

    conn.on_notification("_test/other", on_other)
    conn.on_any_notification(on_any)
    conn.start()
    agent_out.write(
        lines(
            update(0),
            update(1),
            other(100),
            update(2),
            update(3),
            update(4),
            other(101, "_test/unhandled"),
            update(5),
        )
    )
    await finish(conn, agent_out)
    assert log == ["0", "1", "other 100", "2", "3", "4", "any 101", "5"]
    assert [size for size, _ in handler.calls] == [2, 3, 1]
    assert fallback == ["_test/unhandled"]
    assert conn.frames_in == 8


async def test_two_batch_methods_make_separate_runs() -> None:
    conn, agent_out = connection()
    log: list[object] = []
    updates = Calls(log, "u")
    ticks = Calls(log, "t")
    conn.on_notifications(UPDATE, updates)
    conn.on_notifications("_test/tick", ticks)
    conn.start()
    tick = [other(n, "_test/tick") for n in range(3)]
    agent_out.write(lines(update(0), update(1), tick[0], tick[1], update(2), tick[2]))
    await finish(conn, agent_out)
    assert log == ["u0", "u1", "t0", "t1", "u2", "t2"]
    assert [size for size, _ in updates.calls] == [2, 1]
    assert [size for size, _ in ticks.calls] == [2, 1]
    assert conn.frames_in == 6


async def test_frames_that_are_not_plain_notifications_end_the_run() -> None:
    conn, agent_out = connection()
    log: list[object] = []
    handler = Calls(log)
    conn.on_notifications(UPDATE, handler)
    served: list[object] = []
    was_served = asyncio.Event()

    async def serve(request: Any) -> object:
        served.append(request.id)
        was_served.set()
        return {}

    conn.on_request(UPDATE, serve)
    conn.start()
    as_request = {**update(50), "id": 7}  # has an id: a request, not a notification
    agent_out.write(
        lines(
            update(0),
            b"this is not json",
            update(1),
            update(2),
            b"[1, 2, 3]",
            b"",
            b"   ",
            {**update(60), "jsonrpc": "1.0"},
            update(3),
            as_request,
            update(4),
        )
    )
    await asyncio.wait_for(was_served.wait(), WAIT)
    await finish(conn, agent_out)
    assert log == ["0", "1", "2", "3", "4"]
    assert [size for size, _ in handler.calls] == [1, 2, 1, 1]
    # Blank and whitespace-only lines are separators; the others are counted.
    assert conn.skipped_frames == 3
    assert conn.frames_in == 6  # five notifications and the request
    assert served == [7]


async def test_frames_in_counts_every_valid_frame_across_reads() -> None:
    conn, agent_out = connection()
    handler = Calls()
    conn.on_notifications(UPDATE, handler)
    conn.start()
    agent_out.write(lines(*(update(n) for n in range(7)), b"{bad"))
    agent_out.write(lines(other(1), *(update(n) for n in range(7, 12))))
    await finish(conn, agent_out)
    assert handler.log == [str(n) for n in range(12)]
    assert conn.frames_in == 13
    assert conn.skipped_frames == 1


# --- taps --------------------------------------------------------------------------------


class RecordingTap:
    """A tap that logs every call into the log the handler writes to."""

    def __init__(self, log: list[object], fail: bool = False) -> None:
        self.log = log
        self.fail = fail
        self.batches: list[tuple[list[bytes], list[Message]]] = []
        self.given: list[Sequence[object]] = []

    async def record_inbound(
        self, raws: Sequence[bytes], messages: Sequence[Message | None], mark: Mark = None
    ) -> Sequence[object]:
        await asyncio.sleep(0)  # really suspends: the read loop waits for the record
        self.log.append(("batch", [number(m) if m is not None else -1 for m in messages]))
        self.batches.append((list(raws), [m for m in messages if m is not None]))
        if self.fail:
            raise OSError("disk gone")
        refs = tuple(("ref", number(m) if m is not None else -1) for m in messages)
        self.given.append(refs)
        return refs

    async def record_outbound(self, raw: bytes, message: Message) -> object:
        return ("out", message.get("id"))


class RefHandler:
    """A batch handler that logs each message it handles with its reference."""

    def __init__(self, log: list[object]) -> None:
        self.log = log
        self.sizes: list[int] = []
        self.refs: list[Sequence[object]] = []

    def __call__(self, messages: list[Message], refs: Sequence[object]) -> None:
        self.sizes.append(len(messages))
        self.refs.append(refs)
        for index in range(len(messages)):
            self.log.append(("handle", number(messages[index]), refs[index]))


async def test_a_batch_tap_journals_the_run_before_it_is_dispatched() -> None:
    log: list[object] = []
    tap = RecordingTap(log)
    conn, agent_out = connection(tap)
    handler = RefHandler(log)
    conn.on_notifications(UPDATE, handler)
    conn.start()
    frames = [update(n) for n in range(6)]
    agent_out.write(lines(*frames))
    await finish(conn, agent_out)
    assert log == [
        ("batch", [0, 1, 2, 3, 4, 5]),
        *(("handle", n, ("ref", n)) for n in range(6)),
    ]
    ((raws, messages),) = tap.batches
    assert raws == [orjson.dumps(frame) for frame in frames]
    assert messages == frames
    assert handler.refs == [tap.given[0]]  # the tap's references, passed through
    assert handler.sizes == [6]


async def test_a_one_by_one_handler_gets_each_frame_after_it_was_journaled() -> None:
    log: list[object] = []
    tap = RecordingTap(log)
    conn, agent_out = connection(tap)

    def on_update(message: Message, ref: object) -> None:
        log.append(("handle", number(message), ref))

    conn.on_notification(UPDATE, on_update)
    conn.start()
    agent_out.write(lines(*(update(n) for n in range(3))))
    await finish(conn, agent_out)
    assert log == [item for n in range(3) for item in (("batch", [n]), ("handle", n, ("ref", n)))]


async def test_a_failing_batch_tap_closes_the_connection_before_dispatch() -> None:
    log: list[object] = []
    tap = RecordingTap(log, fail=True)
    conn, agent_out = connection(tap)
    handler = RefHandler(log)
    conn.on_notifications(UPDATE, handler)
    others: list[int] = []

    def on_other(message: Message, ref: object) -> None:
        others.append(number(message))

    conn.on_notification("_test/other", on_other)
    conn.start()
    agent_out.write(lines(*(update(n) for n in range(4)), other(2)))
    reason = await asyncio.wait_for(conn.wait_closed(), WAIT)
    assert isinstance(reason, TapFailed)
    assert "disk gone" in str(reason)
    assert others == []  # nothing after the failed run
    assert [entry for entry in log if entry[0] == "handle"] == []  # type: ignore[index]
    assert ("batch", [0, 1, 2, 3]) in log
    await conn.close()


# --- the journal as the tap ---------------------------------------------------------------


async def test_every_reference_resolves_to_its_record_during_dispatch(tmp_path: Path) -> None:
    journal = Journal.in_data_dir(tmp_path / "data")
    server = await journal.open_server("srv-1", limits=JournalLimits(sync_interval_seconds=3600))
    conn, agent_out = connection(JournalTap(server))
    checked: list[tuple[int, int, int]] = []  # (n, call size, sequence)
    done = asyncio.Event()
    expected_total = 0

    def handler(messages: list[Message], refs: Sequence[object]) -> None:
        for index in range(len(messages)):
            ref = refs[index]
            assert isinstance(ref, JournalRef)
            # Journaled before acted on: the record is readable now, and is this message's.
            record = journal.read(ref)
            assert record.direction == "inbound"
            assert record.message() == redact_frame_message(messages[index])
            checked.append((number(messages[index]), len(messages), record.sequence))
        if len(checked) == expected_total:
            done.set()

    conn.on_notifications(UPDATE, handler)
    conn.start()

    async def send(frames: list[Message]) -> None:
        nonlocal expected_total
        expected_total += len(frames)
        done.clear()
        agent_out.write(lines(*frames))
        await asyncio.wait_for(done.wait(), WAIT)

    # The journal tap picks its path inside; the handler always gets the whole run.
    # The first run: its shape is not cached yet, so it is journaled one by one.
    await send([update(n) for n in range(5)])
    # A later run of a cached shape (sequences 6 to 9): journaled in one batch.
    await send([update(n) for n in range(5, 9)])
    # Sequences 10 to 12 have one digit more than the ones before: one by one.
    await send([update(n) for n in range(9, 12)])
    # Sequences 13 to 20: one batch.
    await send([update(n) for n in range(12, 20)])
    # A run with one uncached shape in the middle: the part before it is one batch, it goes on
    # its own (which caches its body), and the rest is a batch again.
    await send([update(20), update(21), update(22, "sess-2"), update(23), update(24)])
    # Both shapes cached now: one batch again.
    await send([update(25, "sess-2"), update(26), update(27, "sess-2")])
    await finish(conn, agent_out)
    await server.close()

    assert [n for n, _, _ in checked] == list(range(28))
    assert [sequence for _, _, sequence in checked] == list(range(1, 29))
    sizes = [size for _, size, _ in checked]
    assert sizes == [5] * 5 + [4] * 4 + [3] * 3 + [8] * 8 + [5] * 5 + [3] * 3
    assert [r.sequence for r in journal.records("srv-1")] == list(range(1, 29))


async def test_a_failing_batch_handler_closes_the_connection() -> None:
    conn, agent_out = connection()

    def handler(messages: list[Message], refs: Sequence[object]) -> None:
        raise ValueError("a bug in the handler")

    conn.on_notifications(UPDATE, handler)
    conn.start()
    agent_out.write(lines(update(0)))
    try:
        reason = await asyncio.wait_for(conn.wait_closed(), 1.0)
    finally:
        await conn.close()
    assert isinstance(reason, InternalError)
    assert "ValueError: a bug in the handler" in str(reason)
