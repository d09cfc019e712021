"""Writing a segment file: every byte of a write buffer in order, and the group commit's sync
of the segments a sync covers. Blocking helpers of :class:`~baton.journal.writer.ServerJournal`
(rotation and pruning are its methods: they move its byte accounting)."""

from __future__ import annotations

import os
from typing import Final

from baton.durable import files

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
