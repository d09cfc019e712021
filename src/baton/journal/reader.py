"""Reading the journal back: one reference, every record of a server, a bounded tail, verify.

Readers never write and never follow symlinks; they may run while a writer appends (a
partial last line is then reported, not read). Every record they return passed
:func:`~baton.journal.records.decode_record` (fields and SHA-256); :func:`iter_records` and
:func:`verify_server` also check the records' places: the segment number in the file name,
the server id, and the sequence chain (+1 from record to record, across segments).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from baton.durable import files
from baton.durable.refs import JournalRef, record_location, validate_server_id
from baton.errors import JournalCorrupt, JournalEntryPruned, RecordNotFound
from baton.journal.limits import MAX_RECORD_BYTES, MAX_TAIL_BYTES, MAX_TAIL_RECORDS
from baton.journal.records import (
    JournalRecord,
    RecordChecker,
    decode_record,
    parse_segment_name,
    record_of,
    segment_name,
)

#: Read buffer for scanning segments front to back.
SCAN_BUFFER_BYTES: Final = 1024 * 1024


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """What :func:`verify_server` checked for one server (raised JournalCorrupt otherwise)."""

    server: str
    segments: tuple[int, ...]
    records: int
    first_sequence: int | None
    last_sequence: int | None
    bytes: int
    #: Bytes after the last newline of the current segment: a write in progress, or one a
    #: crash cut short (the writer truncates it when it reopens). Never a record.
    partial_tail_bytes: int


def list_servers(directory: Path) -> list[str]:
    """Server instance ids with at least one segment in ``directory``, sorted."""
    dir_fd = files.open_dir(directory)
    try:
        names = os.listdir(dir_fd)
    finally:
        os.close(dir_fd)
    servers = {parsed[0] for name in names if (parsed := parse_segment_name(name)) is not None}
    return sorted(servers)


def list_segments(dir_fd: int, server: str) -> list[int]:
    """The segment numbers of ``server`` in the directory open as ``dir_fd``, ascending."""
    found = []
    for name in os.listdir(dir_fd):
        parsed = parse_segment_name(name)
        if parsed is not None and parsed[0] == server:
            found.append(parsed[1])
    return sorted(found)


def read_ref(directory: Path, ref: JournalRef) -> JournalRecord:
    """Read the record ``ref`` names and re-validate it against every field of ``ref``.

    Raises :class:`~baton.errors.JournalEntryPruned` when its segment was removed by the
    retention bound, :class:`~baton.errors.JournalCorrupt` for anything else that does not
    match (missing file, not at a line boundary, other fields, bad hash).
    """
    where = str(ref)
    if ref.byte_length > MAX_RECORD_BYTES:
        raise JournalCorrupt(where, "the reference's length exceeds the record bound")
    dir_fd = files.open_dir(directory)
    try:
        name = segment_name(ref.server, ref.segment)
        try:
            fd = files.open_file(dir_fd, name, os.O_RDONLY, display=directory / name)
        except FileNotFoundError:
            present = list_segments(dir_fd, ref.server)
            if present and ref.segment < present[0]:
                raise JournalEntryPruned(
                    f"journal record {where}: segment {ref.segment} was pruned by the "
                    f"per-server retention bound (oldest kept: {present[0]})"
                ) from None
            raise JournalCorrupt(where, "its segment file is missing") from None
    finally:
        os.close(dir_fd)
    try:
        before = 1 if ref.byte_offset > 0 else 0
        want = before + ref.byte_length + 1
        data = os.pread(fd, want, ref.byte_offset - before)
    finally:
        os.close(fd)
    if len(data) != want:
        raise JournalCorrupt(where, "the segment ends before the referenced record")
    if before and data[0:1] != b"\n":
        raise JournalCorrupt(where, "the reference does not start at a record boundary")
    if data[-1:] != b"\n":
        raise JournalCorrupt(where, "the reference does not end at a record boundary")
    record = decode_record(data[before:-1], where)
    if record.server_instance_id != ref.server:
        raise JournalCorrupt(where, f"the record belongs to {record.server_instance_id!r}")
    if record.segment != ref.segment:
        raise JournalCorrupt(where, f"the record says segment {record.segment}")
    if record.sequence != ref.sequence:
        raise JournalCorrupt(where, f"the record says sequence {record.sequence}")
    if record.sha256 != ref.sha256:
        raise JournalCorrupt(where, "the record's SHA-256 differs from the reference's")
    return record


class _Scan:
    """Front-to-back scan of one server's segments with every position check."""

    def __init__(self, directory: Path, server: str, *, build: bool = True) -> None:
        self.directory = directory
        self.server = validate_server_id(server)
        #: Whether iterating yields the records; a verify only checks them (no object each).
        self.build = build
        self.segments: tuple[int, ...] = ()
        self.records = 0
        self.first: int | None = None
        self.last: int | None = None
        self.bytes = 0
        self.partial = 0

    def __iter__(self) -> Iterator[JournalRecord]:
        dir_fd = files.open_dir(self.directory)
        try:
            segments = list_segments(dir_fd, self.server)
            if not segments:
                raise RecordNotFound(f"no journal for server instance {self.server!r}")
            self.segments = tuple(segments)
            for previous, current in itertools.pairwise(segments):
                if current != previous + 1:
                    raise JournalCorrupt(
                        record_location(self.server, previous + 1, None, 0),
                        "this segment file is missing",
                    )
            expected: int | None = 1 if segments[0] == 0 else None
            checker = RecordChecker()
            build = self.build
            for number in segments:
                last_segment = number == segments[-1]
                name = segment_name(self.server, number)
                fd = files.open_file(dir_fd, name, os.O_RDONLY, display=self.directory / name)
                with os.fdopen(fd, "rb", buffering=SCAN_BUFFER_BYTES) as stream:
                    offset = 0
                    count = 0
                    while True:
                        line = stream.readline(MAX_RECORD_BYTES + 1)
                        if not line:
                            break
                        if not line.endswith(b"\n"):
                            where = record_location(self.server, number, None, offset)
                            if len(line) > MAX_RECORD_BYTES:
                                raise JournalCorrupt(where, "a line is longer than any record")
                            if not last_segment:
                                raise JournalCorrupt(where, "a retired segment ends mid-line")
                            self.partial = len(line)
                            break
                        try:
                            data = checker.fields(line[:-1], "")
                        except JournalCorrupt as exc:
                            # The location is formatted only for a bad record (not per record).
                            where = record_location(self.server, number, None, offset)
                            raise JournalCorrupt(where, exc.problem) from None
                        sequence = data["sequence"]
                        if data["serverInstanceId"] != self.server:
                            where = record_location(self.server, number, sequence, offset)
                            raise JournalCorrupt(where, "the record names another server")
                        if data["segment"] != number:
                            where = record_location(self.server, number, sequence, offset)
                            raise JournalCorrupt(
                                where, f"the record says segment {data['segment']}"
                            )
                        if expected is not None and sequence != expected:
                            raise JournalCorrupt(
                                record_location(self.server, number, sequence, offset),
                                f"sequence {sequence} breaks the chain (expected {expected})",
                            )
                        expected = sequence + 1
                        if self.first is None:
                            self.first = sequence
                        self.last = sequence
                        self.records += 1
                        count += 1
                        offset += len(line)
                        if build:
                            yield record_of(data)
                    self.bytes += offset + self.partial
                if count == 0 and not last_segment:
                    raise JournalCorrupt(
                        record_location(self.server, number, None, 0),
                        "a retired segment holds no record",
                    )
        finally:
            os.close(dir_fd)


def iter_records(directory: Path, server: str) -> Iterator[JournalRecord]:
    """Every record of ``server`` in sequence order, each validated in place.

    Raises :class:`~baton.errors.RecordNotFound` when the server has no journal and
    :class:`~baton.errors.JournalCorrupt` at the first bad record (records before it were
    yielded).
    """
    return iter(_Scan(directory, server))


def verify_server(directory: Path, server: str) -> VerifyReport:
    """Re-validate every record and hash of ``server`` and the sequence chain.

    Returns a report when everything is good; raises :class:`~baton.errors.JournalCorrupt`
    naming the first bad record otherwise.
    """
    scan = _Scan(directory, server, build=False)
    for _record in scan:
        pass
    return VerifyReport(
        scan.server,
        scan.segments,
        scan.records,
        scan.first,
        scan.last,
        scan.bytes,
        scan.partial,
    )


def tail(directory: Path, server: str, count: int = MAX_TAIL_RECORDS) -> list[JournalRecord]:
    """The last ``count`` complete records of ``server`` (at most :data:`MAX_TAIL_RECORDS`), in
    sequence order, reading at most :data:`MAX_TAIL_BYTES` of the files.

    A diagnostic view: each record is validated (fields and hash) but the chain is not (use
    :func:`verify_server`). Records beyond the byte budget are left out, so the tail may be
    shorter than asked.
    """
    validate_server_id(server)
    count = max(0, min(count, MAX_TAIL_RECORDS))
    found: list[JournalRecord] = []
    if count == 0:
        return found
    budget = MAX_TAIL_BYTES
    dir_fd = files.open_dir(directory)
    try:
        segments = list_segments(dir_fd, server)
        if not segments:
            raise RecordNotFound(f"no journal for server instance {server!r}")
        for number in reversed(segments):
            name = segment_name(server, number)
            fd = files.open_file(dir_fd, name, os.O_RDONLY, display=directory / name)
            try:
                size = os.fstat(fd).st_size
                start = max(0, size - budget)
                data = os.pread(fd, size - start, start)
            finally:
                os.close(fd)
            budget -= len(data)
            end = data.rfind(b"\n")
            if end < 0:
                if start > 0:
                    break  # one line longer than the remaining budget
                continue
            lines = data[: end + 1].split(b"\n")[:-1]
            offsets = []
            position = start
            for line in lines:
                offsets.append(position)
                position += len(line) + 1
            first_complete = start == 0
            collected: list[JournalRecord] = []
            for index in range(len(lines) - 1, -1, -1):
                if index == 0 and not first_complete:
                    break  # cut by the budget: not a whole line
                where = record_location(server, number, None, offsets[index])
                collected.append(decode_record(lines[index], where))
                if len(found) + len(collected) >= count:
                    break
            found.extend(collected)
            if len(found) >= count or budget <= 0 or not first_complete:
                break
    finally:
        os.close(dir_fd)
    found.reverse()
    return found
