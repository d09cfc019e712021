"""Every bound of the journal, with what it protects.

Memory: an append holds one message, its redacted copy and its encoded record line at once, so
the journal's own peak per append is about ``4 * MAX_ENTRY_BYTES`` (96 MiB) for the largest
message and a few KiB for a typical stream delta. Disk: after every append one server's journal
holds at most ``MAX_TOTAL_BYTES`` (whole oldest segments are deleted to get there), except
while a running turn's own records outgrow it: those are kept until the file system has
``MIN_FREE_DISK_BYTES`` left. Data at
risk on a crash: every outbound record is synced before it is acknowledged; at most
``MAX_UNSYNCED_BYTES`` (or one larger entry) of inbound records, written in the last
``SYNC_INTERVAL_SECONDS`` plus one sync's duration, are not yet durable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from baton.errors import ConfigurationError

_MIB: Final = 1024 * 1024

#: Largest message the journal accepts, in bytes of the *unredacted* frame (checked before
#: redaction could shrink it, so a huge frame cannot slip under the bound by being redacted).
#: Protects memory (see the module docstring) and bounds one record line. A larger message is
#: refused with JournalEntryTooLarge and consumes no sequence number. Configurable down only.
MAX_ENTRY_BYTES: Final = 24 * _MIB

#: Size at which a segment file is closed and the next one started. Keeps each file small
#: enough to verify, copy and prune in one piece; a segment may exceed it by one record line only
#: if that record alone is larger (it never is with the default bounds).
MAX_SEGMENT_BYTES: Final = 64 * _MIB

#: Disk budget of one server's journal, all segments together. Whenever an append takes the
#: total over it, the oldest non-current segments are deleted until it is within it again (the
#: current segment alone never exceeds it). References into a deleted segment then read as
#: JournalEntryPruned.
MAX_TOTAL_BYTES: Final = 256 * _MIB

#: Free space the journal leaves on its file system when a running turn's own records outgrow
#: ``MAX_TOTAL_BYTES``: the records an unfinished run needs are kept past the budget (never
#: deleted, the turn never failed for its size) until the file system has less than this free;
#: then the journal fails with JOURNAL_RETENTION_EXHAUSTED. What bounds one turn's journal is
#: therefore the disk, minus this reserve, left for the store, the other journals and the rest
#: of the system.
MIN_FREE_DISK_BYTES: Final = 256 * _MIB

#: Inbound bytes written but not yet synced that make the background task sync at once rather
#: than at the end of the interval (the batch's byte bound).
SYNC_BATCH_BYTES: Final = 1 * _MIB

#: Longest an inbound record waits for its batch sync, counted from the first unsynced write
#: (the batch's time bound). A record is durable within this plus one sync's duration.
SYNC_INTERVAL_SECONDS: Final = 0.1

#: Unsynced inbound bytes at which an inbound append itself waits for the sync (backpressure
#: when the disk is slower than the agent). Bounds the data at risk on a crash.
MAX_UNSYNCED_BYTES: Final = 4 * _MIB

#: Bytes of record lines appended but not yet written to the segment file at which they are
#: written (one ``write`` for many records instead of one per record). Every sync, flush,
#: outbound append, rotation, close and in-process read writes them first, and the background
#: sync does within ``SYNC_INTERVAL_SECONDS``, so this bounds the memory held and how far
#: another process's view of the file may lag; what a crash can lose is still bounded by the
#: sync batch (the buffer is never larger than the unsynced bytes).
WRITE_BUFFER_BYTES: Final = 64 * 1024

#: Distinct simple ``session/update`` shapes (see
#: :func:`baton.redaction.frames.session_update_shape`) whose encoded record body one
#: server's journal remembers, oldest forgotten first. A shape holds at most
#: ``MAX_SHAPE_CHARS`` characters, so the cache holds at most a few MiB; a turn's deltas share
#: a handful of shapes (one per message or tool call).
MAX_CACHED_RECORD_BODIES: Final = 256

#: Records a diagnostic tail (``tail``: what ``baton recover`` and failure reports show) returns
#: at most.
MAX_TAIL_RECORDS: Final = 200

#: Bytes of journal file a diagnostic tail reads at most, so a tail of huge records costs a
#: bounded read; records beyond it are left out of the tail.
MAX_TAIL_BYTES: Final = 4 * _MIB

#: Fixed part of a record line around its ``raw`` text (ids, timestamps, metadata, hash).
RECORD_OVERHEAD_BYTES: Final = 4096


def max_record_bytes(max_entry_bytes: int) -> int:
    """The longest record line (without its newline) an entry bound allows.

    ``raw`` is compact JSON text embedded as a JSON string: escaping can at most double it
    (``"`` and ``\\`` become two bytes; compact JSON text has no control characters), plus the
    record's fixed fields. Redaction markers can lengthen a message slightly, so the encoded line
    is checked against this too.
    """
    return 2 * max_entry_bytes + RECORD_OVERHEAD_BYTES


#: The longest record line a reader accepts: a longer line is corruption, never a record.
MAX_RECORD_BYTES: Final = max_record_bytes(MAX_ENTRY_BYTES)


@dataclass(frozen=True, slots=True)
class JournalLimits:
    """The journal's bounds for one server; the defaults are the constants above.

    Every value may be lowered (tests use tiny segments to exercise rotation and pruning);
    ``max_entry_bytes`` may not exceed :data:`MAX_ENTRY_BYTES`, because readers reject longer
    record lines as corrupt.
    """

    max_entry_bytes: int = MAX_ENTRY_BYTES
    max_segment_bytes: int = MAX_SEGMENT_BYTES
    max_total_bytes: int = MAX_TOTAL_BYTES
    sync_batch_bytes: int = SYNC_BATCH_BYTES
    sync_interval_seconds: float = SYNC_INTERVAL_SECONDS
    max_unsynced_bytes: int = MAX_UNSYNCED_BYTES
    min_free_disk_bytes: int = MIN_FREE_DISK_BYTES

    def __post_init__(self) -> None:
        if not 0 < self.max_entry_bytes <= MAX_ENTRY_BYTES:
            raise ConfigurationError(
                f"journal max_entry_bytes must be in 1..{MAX_ENTRY_BYTES}, "
                f"not {self.max_entry_bytes}"
            )
        for name in ("max_segment_bytes", "max_total_bytes", "sync_batch_bytes"):
            if getattr(self, name) <= 0:
                raise ConfigurationError(f"journal {name} must be positive")
        if self.max_total_bytes < self.max_segment_bytes:
            raise ConfigurationError("journal max_total_bytes must be at least max_segment_bytes")
        if self.max_unsynced_bytes < self.sync_batch_bytes:
            raise ConfigurationError("journal max_unsynced_bytes must be at least sync_batch_bytes")
        if self.min_free_disk_bytes < 0:
            raise ConfigurationError("journal min_free_disk_bytes must be at least 0")
        if not self.sync_interval_seconds > 0:
            raise ConfigurationError("journal sync_interval_seconds must be positive")

    @property
    def max_record_bytes(self) -> int:
        """The longest record line these limits allow (see :func:`max_record_bytes`)."""
        return max_record_bytes(self.max_entry_bytes)


#: The default bounds.
DEFAULT_LIMITS: Final = JournalLimits()
