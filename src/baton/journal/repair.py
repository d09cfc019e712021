"""Crash repair of a server's journal when it is opened: find the segments, truncate a torn
last line, and find where the sequence continues.

A partial last line (a write cut short by a crash) is truncated and the truncation synced; the
sequence continues from the last complete record, in that segment or the one before it. A
complete last line that fails validation is corruption, not a torn write, and refuses to open.
Blocking: :class:`~baton.journal.writer.ServerJournal` runs :func:`recover` in a thread.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Final

from baton.durable import files
from baton.durable.refs import record_location
from baton.errors import JournalCorrupt
from baton.journal.limits import MAX_RECORD_BYTES
from baton.journal.reader import list_segments
from baton.journal.records import decode_record, segment_name

#: Bytes read per step when scanning a segment backwards for its last complete line.
TAIL_SCAN_CHUNK_BYTES: Final = 64 * 1024


def _last_newline(fd: int, end: int) -> int:
    """Offset of the last ``\\n`` before ``end``, or -1."""
    pos = end
    while pos > 0:
        start = max(0, pos - TAIL_SCAN_CHUNK_BYTES)
        chunk = os.pread(fd, pos - start, start)
        index = chunk.rfind(b"\n")
        if index >= 0:
            return start + index
        pos = start
    return -1


def _last_sequence(fd: int, size: int, server: str, segment: int) -> int | None:
    """The sequence of the last record of a segment whose data ends with a newline."""
    if size == 0:
        return None
    start = _last_newline(fd, size - 1) + 1
    where = record_location(server, segment, None, start)
    if size - 1 - start > MAX_RECORD_BYTES:
        raise JournalCorrupt(where, "the last line is longer than any record")
    line = os.pread(fd, size - 1 - start, start)
    record = decode_record(line, where)
    if record.server_instance_id != server or record.segment != segment:
        raise JournalCorrupt(where, "the record names another server or segment")
    return record.sequence


class Recovered:
    """What :func:`_recover` found on disk (blocking work done in a thread)."""

    def __init__(self) -> None:
        self.fd = -1
        self.segment = 0
        self.segment_size = 0
        self.sizes: dict[int, int] = {}
        self.next_sequence = 1
        self.repaired_bytes = 0


def recover(dir_fd: int, directory: Path, server: str) -> Recovered:
    """Check, repair and measure the segments of ``server`` in the directory ``dir_fd``; open
    (or create) the current one for appending."""
    state = Recovered()
    segments = list_segments(dir_fd, server)
    for previous, current in itertools.pairwise(segments):
        if current != previous + 1:
            raise JournalCorrupt(
                record_location(server, previous + 1, None, 0), "this segment file is missing"
            )
    for number in segments:
        name = segment_name(server, number)
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        files.check_private_file(directory / name, st)
        state.sizes[number] = st.st_size
    if not segments:
        name = segment_name(server, 0)
        state.fd = files.open_file(
            dir_fd, name, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_EXCL, display=directory / name
        )
        files.sync_dir(dir_fd)
        state.sizes[0] = 0
        return state
    current = segments[-1]
    name = segment_name(server, current)
    fd = files.open_file(dir_fd, name, os.O_RDWR | os.O_APPEND, display=directory / name)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            keep = _last_newline(fd, size) + 1
            os.ftruncate(fd, keep)
            state.repaired_bytes = size - keep
            size = keep
        # Whatever is on disk now counts as synced from here on: make it so (a writer that
        # failed before closing may have left records in the page cache only).
        files.sync_file(fd)
        state.sizes[current] = size
        last = _last_sequence(fd, size, server, current)
        number = current
        while last is None and number > segments[0]:
            number -= 1
            last = last_sequence_of(dir_fd, directory, server, number)
        if last is None and segments[0] != 0:
            raise JournalCorrupt(
                record_location(server, current, None, 0),
                "no complete record is left to continue the sequence from",
            )
        state.fd = fd
        state.segment = current
        state.segment_size = size
        state.next_sequence = (last or 0) + 1
        return state
    except BaseException:
        os.close(fd)
        raise


def last_sequence_of(dir_fd: int, directory: Path, server: str, segment: int) -> int | None:
    """The sequence of the last record of a retired segment (None when it is empty)."""
    name = segment_name(server, segment)
    fd = files.open_file(dir_fd, name, os.O_RDONLY, display=directory / name)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            raise JournalCorrupt(
                record_location(server, segment, None, size), "a retired segment ends mid-line"
            )
        return _last_sequence(fd, size, server, segment)
    finally:
        os.close(fd)
