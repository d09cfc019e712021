"""A server journal's segment files: writing the buffered lines (every byte, in order),
rotating to the next segment, and retention (pruning the oldest segments, never a pinned one).

:class:`SegmentFiles` is the part of :class:`~baton.journal.writer.ServerJournal` that owns the
files and their byte accounting; the blocking helpers :func:`write_all` and :func:`sync_all`
are what it and the group commit (:mod:`baton.journal.commit`) run."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Final

from baton.durable import files
from baton.errors import JournalRetentionExhausted, JournalSyncFailed
from baton.journal.limits import JournalLimits
from baton.journal.records import PendingRecords, RecordHead, UtcStamps, segment_name
from baton.journal.repair import last_sequence_of

#: Given a server instance id, the lowest journal sequence that must be kept (every record at
#: or after it), or None when nothing is pinned. See :meth:`SegmentFiles._prune`.
PinnedFloor = Callable[[str], int | None]

#: Bytes appended, while a running turn's pinned records are kept past the disk budget,
#: before retention looks again (at the floor and at the free space): bounds the cost of the
#: check (one store query and one statfs per MiB, not per record) and how long a journal stays
#: over its budget after the floor moves. Far below any disk reserve.
PINNED_RECHECK_BYTES: Final = 1024 * 1024

#: Buffers given to one ``writev`` (the system's IOV_MAX is at least 16 by POSIX, 1024 on
#: Linux); a write buffer holds a few parts per batch of records, or one per single record.
MAX_WRITE_PARTS: Final = min(os.sysconf("SC_IOV_MAX"), 1024) if hasattr(os, "sysconf") else 16


def sync_all(retired: list[int], current: int, dir_fd: int | None) -> None:
    """Sync the retired segments, the current one and (when given) the directory entries."""
    for fd in retired:
        files.sync_file(fd)
    files.sync_file(current)
    if dir_fd is not None:
        files.sync_dir(dir_fd)


def write_all(fd: int, parts: list[bytes]) -> None:
    """Write every byte of ``parts``, in order, with ``writev`` (no joined copy of a write
    buffer first); a short write resumes where it stopped."""
    pending: list[bytes | memoryview] = list(parts)
    while pending:
        written = os.writev(fd, pending[:MAX_WRITE_PARTS])
        done = 0
        for part in pending:
            if written < len(part):
                break
            written -= len(part)
            done += 1
        del pending[:done]
        if written:
            pending[0] = memoryview(pending[0])[written:]


class SegmentFiles:
    """The segment files of one server journal and their byte accounting (see
    :class:`~baton.journal.writer.ServerJournal`, which sets every attribute below)."""

    _server: str
    _directory: Path
    _dir_fd: int
    _fd: int
    _segment: int
    _sizes: dict[int, int]
    _appended: int
    _segment_base: int
    _written: int
    _retired_bytes: int
    _written_sequence: int
    _pending: list[PendingRecords]
    _heads: dict[str, RecordHead]
    _inbound_fixed: int
    _stamps: UtcStamps
    _retired: list[int]
    _dir_dirty: bool
    _check_at: int
    _limits: JournalLimits
    _failure: JournalSyncFailed | None
    _pinned_floor: PinnedFloor | None
    _last_sequences: dict[int, int]
    _kept_until: int

    @property
    def total_bytes(self) -> int:
        """Bytes of all this server's segments (records in the write buffer included)."""
        return self._retired_bytes + self._appended - self._segment_base

    def _write_buffer(self) -> None:
        """Encode and write the pending inbound lines in one go; a failure is sticky."""
        pending = self._pending
        if not pending:
            return
        data = self._heads["inbound"].line_parts(pending, self._stamps)
        pending.clear()
        self._write_at(self._written - self._segment_base, data)
        self._written = self._appended

    def _write_at(self, offset: int, data: list[bytes]) -> None:
        """Append the bytes of ``data``, which start at ``offset`` of the current segment; a
        failure truncates the torn write (best effort) and is sticky."""
        try:
            write_all(self._fd, data)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, offset)  # best effort; reopening repairs it anyway
            raise self._fail("writing", exc) from exc

    def _heads_for(self, segment: int) -> dict[str, RecordHead]:
        return {
            direction: RecordHead(self._server, segment, direction)
            for direction in ("inbound", "outbound")
        }

    def _rotate(self) -> None:
        self._write_buffer()  # the buffered lines belong to the segment being retired
        number = self._segment + 1
        name = segment_name(self._server, number)
        try:
            fd = files.open_file(
                self._dir_fd,
                name,
                os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_EXCL,
                display=self._directory / name,
            )
        except OSError as exc:
            raise self._fail("starting a segment", exc) from exc
        self._retired.append(self._fd)
        self._last_sequences[self._segment] = self._written_sequence
        size = self._appended - self._segment_base
        self._sizes[self._segment] = size
        self._retired_bytes += size
        self._fd = fd
        self._segment = number
        self._segment_base = self._appended
        self._sizes[number] = 0
        self._heads = self._heads_for(number)
        self._inbound_fixed = self._heads["inbound"].fixed
        self._dir_dirty = True
        self._check_at = 0  # the prune position moved

    def _prune(self) -> None:
        """Delete the oldest segments until the journal is within its disk budget, never one
        that holds a pinned record: one at or after the sequence ``pinned_floor`` names (the
        oldest record the run store cites, which covers every record of an unfinished run from
        its prompt on).

        When only pinned segments are left over the budget, a running turn is not failed for
        its own size: its records are kept past the budget while the file system keeps at
        least ``min_free_disk_bytes`` free, and the journal looks again after another
        :data:`PINNED_RECHECK_BYTES` (the budget bounds what is kept once turns end: the first
        append after the floor moves prunes back to it). Only when the disk reserve is reached
        does the journal fail with JournalRetentionExhausted (sticky) rather than delete
        evidence or fill the disk."""
        if self._appended < self._kept_until:
            return
        while self.total_bytes > self._limits.max_total_bytes:
            oldest = min(self._sizes)
            if oldest == self._segment:
                return
            if self._pinned(oldest):
                if self._disk_has_room():
                    self._kept_until = self._appended + PINNED_RECHECK_BYTES
                    return
                if self._failure is None:
                    self._failure = JournalRetentionExhausted(
                        f"the journal of {self._server} is over its disk budget of "
                        f"{self._limits.max_total_bytes} bytes, its oldest segment "
                        f"({oldest}) holds records the run store cites or an unfinished run "
                        f"needs, and the file system has less than "
                        f"{self._limits.min_free_disk_bytes} bytes free; it accepts no more "
                        f"records"
                    )
                raise self._failure
            try:
                os.unlink(segment_name(self._server, oldest), dir_fd=self._dir_fd)
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise self._fail("pruning a segment", exc) from exc
            self._retired_bytes -= self._sizes.pop(oldest)
            self._last_sequences.pop(oldest, None)

    def _disk_has_room(self) -> bool:
        """Whether the journal's file system has at least ``min_free_disk_bytes`` free for an
        unprivileged writer (an unreadable answer counts as no room: fail closed)."""
        try:
            stat = os.fstatvfs(self._dir_fd)
        except OSError:
            return False
        return stat.f_bavail * stat.f_frsize >= self._limits.min_free_disk_bytes

    def _pinned(self, segment: int) -> bool:
        """Whether retired ``segment`` holds a record at or after the pinned floor."""
        if self._pinned_floor is None:
            return False
        floor = self._pinned_floor(self._server)
        if floor is None:
            return False
        last = self._last_sequences.get(segment)
        if last is None:
            try:
                last = last_sequence_of(self._dir_fd, self._directory, self._server, segment)
            except OSError as exc:
                raise self._fail("reading a segment", exc) from exc
            if last is None:
                return False  # an empty segment holds nothing to keep
            self._last_sequences[segment] = last
        return last >= floor

    def _fail(self, doing: str, exc: OSError) -> JournalSyncFailed:
        if self._failure is None:
            self._failure = JournalSyncFailed(
                f"{doing} the journal of {self._server} failed ({exc.strerror or exc}); "
                f"it accepts no more records"
            )
        return self._failure

    def _raise_if_failed(self) -> None:
        if self._failure is not None:
            raise type(self._failure)(self._failure.message) from self._failure
