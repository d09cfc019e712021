"""Retention never removes a record the run store cites (issue 15): the pinned floor."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from baton.errors import JournalRetentionExhausted, JournalSyncFailed
from baton.journal import Journal, JournalLimits, JournalRef
from baton.journal import segments as segments_module
from baton.store import Store

#: More free space than any file system has: the disk reserve is always reached, so a pinned
#: journal over its budget fails (the bound a real disk reaches when it fills).
NO_DISK_ROOM = 2**62
#: Tiny bounds: about three segments of ~2 KB fit the budget.
LIMITS = JournalLimits(
    max_segment_bytes=2000, max_total_bytes=6000, min_free_disk_bytes=NO_DISK_ROOM
)
#: The same with the default disk reserve, which the test machine's disk has.
ROOMY = JournalLimits(max_segment_bytes=2000, max_total_bytes=6000)


def notification(n: int, pad: str = "") -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s", "n": n, "pad": pad},
    }


def request(request_id: int) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "session/prompt", "params": {}}


async def _flood(server: object, count: int) -> list[JournalRef]:
    refs = []
    for n in range(count):
        refs.append(await server.append("inbound", notification(n, "p" * 200), input_bytes=300))  # type: ignore[attr-defined]
    return refs


async def test_a_pinned_record_is_never_pruned_and_the_journal_fails_classified(
    tmp_path: Path,
) -> None:
    journal = Journal(tmp_path / "journals")
    floors: dict[str, int] = {}
    journal.set_pinned_floor(floors.get)
    server = await journal.open_server("srv-1", limits=LIMITS)
    prompt = await server.append("outbound", request(1), input_bytes=80)
    floors["srv-1"] = prompt.sequence  # the store now cites the prompt
    with pytest.raises(JournalRetentionExhausted) as info:
        await _flood(server, 200)
    assert info.value.code == "JOURNAL_RETENTION_EXHAUSTED"
    assert isinstance(info.value, JournalSyncFailed)  # sticky, like every write failure
    with pytest.raises(JournalRetentionExhausted):
        await server.append("inbound", notification(999), input_bytes=80)
    with pytest.raises(JournalRetentionExhausted):
        await server.close()
    assert journal.read(prompt).sequence == prompt.sequence  # the evidence is still there
    # The budget held to within the segment being written.
    on_disk = sum(
        (journal.directory / name).stat().st_size for name in os.listdir(journal.directory)
    )
    assert on_disk <= LIMITS.max_total_bytes + LIMITS.max_segment_bytes


async def test_records_below_the_floor_are_still_pruned(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journals")
    floors: dict[str, int] = {}
    journal.set_pinned_floor(floors.get)
    server = await journal.open_server("srv-1", limits=LIMITS)
    early = await _flood(server, 40)
    floors["srv-1"] = early[-1].sequence + 1  # only what comes next is cited
    later = await _flood(server, 4)
    await server.close()
    assert journal.read(later[0]).sequence == later[0].sequence
    assert journal.verify("srv-1").segments[0] > 0  # old, uncited segments went


async def test_without_a_floor_retention_prunes_as_before(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journals")
    server = await journal.open_server("srv-1", limits=LIMITS)
    prompt = await server.append("outbound", request(1), input_bytes=80)
    await _flood(server, 200)
    await server.close()
    assert journal.verify("srv-1").segments[0] > 0
    with pytest.raises(Exception, match="JOURNAL_ENTRY_PRUNED"):
        journal.read(prompt)


async def test_the_floor_of_a_segment_recovered_from_disk_is_read_back(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journals")
    server = await journal.open_server("srv-1", limits=LIMITS)
    first = (await _flood(server, 10))[0]
    await server.close()
    journal.set_pinned_floor(lambda _server: first.sequence)
    reopened = await journal.open_server("srv-1", limits=LIMITS)
    with pytest.raises(JournalRetentionExhausted):
        await _flood(reopened, 200)
    with pytest.raises(JournalRetentionExhausted):
        await reopened.close()
    assert journal.read(first).sequence == first.sequence


async def test_the_store_pins_what_it_cites_through_the_journal(tmp_path: Path) -> None:
    data = tmp_path / "data"
    journal = Journal.in_data_dir(data)
    store = Store.open(data, flush=journal.flush_refs)
    journal.set_pinned_floor(store.pinned_sequence_floor)
    try:
        server = await journal.open_server("srv-1", limits=LIMITS)
        await _flood(server, 5)  # session setup: not cited
        prompt = await server.append("outbound", request(1), input_bytes=80)
        store.create_server_instance("scripted", "default", 1, server_id="srv-1")
        run = store.create_run("p", status="STARTING", server_instance_id="srv-1")
        await store.set_run_prompt_ref(run.id, prompt)
        assert store.pinned_sequence_floor("srv-1") == prompt.sequence
        assert store.pinned_sequence_floor("srv-other") is None
        with pytest.raises(JournalRetentionExhausted):
            await _flood(server, 200)
        with pytest.raises(JournalRetentionExhausted):
            await server.close()
        assert journal.read(prompt).sequence == prompt.sequence
    finally:
        store.close()


async def test_a_running_turn_outgrows_the_budget_while_the_disk_has_room(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(segments_module, "PINNED_RECHECK_BYTES", 1500)
    journal = Journal(tmp_path / "journals")
    floors: dict[str, int] = {}
    asked: list[str] = []

    def floor(server: str) -> int | None:
        asked.append(server)
        return floors.get(server)

    journal.set_pinned_floor(floor)
    server = await journal.open_server("srv-1", limits=ROOMY)
    prompt = await server.append("outbound", request(1), input_bytes=80)
    floors["srv-1"] = prompt.sequence  # the turn is running: everything from its prompt stays
    refs = await _flood(server, 200)  # about 90 KB: fifteen times the 6,000-byte budget
    assert server.total_bytes > 10 * ROOMY.max_total_bytes
    assert journal.read(prompt).sequence == prompt.sequence
    assert journal.read(refs[0]).sequence == refs[0].sequence
    # Looked again once per recheck distance, not once per record.
    assert len(asked) <= server.total_bytes // 1500 + 2
    # The turn ended: the floor moves past it, and within one recheck distance retention
    # brings the journal back within its budget.
    del floors["srv-1"]
    await _flood(server, 10)
    await server.close()
    assert server.total_bytes <= ROOMY.max_total_bytes + ROOMY.max_segment_bytes
    with pytest.raises(Exception, match="JOURNAL_ENTRY_PRUNED"):
        journal.read(prompt)


def test_the_disk_reserve_is_a_checked_limit() -> None:
    from baton.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="min_free_disk_bytes"):
        JournalLimits(min_free_disk_bytes=-1)
