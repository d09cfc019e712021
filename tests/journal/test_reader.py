"""Reading back: references, full scans with the chain checks, verify and the bounded tail."""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path

import pytest

from baton.errors import JournalCorrupt, RecordNotFound
from baton.journal import MAX_TAIL_RECORDS, Journal, JournalLimits, JournalRef
from baton.journal import reader as journal_reader


def notification(n: int, pad: str = "") -> dict[str, object]:
    """A small notification (not session/update, so nothing of it is masked)."""
    return {"jsonrpc": "2.0", "method": "_test/tick", "params": {"n": n, "pad": pad}}


async def _fill(
    journal: Journal, count: int, limits: JournalLimits | None = None
) -> list[JournalRef]:
    server = await journal.open_server("srv-1", limits=limits or JournalLimits())
    refs = [
        await server.append("inbound", notification(n, "r" * 100), input_bytes=150)
        for n in range(count)
    ]
    await server.close()
    return refs


def _append_bytes(path: Path, data: bytes) -> None:
    with path.open("ab") as handle:
        handle.write(data)


def _segment(journal: Journal, number: int = 0) -> Path:
    return journal.directory / f"srv-1.{number}.ndjson"


async def test_read_rejects_a_ref_that_does_not_match(journal: Journal) -> None:
    refs = await _fill(journal, 3)
    ref = refs[1]
    assert journal.read(ref).sequence == 2
    cases = {
        "start at a record boundary": replace(ref, byte_offset=ref.byte_offset + 1),
        "end at a record boundary": replace(ref, byte_length=ref.byte_length - 1),
        "sequence 2": replace(ref, sequence=3),
        "SHA-256 differs": replace(ref, sha256="0" * 64),
        "segment file is missing": replace(ref, segment=5),
        "ends before": replace(ref, byte_offset=10**6),
        "belongs to": replace(ref, server="srv-2"),
    }
    (journal.directory / "srv-2.0.ndjson").write_bytes(_segment(journal).read_bytes())
    (journal.directory / "srv-2.0.ndjson").chmod(0o600)
    for problem, bad in cases.items():
        with pytest.raises((JournalCorrupt, RecordNotFound), match=problem):
            journal.read(bad)


async def test_read_detects_a_tampered_record(journal: Journal) -> None:
    refs = await _fill(journal, 3)
    path = _segment(journal)
    data = bytearray(path.read_bytes())
    index = data.index(b'\\"n\\":1')  # inside the raw text of sequence 2
    data[index + 5] = ord("7")
    path.write_bytes(bytes(data))
    with pytest.raises(JournalCorrupt, match="SHA-256") as info:
        journal.read(refs[1])
    assert "sequence 2" in info.value.record
    assert journal.read(refs[0]).sequence == 1


async def test_verify_reports_a_good_journal(journal: Journal) -> None:
    await _fill(journal, 30, JournalLimits(max_segment_bytes=1500, max_total_bytes=10**6))
    report = journal.verify("srv-1")
    assert report.records == 30
    assert (report.first_sequence, report.last_sequence) == (1, 30)
    assert report.segments == tuple(range(len(report.segments)))
    assert report.bytes == sum(p.stat().st_size for p in journal.directory.iterdir())
    assert [r.server for r in journal.verify_all()] == ["srv-1"]
    assert journal.servers() == ["srv-1"]


async def test_verify_names_the_first_bad_record(journal: Journal) -> None:
    await _fill(journal, 5)
    path = _segment(journal)
    lines = path.read_bytes().split(b"\n")
    lines[2] = lines[2].replace(b'"raw":"{', b'"raw":"{ ')
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(JournalCorrupt) as info:
        journal.verify("srv-1")
    assert (
        info.value.record
        == f"srv-1 segment 0 sequence ? at byte {sum(len(x) + 1 for x in lines[:2])}"
    )
    # The records before the bad one were readable.
    seen = []
    with pytest.raises(JournalCorrupt):
        for record in journal.records("srv-1"):
            seen.append(record.sequence)
    assert seen == [1, 2]


async def test_verify_detects_a_broken_chain(journal: Journal) -> None:
    await _fill(journal, 5)
    path = _segment(journal)
    lines = path.read_bytes().split(b"\n")
    del lines[1]
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(JournalCorrupt, match="breaks the chain") as info:
        journal.verify("srv-1")
    assert "sequence 3" in info.value.record


async def test_verify_detects_a_record_in_the_wrong_segment(journal: Journal) -> None:
    refs = await _fill(journal, 20, JournalLimits(max_segment_bytes=1500, max_total_bytes=10**6))
    assert refs[-1].segment >= 2
    first = _segment(journal, 0).read_bytes()
    _segment(journal, 1).write_bytes(first)
    with pytest.raises(JournalCorrupt, match="says segment 0"):
        journal.verify("srv-1")


async def test_verify_detects_a_missing_segment_and_a_torn_retired_one(journal: Journal) -> None:
    limits = JournalLimits(max_segment_bytes=1500, max_total_bytes=10**6)
    await _fill(journal, 20, limits)
    middle = _segment(journal, 1)
    saved = middle.read_bytes()
    middle.unlink()
    with pytest.raises(JournalCorrupt, match="missing"):
        journal.verify("srv-1")
    fd = os.open(middle, os.O_CREAT | os.O_WRONLY, 0o600)
    os.write(fd, saved[:-10])
    os.close(fd)
    with pytest.raises(JournalCorrupt, match="retired segment ends mid-line"):
        journal.verify("srv-1")
    middle.write_bytes(b"")
    with pytest.raises(JournalCorrupt, match="holds no record"):
        journal.verify("srv-1")


async def test_verify_detects_a_first_record_that_is_not_one(journal: Journal) -> None:
    await _fill(journal, 3)
    path = _segment(journal)
    path.write_bytes(path.read_bytes().split(b"\n", 1)[1])
    with pytest.raises(JournalCorrupt, match="expected 1"):
        journal.verify("srv-1")


async def test_verify_rejects_an_endless_line(
    journal: Journal, monkeypatch: pytest.MonkeyPatch
) -> None:
    await _fill(journal, 1)
    monkeypatch.setattr(journal_reader, "MAX_RECORD_BYTES", 100)
    _append_bytes(_segment(journal), b"x" * 500)
    with pytest.raises(JournalCorrupt, match="longer than any record"):
        journal.verify("srv-1")


async def test_unknown_server(journal: Journal) -> None:
    with pytest.raises(RecordNotFound):
        journal.verify("nope")
    with pytest.raises(RecordNotFound):
        journal.tail("nope")
    assert journal.servers() == []


async def test_tail_returns_the_last_records_in_order(journal: Journal) -> None:
    await _fill(journal, 40, JournalLimits(max_segment_bytes=1500, max_total_bytes=10**6))
    assert [r.sequence for r in journal.tail("srv-1", 5)] == [36, 37, 38, 39, 40]
    # Spanning segments.
    assert [r.sequence for r in journal.tail("srv-1", 25)] == list(range(16, 41))
    assert journal.tail("srv-1", 0) == []
    assert len(journal.tail("srv-1", 1000)) == 40


async def test_tail_is_bounded_by_count_and_bytes(
    journal: Journal, monkeypatch: pytest.MonkeyPatch
) -> None:
    await _fill(journal, MAX_TAIL_RECORDS + 20)
    tail = journal.tail("srv-1", MAX_TAIL_RECORDS + 20)
    assert len(tail) == MAX_TAIL_RECORDS
    assert tail[-1].sequence == MAX_TAIL_RECORDS + 20
    line_bytes = _segment(journal).stat().st_size // (MAX_TAIL_RECORDS + 20)
    monkeypatch.setattr(journal_reader, "MAX_TAIL_BYTES", line_bytes * 10 + line_bytes // 2)
    bounded = journal.tail("srv-1", 50)
    assert 8 <= len(bounded) <= 10
    assert bounded[-1].sequence == MAX_TAIL_RECORDS + 20
    assert [r.sequence for r in bounded] == list(
        range(bounded[0].sequence, bounded[-1].sequence + 1)
    )


async def test_tail_skips_a_partial_last_line(journal: Journal) -> None:
    await _fill(journal, 3)
    _append_bytes(_segment(journal), b'{"serverInstanceId":"srv-1"')
    assert [r.sequence for r in journal.tail("srv-1", 10)] == [1, 2, 3]
    assert journal.verify("srv-1").partial_tail_bytes == len(b'{"serverInstanceId":"srv-1"')


async def _same_body_journal(journal: Journal, count: int) -> Path:
    """``count`` records that share one raw text, metadata and hash (a streamed turn's deltas)."""
    server = await journal.open_server("srv-1")
    for _ in range(count):
        await server.append("inbound", notification(0, "same"), input_bytes=60)
    await server.close()
    return _segment(journal)


async def test_verify_builds_no_record_per_line(
    journal: Journal, monkeypatch: pytest.MonkeyPatch
) -> None:
    await _same_body_journal(journal, 20)
    built: list[object] = []
    real = journal_reader.record_of

    def counting(data: dict[str, object]) -> object:
        built.append(data)
        return real(data)

    monkeypatch.setattr(journal_reader, "record_of", counting)
    assert journal.verify("srv-1").records == 20
    assert built == []
    assert len(list(journal.records("srv-1"))) == 20  # a reading scan still builds them
    assert len(built) == 20


@pytest.mark.parametrize(
    ("old", "new", "problem"),
    [
        (b'"sha256":"', b'"sha256":"0', "sha256 is not 64"),  # a repeated body, its hash bent
        (b'\\"pad\\":\\"same', b'\\"pad\\":\\"sane', "does not match"),  # raw bent, hash kept
        (b'"kind":"notification"', b'"kind":"nonsense"', "metadata.kind"),
        (b"", b'"recordedAt":"2026-13-01T00:00:00.000000Z"', "not a valid date"),  # a new second
    ],
)
async def test_verify_checks_a_repeated_value_again_once_it_changes(
    journal: Journal, old: bytes, new: bytes, problem: str
) -> None:
    path = await _same_body_journal(journal, 4)
    lines = path.read_bytes().split(b"\n")
    if old:
        lines[2] = lines[2].replace(old, new, 1)
    else:  # the whole timestamp: the pattern holds, the calendar does not
        lines[2] = re.sub(rb'"recordedAt":"[^"]*"', new, lines[2])
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(JournalCorrupt, match=problem) as info:
        journal.verify("srv-1")
    assert info.value.record.endswith(f"at byte {sum(len(x) + 1 for x in lines[:2])}")
