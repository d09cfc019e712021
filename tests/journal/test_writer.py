"""The append side: sequences, redaction, bounds, rotation, pruning, durability and repair."""

from __future__ import annotations

import asyncio
import errno
import os
import stat
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest

from baton.durable import files as journal_files
from baton.errors import (
    JournalCorrupt,
    JournalEntryPruned,
    JournalEntryTooLarge,
    JournalSyncFailed,
    UnsafePath,
    UsageError,
)
from baton.journal import Journal, JournalLimits, SecretValues, ServerJournal
from baton.redaction import MALFORMED_FRAME_MARKER, STREAM_CONTENT_MARKER

#: Generous bound for background work in tests (never a timing assertion).
WAIT = 10.0
#: Limits whose background sync never fires on its own during a test.
NO_TIMER = JournalLimits(sync_interval_seconds=3600)


def notification(n: int, pad: str = "") -> dict[str, object]:
    """A small session/update-like notification whose routing fields survive redaction."""
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "sess-1", "n": n, "pad": pad},
    }


def request(request_id: int, method: str = "session/prompt") -> dict[str, object]:
    """A request as Baton sends it."""
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {"sessionId": "s"}}


async def _until(predicate: Callable[[], bool]) -> None:
    async with asyncio.timeout(WAIT):
        # Polling state the journal owns (no event to wait on), bounded by the timeout.
        while not predicate():  # noqa: ASYNC110
            await asyncio.sleep(0.005)


def _segment_files(journal: Journal, server: str) -> list[str]:
    return sorted(
        (name for name in os.listdir(journal.directory) if name.startswith(f"{server}.")),
        key=lambda name: int(name.split(".")[1]),
    )


class SyncSpy:
    """Replaces the journal's file sync: counts calls, notes their thread, can fail or block."""

    def __init__(self) -> None:
        self.calls = 0
        self.threads: set[str] = set()
        self.fail: OSError | None = None
        self.gate: threading.Event | None = None
        self.synced = threading.Event()
        self._real = journal_files.sync_file

    def __call__(self, fd: int) -> None:
        self.threads.add(threading.current_thread().name)
        if self.gate is not None:
            self.gate.wait(WAIT)
        if self.fail is not None:
            raise self.fail
        self.calls += 1
        self._real(fd)
        self.synced.set()


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> SyncSpy:
    sync = SyncSpy()
    monkeypatch.setattr(journal_files, "sync_file", sync)
    return sync


async def test_append_returns_a_ref_that_reads_back(journal: Journal) -> None:
    server = await journal.open_server("srv-1")
    first = await server.append("outbound", request(1, "initialize"), input_bytes=60)
    second = await server.append("inbound", notification(1), input_bytes=60)
    await server.close()
    assert (first.sequence, second.sequence) == (1, 2)
    assert (first.segment, first.byte_offset) == (0, 0)
    assert second.byte_offset == first.byte_length + 1
    record = journal.read(first)
    assert record.direction == "outbound"
    assert record.metadata.kind == "request"
    assert record.metadata.method == "initialize"
    assert record.metadata.id == 1
    assert record.message()["method"] == "initialize"
    inbound = journal.read(second)
    assert inbound.direction == "inbound"
    assert inbound.metadata.kind == "notification"
    assert inbound.metadata.id is None


async def test_records_are_redacted_at_the_boundary(journal: Journal) -> None:
    secret = "hunter2-very-secret-value-42"
    server = await journal.open_server("srv-1", secrets=SecretValues([secret]))
    update = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": "sess-1",
            "update": {"sessionUpdate": "agent_message_chunk", "content": {"text": "hi"}},
        },
    }
    prompt = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "session/prompt",
        "params": {"sessionId": "s", "prompt": [{"type": "text", "text": f"use {secret}"}]},
        "apiKey": "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789",
    }
    ref_update = await server.append("inbound", update, input_bytes=200)
    ref_prompt = await server.append("outbound", prompt, input_bytes=200)
    await server.close()
    stored = (journal.directory / "srv-1.0.ndjson").read_bytes()
    assert secret.encode() not in stored
    assert b"sk-ant-api03" not in stored
    message = journal.read(ref_update).message()
    assert message["params"]["sessionId"] == "sess-1"
    assert message["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    assert STREAM_CONTENT_MARKER in journal.read(ref_update).raw
    assert journal.read(ref_prompt).metadata.id == 3


async def test_skipped_frames_keep_only_the_marker_reason_and_length(journal: Journal) -> None:
    server = await journal.open_server("srv-1")
    ref = await server.append_skipped("inbound", "invalid_json", 4321)
    await server.close()
    record = journal.read(ref)
    assert record.metadata.kind == "skipped"
    assert record.message() == {
        "marker": MALFORMED_FRAME_MARKER,
        "reason": "invalid_json",
        "length": 4321,
    }


@pytest.mark.parametrize("delta", [-1, 0])
async def test_entry_bound_admits_up_to_the_cap(journal: Journal, delta: int) -> None:
    server = await journal.open_server("srv-1", limits=JournalLimits(max_entry_bytes=1000))
    ref = await server.append("inbound", notification(1), input_bytes=1000 + delta)
    assert ref.sequence == 1
    await server.close()


async def test_entry_over_the_bound_consumes_no_sequence(journal: Journal) -> None:
    server = await journal.open_server("srv-1", limits=JournalLimits(max_entry_bytes=1000))
    await server.append("inbound", notification(1), input_bytes=10)
    with pytest.raises(JournalEntryTooLarge) as info:
        await server.append("outbound", notification(2), input_bytes=1001)
    assert info.value.code == "JOURNAL_ENTRY_TOO_LARGE"
    assert (info.value.limit, info.value.size) == (1000, 1001)
    # Checked on the unredacted size: a message redaction would shrink is still refused.
    with pytest.raises(JournalEntryTooLarge):
        await server.append("inbound", notification(3), input_bytes=5_000_000)
    after = await server.append("inbound", notification(4), input_bytes=10)
    assert after.sequence == 2
    assert server.failure is None
    await server.close()


async def test_encoded_record_over_its_bound_is_refused_without_a_sequence(
    journal: Journal,
) -> None:
    limits = JournalLimits(max_entry_bytes=100)
    server = await journal.open_server("srv-1", limits=limits)
    # The caller understated the frame size; the encoded line is still bounded.
    with pytest.raises(JournalEntryTooLarge):
        await server.append("inbound", notification(1, "x" * 10_000), input_bytes=50)
    assert (await server.append("inbound", notification(2), input_bytes=50)).sequence == 1
    await server.close()


async def test_rotation_keeps_segments_bounded_and_the_sequence_global(journal: Journal) -> None:
    limits = JournalLimits(max_segment_bytes=2000, max_total_bytes=1_000_000)
    server = await journal.open_server("srv-1", limits=limits)
    refs = [
        await server.append("inbound", notification(n, "p" * 200), input_bytes=300)
        for n in range(40)
    ]
    await server.close()
    assert [ref.sequence for ref in refs] == list(range(1, 41))
    assert refs[-1].segment > 3
    names = _segment_files(journal, "srv-1")
    assert len(names) == refs[-1].segment + 1
    for name in names:
        assert (journal.directory / name).stat().st_size <= 2000
    report = journal.verify("srv-1")
    assert (report.records, report.first_sequence, report.last_sequence) == (40, 1, 40)
    for ref in refs:
        assert journal.read(ref).sequence == ref.sequence


async def test_pruning_removes_oldest_non_current_segments(journal: Journal) -> None:
    limits = JournalLimits(max_segment_bytes=2000, max_total_bytes=6000)
    server = await journal.open_server("srv-1", limits=limits)
    refs = [
        await server.append("inbound", notification(n, "p" * 200), input_bytes=300)
        for n in range(80)
    ]
    assert server.total_bytes <= 6000
    await server.close()
    total = sum((journal.directory / name).stat().st_size for name in os.listdir(journal.directory))
    assert total <= 6000
    with pytest.raises(JournalEntryPruned) as info:
        journal.read(refs[0])
    assert info.value.code == "JOURNAL_ENTRY_PRUNED"
    assert journal.read(refs[-1]).sequence == 80
    report = journal.verify("srv-1")
    assert report.segments[0] > 0
    assert report.last_sequence == 80


async def test_sequence_continues_across_reopen(journal: Journal) -> None:
    limits = JournalLimits(max_segment_bytes=1500, max_total_bytes=1_000_000)
    server = await journal.open_server("srv-1", limits=limits)
    for n in range(10):
        await server.append("inbound", notification(n, "q" * 200), input_bytes=300)
    segment = server.segment
    await server.close()
    server = await journal.open_server("srv-1", limits=limits)
    assert server.last_sequence == server.synced_sequence == 10
    assert server.segment == segment
    ref = await server.append("outbound", request(7), input_bytes=80)
    await server.close()
    assert ref.sequence == 11
    assert journal.verify("srv-1").last_sequence == 11


async def test_outbound_is_synced_before_append_returns(journal: Journal, spy: SyncSpy) -> None:
    server = await journal.open_server("srv-1", limits=NO_TIMER)
    before = spy.calls
    ref = await server.append("outbound", request(1), input_bytes=80)
    assert spy.calls > before
    assert server.synced_sequence >= ref.sequence
    # The sync ran in a worker thread, not on the event loop.
    assert threading.main_thread().name not in spy.threads
    await server.close()


async def test_inbound_is_batched_until_the_interval(journal: Journal, spy: SyncSpy) -> None:
    server = await journal.open_server("srv-1", limits=JournalLimits(sync_interval_seconds=0.05))
    before = spy.calls
    ref = await server.append("inbound", notification(1), input_bytes=80)
    assert server.synced_sequence < ref.sequence  # not synced inline
    await _until(lambda: server.synced_sequence >= ref.sequence)
    assert spy.calls > before
    await server.close()


async def test_inbound_batch_bytes_start_a_sync_without_yielding(
    journal: Journal, spy: SyncSpy
) -> None:
    limits = JournalLimits(
        sync_interval_seconds=3600, sync_batch_bytes=2000, max_unsynced_bytes=1_000_000
    )
    server = await journal.open_server("srv-1", limits=limits)
    small = await server.append("inbound", notification(0), input_bytes=80)
    await asyncio.sleep(0.05)
    assert spy.calls == 0  # below both bounds: nothing synced yet
    assert server.synced_sequence < small.sequence
    spy.synced.clear()
    # A flood: appends that never yield to the loop, past the batch bound.
    for n in range(10):
        await server.append("inbound", notification(n, "b" * 300), input_bytes=400)
    # Block the loop thread (on purpose): the sync must already be running in its worker.
    assert spy.synced.wait(WAIT)
    await _until(lambda: server.synced_sequence >= small.sequence)
    await server.close()


async def test_inbound_waits_for_sync_past_the_unsynced_bound(
    journal: Journal, spy: SyncSpy
) -> None:
    limits = JournalLimits(sync_interval_seconds=3600, sync_batch_bytes=500, max_unsynced_bytes=500)
    server = await journal.open_server("srv-1", limits=limits)
    ref = await server.append("inbound", notification(1, "c" * 600), input_bytes=700)
    assert server.synced_sequence >= ref.sequence
    await server.close()


async def test_a_sync_is_done_only_once_its_bookkeeping_ran(journal: Journal) -> None:
    # Regression: waiters used to get the executor's future, which is done a loop iteration
    # before its bookkeeping callback runs; a waiter that saw it done and looped again spun
    # forever without yielding (a flood turn hung in the background sync task).
    server = await journal.open_server("srv-1", limits=NO_TIMER)
    ref = await server.append("inbound", notification(1), input_bytes=80)
    sync = server._kick_sync()  # the future every waiter of this sync awaits
    async with asyncio.timeout(WAIT):
        # Polling on purpose: the first iteration that sees it done is the one that matters.
        while not sync.done():  # noqa: ASYNC110
            await asyncio.sleep(0)
    assert server.synced_sequence >= ref.sequence
    async with asyncio.timeout(WAIT):
        await server.flush()
    await server.close()


async def test_flush_syncs_everything_written(journal: Journal, spy: SyncSpy) -> None:
    server = await journal.open_server("srv-1", limits=NO_TIMER)
    refs = [await server.append("inbound", notification(n), input_bytes=80) for n in range(5)]
    assert server.synced_sequence < refs[-1].sequence
    await server.flush()
    assert server.synced_sequence == refs[-1].sequence
    await journal.flush_refs(refs)  # already durable: nothing to do, no error
    await server.close()


async def test_concurrent_appends_are_serialized_in_call_order(
    journal: Journal, spy: SyncSpy
) -> None:
    server = await journal.open_server("srv-1")
    spy.gate = threading.Event()  # hold every sync: outbound appends wait, the lock does not
    directions = ["outbound" if n % 4 == 0 else "inbound" for n in range(60)]
    tasks = [
        asyncio.create_task(server.append(direction, notification(n), input_bytes=80))
        for n, direction in enumerate(directions)
    ]
    await _until(lambda: server.last_sequence == 60)
    spy.gate.set()
    refs = await asyncio.gather(*tasks)
    assert [ref.sequence for ref in refs] == list(range(1, 61))
    offsets = [ref.byte_offset for ref in refs]
    assert offsets == sorted(offsets)
    await server.close()
    records = list(journal.records("srv-1"))
    assert [record.message()["params"]["n"] for record in records] == list(range(60))


async def test_a_failed_sync_is_sticky(journal: Journal, spy: SyncSpy) -> None:
    server = await journal.open_server("srv-1", limits=NO_TIMER)
    await server.append("outbound", request(1), input_bytes=80)
    spy.fail = OSError(errno.EIO, "Input/output error")
    with pytest.raises(JournalSyncFailed) as info:
        await server.append("outbound", request(2), input_bytes=80)
    assert info.value.code == "JOURNAL_SYNC_FAILED"
    spy.fail = None  # the disk "recovers": the journal still refuses
    with pytest.raises(JournalSyncFailed):
        await server.append("inbound", notification(3), input_bytes=80)
    with pytest.raises(JournalSyncFailed):
        await server.flush()
    assert server.failure is not None
    with pytest.raises(JournalSyncFailed):
        await server.close()
    assert server.closed


async def test_a_background_sync_failure_fails_later_appends(
    journal: Journal, spy: SyncSpy
) -> None:
    server = await journal.open_server("srv-1", limits=JournalLimits(sync_interval_seconds=0.01))
    spy.fail = OSError(errno.ENOSPC, "No space left on device")
    ref = await server.append("inbound", notification(1), input_bytes=80)  # accepted, unsynced
    await _until(lambda: server.failure is not None)
    with pytest.raises(JournalSyncFailed, match="No space left"):
        await server.append("inbound", notification(2), input_bytes=80)
    # A record that never became durable may not be cited by a published record.
    with pytest.raises(JournalSyncFailed):
        await journal.flush_refs([ref])
    with pytest.raises(JournalSyncFailed):
        await server.close()
    with pytest.raises(JournalSyncFailed):
        await journal.flush_refs([ref])


async def test_a_failed_write_is_sticky(journal: Journal, monkeypatch: pytest.MonkeyPatch) -> None:
    server = await journal.open_server("srv-1")
    await server.append("outbound", request(1), input_bytes=80)
    real_write = os.writev

    def failing_write(fd: int, data: object) -> int:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "writev", failing_write)
    with pytest.raises(JournalSyncFailed):
        await server.append("outbound", request(2), input_bytes=80)
    monkeypatch.setattr(os, "writev", real_write)
    with pytest.raises(JournalSyncFailed):
        await server.append("inbound", notification(3), input_bytes=80)
    # Every record it acknowledged is durable, so closing succeeds; the torn write is gone.
    await server.close()
    assert journal.verify("srv-1").last_sequence == 1


async def test_a_failed_write_of_buffered_records_surfaces_at_the_flush(
    journal: Journal, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = await journal.open_server("srv-1", limits=NO_TIMER)
    await server.append("outbound", request(1), input_bytes=80)
    real_write = os.writev

    def failing_write(fd: int, data: object) -> int:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "writev", failing_write)
    buffered = await server.append("inbound", notification(2), input_bytes=80)
    with pytest.raises(JournalSyncFailed):
        await server.flush()
    monkeypatch.setattr(os, "writev", real_write)
    with pytest.raises(JournalSyncFailed):
        await server.append("inbound", notification(3), input_bytes=80)
    # The buffered record was never durable: closing says so, and its ref is refused.
    with pytest.raises(JournalSyncFailed):
        await server.close()
    with pytest.raises(JournalSyncFailed):
        await journal.flush_refs([buffered])
    assert journal.verify("srv-1").last_sequence == 1


async def test_reopen_truncates_a_partial_last_line(journal: Journal) -> None:
    server = await journal.open_server("srv-1")
    for n in range(3):
        await server.append("outbound", request(n), input_bytes=80)
    await server.close()
    path = journal.directory / "srv-1.0.ndjson"
    good = path.read_bytes()
    torn = b'{"serverInstanceId":"srv-1","segment":0,"sequence":4,"dir'
    with path.open("ab") as handle:
        handle.write(torn)
    assert journal.verify("srv-1").partial_tail_bytes == len(torn)
    server = await journal.open_server("srv-1")
    assert server.repaired_bytes == len(torn)
    assert path.read_bytes() == good
    ref = await server.append("inbound", notification(4), input_bytes=80)
    await server.close()
    assert ref.sequence == 4
    report = journal.verify("srv-1")
    assert (report.records, report.partial_tail_bytes) == (4, 0)


async def test_reopen_after_a_crash_between_rotation_and_first_record(journal: Journal) -> None:
    server = await journal.open_server("srv-1")
    await server.append("outbound", request(1), input_bytes=80)
    await server.close()
    fd = os.open(journal.directory / "srv-1.1.ndjson", os.O_CREAT | os.O_WRONLY, 0o600)
    os.close(fd)
    server = await journal.open_server("srv-1")
    ref = await server.append("outbound", request(2), input_bytes=80)
    await server.close()
    assert (ref.segment, ref.sequence, ref.byte_offset) == (1, 2, 0)
    assert journal.verify("srv-1").last_sequence == 2


async def test_reopen_refuses_a_corrupt_complete_last_record(journal: Journal) -> None:
    server = await journal.open_server("srv-1")
    await server.append("outbound", request(1), input_bytes=80)
    await server.close()
    path = journal.directory / "srv-1.0.ndjson"
    # A complete line that is not a valid record is corruption, not a torn write.
    path.write_bytes(
        path.read_bytes().replace(b'"direction":"outbound"', b'"direction":"sideways"')
    )
    with pytest.raises(JournalCorrupt):
        await journal.open_server("srv-1")
    assert journal.writer("srv-1") is None


async def test_reopen_refuses_a_missing_middle_segment(journal: Journal) -> None:
    limits = JournalLimits(max_segment_bytes=600, max_total_bytes=1_000_000)
    server = await journal.open_server("srv-1", limits=limits)
    for n in range(12):
        await server.append("inbound", notification(n, "m" * 100), input_bytes=200)
    await server.close()
    (journal.directory / "srv-1.1.ndjson").unlink()
    with pytest.raises(JournalCorrupt, match="missing"):
        await journal.open_server("srv-1", limits=limits)


async def test_files_are_private_and_symlinks_refused(journal: Journal, tmp_path: Path) -> None:
    server = await journal.open_server("srv-1")
    await server.append("outbound", request(1), input_bytes=80)
    await server.close()
    assert stat.S_IMODE(journal.directory.stat().st_mode) == 0o700
    assert stat.S_IMODE((journal.directory / "srv-1.0.ndjson").stat().st_mode) == 0o600
    outside = tmp_path / "outside.ndjson"
    outside.write_bytes(b"")
    outside.chmod(0o600)
    (journal.directory / "srv-2.0.ndjson").symlink_to(outside)
    with pytest.raises(UnsafePath):
        await journal.open_server("srv-2")


async def test_open_close_lifecycle(journal: Journal) -> None:
    server = await journal.open_server("srv-1")
    with pytest.raises(UsageError, match="already open"):
        await journal.open_server("srv-1")
    with pytest.raises(UsageError):
        await journal.open_server("bad.id")
    await server.close()
    await server.close()  # idempotent
    with pytest.raises(UsageError, match="closed"):
        await server.append("inbound", notification(1), input_bytes=10)
    again = await journal.open_server("srv-1")
    assert journal.writer("srv-1") is again
    await journal.close()
    assert again.closed
    assert journal.writer("srv-1") is None


async def test_recorded_at_comes_from_the_clock(journal: Journal) -> None:
    moment = datetime(2030, 5, 6, 7, 8, 9, 10, tzinfo=UTC)
    server = await journal.open_server("srv-1", clock=lambda: moment)
    ref = await server.append("outbound", request(1), input_bytes=80)
    await server.close()
    assert journal.read(ref).recorded_at == "2030-05-06T07:08:09.000010Z"


async def test_server_journal_refuses_a_loose_directory(tmp_path: Path) -> None:
    loose = tmp_path / "loose"
    loose.mkdir(mode=0o755)
    loose.chmod(0o755)
    with pytest.raises(UnsafePath):
        await ServerJournal.open(loose, "srv-1")


async def test_every_line_is_one_json_object(journal: Journal) -> None:
    server = await journal.open_server("srv-1")
    await server.append("outbound", request(1), input_bytes=80)
    await server.append(
        "inbound", {"jsonrpc": "2.0", "id": 1, "result": {"a": "\n"}}, input_bytes=40
    )
    await server.close()
    lines = (journal.directory / "srv-1.0.ndjson").read_bytes().split(b"\n")
    assert lines[-1] == b""
    assert [orjson.loads(line)["sequence"] for line in lines[:-1]] == [1, 2]


async def test_appends_called_before_close_complete(journal: Journal, spy: SyncSpy) -> None:
    server = await journal.open_server("srv-1")
    spy.gate = threading.Event()
    first = asyncio.create_task(server.append("outbound", request(1), input_bytes=80))
    await _until(lambda: server.last_sequence == 1)  # written, waiting for its sync
    queued = [
        asyncio.create_task(server.append("inbound", notification(n), input_bytes=80))
        for n in range(3)
    ]
    closing = asyncio.create_task(server.close())
    await asyncio.sleep(0)
    with pytest.raises(UsageError, match="closed"):
        await server.append("inbound", notification(9), input_bytes=80)
    spy.gate.set()
    await asyncio.wait_for(closing, WAIT)
    refs = [await first, *[await task for task in queued]]
    assert [ref.sequence for ref in refs] == [1, 2, 3, 4]
    assert journal.verify("srv-1").last_sequence == 4


async def test_reopening_with_lower_limits_prunes_at_once(journal: Journal) -> None:
    big = JournalLimits(max_segment_bytes=1000, max_total_bytes=100_000)
    server = await journal.open_server("srv-1", limits=big)
    for n in range(30):
        await server.append("inbound", notification(n, "s" * 100), input_bytes=200)
    await server.close()
    small = JournalLimits(max_segment_bytes=1000, max_total_bytes=3000)
    server = await journal.open_server("srv-1", limits=small)
    assert server.total_bytes <= 3000
    assert server.last_sequence == 30
    await server.close()


async def test_opening_on_a_full_or_read_only_disk_is_a_stable_code(
    journal: Journal, monkeypatch: pytest.MonkeyPatch
) -> None:
    from baton.errors import StorageFull, StorageReadOnly

    real_open = os.open
    failure = {"errno": errno.ENOSPC}

    def refuse(path: object, flags: int, *args: object, **kwargs: object) -> int:
        if flags & os.O_CREAT:
            raise OSError(failure["errno"], os.strerror(failure["errno"]), str(path))
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", refuse)
    with pytest.raises(StorageFull):
        await journal.open_server("srv-full")
    failure["errno"] = errno.EROFS
    with pytest.raises(StorageReadOnly):
        await journal.open_server("srv-ro")
