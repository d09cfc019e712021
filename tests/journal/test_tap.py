"""The journal as the connection's tap: every frame at the boundary, before dispatch or write."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest

from baton.connection import Connection, memory_pipe
from baton.connection.streams import MemoryWriter
from baton.errors import TapFailed
from baton.journal import Journal, JournalLimits, JournalRef, JournalTap, ServerJournal
from baton.redaction import MALFORMED_FRAME_MARKER

WAIT = 10.0


class CheckingWriter:
    """A writer that asserts every frame it is given is already durable in the journal."""

    def __init__(self, inner: MemoryWriter, journal: ServerJournal) -> None:
        self.inner = inner
        self.journal = journal
        self.checked: list[int] = []

    def write(self, data: bytes) -> None:
        assert self.journal.synced_sequence == self.journal.last_sequence
        self.checked.append(self.journal.last_sequence)
        self.inner.write(data)

    async def drain(self) -> None:
        await self.inner.drain()

    def close(self) -> None:
        self.inner.close()

    def is_closing(self) -> bool:
        return self.inner.is_closing()


async def test_frames_are_journaled_at_the_boundary(journal: Journal) -> None:
    server = await journal.open_server("srv-1", limits=JournalLimits(sync_interval_seconds=3600))
    agent_in, baton_out = memory_pipe()
    baton_in, agent_out = memory_pipe()
    writer = CheckingWriter(baton_out, server)
    connection = Connection(baton_in, writer, tap=JournalTap(server))
    seen: list[tuple[int, int]] = []

    def on_update(message: dict[str, Any], ref: object) -> None:
        assert isinstance(ref, JournalRef)
        # Journaled before dispatch: the record is readable when the handler runs.
        seen.append((message["params"]["n"], journal.read(ref).sequence))

    connection.on_notification("_test/tick", on_update)
    connection.start()
    request_id = await connection.send_request("initialize", {"protocolVersion": 1})
    sent = orjson.loads(await agent_in.read(1 << 20))
    assert sent["id"] == request_id
    agent_out.write(b'{"jsonrpc":"2.0","method":"_test/tick","params":{"n":1}}\n')
    agent_out.write(b"this is not json sk-ant-api03-PLANTEDPLANTEDPLANTEDPLANTED\n")
    agent_out.write(b'{"jsonrpc":"2.0","method":"_test/tick","params":{"n":2}}\n')
    agent_out.write(orjson.dumps({"jsonrpc": "2.0", "id": request_id, "result": {"ok": 1}}) + b"\n")
    answer = await asyncio.wait_for(connection.await_answer(request_id), WAIT)
    result, response_ref = answer.result, answer.ref
    assert result == {"ok": 1}
    await connection.close()
    await server.close()

    assert writer.checked == [1]
    assert seen == [(1, 2), (2, 4)]
    assert isinstance(response_ref, JournalRef)
    records = list(journal.records("srv-1"))
    assert [(r.direction, r.metadata.kind) for r in records] == [
        ("outbound", "request"),
        ("inbound", "notification"),
        ("inbound", "skipped"),
        ("inbound", "notification"),
        ("inbound", "response"),
    ]
    assert records[0].metadata.method == "initialize"
    assert records[4].metadata.id == request_id
    assert records[2].message() == {
        "marker": MALFORMED_FRAME_MARKER,
        "reason": "invalid_json",
        "length": len(b"this is not json sk-ant-api03-PLANTEDPLANTEDPLANTEDPLANTED"),
    }
    stored = (journal.directory / "srv-1.0.ndjson").read_bytes()
    assert b"PLANTED" not in stored
    assert b"not json" not in stored


async def test_a_violation_is_journaled_with_its_kind(journal: Journal) -> None:
    server = await journal.open_server("srv-1")
    _agent_in, baton_out = memory_pipe()
    baton_in, agent_out = memory_pipe()
    violations: list[str] = []
    connection = Connection(
        baton_in,
        baton_out,
        tap=JournalTap(server),
        on_violation=lambda v: violations.append(v.kind),
    )
    connection.start()
    agent_out.write(b'{"jsonrpc":"2.0","id":99,"result":1,"error":{"code":1,"message":"m"}}\n')
    agent_out.close()
    await asyncio.wait_for(connection.drained(), WAIT)
    await server.close()
    (record,) = list(journal.records("srv-1"))
    assert record.metadata.kind == "response"
    assert record.metadata.violation == "result_and_error"
    assert violations == ["result_and_error"]


async def test_an_oversized_inbound_frame_closes_the_connection(journal: Journal) -> None:
    server = await journal.open_server("srv-1", limits=JournalLimits(max_entry_bytes=200))
    _agent_in, baton_out = memory_pipe()
    baton_in, agent_out = memory_pipe()
    connection = Connection(baton_in, baton_out, tap=JournalTap(server))
    handled: list[object] = []

    def on_tick(message: dict[str, Any], ref: object) -> None:
        handled.append(message)

    connection.on_notification("_test/tick", on_tick)
    connection.start()
    big = orjson.dumps({"jsonrpc": "2.0", "method": "_test/tick", "params": {"x": "y" * 300}})
    agent_out.write(big + b"\n")
    reason = await asyncio.wait_for(connection.wait_closed(), WAIT)
    assert isinstance(reason, TapFailed)
    assert "JOURNAL_ENTRY_TOO_LARGE" in str(reason)
    assert handled == []  # never dispatched unrecorded
    await connection.close()
    await server.close()
    assert server.last_sequence == 0


async def test_an_outbound_frame_is_not_written_when_the_journal_fails(journal: Journal) -> None:
    server = await journal.open_server("srv-1")
    agent_in, baton_out = memory_pipe()
    baton_in, _agent_out = memory_pipe()
    connection = Connection(baton_in, baton_out, tap=JournalTap(server))
    connection.start()
    await server.close()  # a closed journal refuses appends
    with pytest.raises(TapFailed):
        await connection.notify("session/cancel", {"sessionId": "s"})
    baton_out.close()
    assert await agent_in.read(1 << 16) == b""
    await connection.close()


def _delta(n: int, session: str = "sess-1") -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": session,
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": f"delta {n} "},
            },
        },
    }


async def test_nowait_records_only_cached_simple_updates(journal: Journal) -> None:
    server = await journal.open_server("srv-1", limits=JournalLimits(sync_interval_seconds=3600))
    # The first delta of a shape is not cached yet: nothing is recorded, the caller awaits.
    assert server.append_inbound_nowait(_delta(0), input_bytes=100) is None
    assert server.last_sequence == 0
    first = await server.append("inbound", _delta(0), input_bytes=100)
    ref = server.append_inbound_nowait(_delta(1), input_bytes=100)
    assert ref is not None and ref.sequence == first.sequence + 1
    # Not simple, or too large for the entry bound: the awaited path decides.
    assert server.append_inbound_nowait({**_delta(2), "id": 5}, input_bytes=100) is None
    assert server.append_inbound_nowait(_delta(2), input_bytes=10**9) is None
    assert server.last_sequence == ref.sequence
    await server.close()
    assert server.append_inbound_nowait(_delta(3), input_bytes=100) is None  # closed
    records = list(journal.records("srv-1"))
    assert [r.sequence for r in records] == [1, 2]
    assert records[1] == journal.read(ref)


async def test_nowait_never_passes_the_unsynced_bound(journal: Journal) -> None:
    limits = JournalLimits(sync_interval_seconds=3600, sync_batch_bytes=600, max_unsynced_bytes=600)
    server = await journal.open_server("srv-1", limits=limits)
    await server.append("inbound", _delta(0), input_bytes=100)  # about 480 bytes, now cached
    # Another line would reach 600 unsynced bytes: only the awaited path may wait for the sync.
    assert server.append_inbound_nowait(_delta(1), input_bytes=100) is None
    ref = await server.append("inbound", _delta(1), input_bytes=100)
    assert server.synced_sequence >= ref.sequence
    await server.close()


async def test_the_connection_journals_deltas_without_awaiting_and_falls_back(
    journal: Journal,
) -> None:
    server = await journal.open_server("srv-1", limits=JournalLimits(sync_interval_seconds=3600))
    baton_in, agent_out = memory_pipe()
    _agent_in, baton_out = memory_pipe()
    connection = Connection(baton_in, baton_out, tap=JournalTap(server))
    seen: list[int] = []
    done = asyncio.Event()

    def on_update(message: dict[str, Any], ref: object) -> None:
        assert isinstance(ref, JournalRef)
        assert journal.read(ref).message()["params"]["sessionId"] == "sess-1"  # before dispatch
        seen.append(ref.sequence)
        if len(seen) == 50:
            done.set()

    connection.on_notification("session/update", on_update)
    connection.start()
    agent_out.write(b"".join(orjson.dumps(_delta(n)) + b"\n" for n in range(50)))
    await asyncio.wait_for(done.wait(), WAIT)
    await connection.close()
    await server.close()
    assert seen == list(range(1, 51))  # the first awaited (uncached), the rest without


async def test_a_failing_inbound_tap_closes_the_connection() -> None:
    class FailingTap:
        async def record_inbound(self, raws: object, messages: object, mark: object = None) -> Any:
            raise OSError("disk gone")

        async def record_outbound(self, raw: bytes, message: object) -> object:
            raise AssertionError("not reached")

    baton_in, agent_out = memory_pipe()
    _agent_in, baton_out = memory_pipe()
    connection = Connection(baton_in, baton_out, tap=FailingTap())
    dispatched: list[object] = []

    def on_update(message: dict[str, Any], ref: object) -> None:
        dispatched.append(message)

    connection.on_notification("session/update", on_update)
    connection.start()
    agent_out.write(orjson.dumps(_delta(0)) + b"\n")
    reason = await asyncio.wait_for(connection.wait_closed(), WAIT)
    assert isinstance(reason, TapFailed)
    assert dispatched == []  # no unrecorded frame got through
