"""The durable protocol journal: every ACP message, redacted, in per-server NDJSON segments.

One :class:`ServerJournal` per agent server instance appends records; a :class:`JournalTap`
plugs it into the connection so each frame is journaled at the boundary; :class:`Journal` owns
the directory and reads, verifies and tails. See docs/journal.md for the format, the bounds and
the durability guarantees.
"""

from typing import TYPE_CHECKING

from baton._lazy import lazy_exports

# Each name loads its module when first read: a reading verb that needs the journal's
# reader does not load the writer, the tap and asyncio with it (issue 34).
_EXPORTS: dict[str, str] = {
    "JournalRef": "baton.durable.refs",
    "validate_server_id": "baton.durable.refs",
    "JOURNALS_DIRNAME": "baton.journal.directory",
    "Journal": "baton.journal.directory",
    "DEFAULT_LIMITS": "baton.journal.limits",
    "MAX_ENTRY_BYTES": "baton.journal.limits",
    "MAX_SEGMENT_BYTES": "baton.journal.limits",
    "MAX_TAIL_BYTES": "baton.journal.limits",
    "MAX_TAIL_RECORDS": "baton.journal.limits",
    "MAX_TOTAL_BYTES": "baton.journal.limits",
    "MAX_UNSYNCED_BYTES": "baton.journal.limits",
    "MIN_FREE_DISK_BYTES": "baton.journal.limits",
    "SYNC_BATCH_BYTES": "baton.journal.limits",
    "SYNC_INTERVAL_SECONDS": "baton.journal.limits",
    "JournalLimits": "baton.journal.limits",
    "VerifyReport": "baton.journal.reader",
    "Direction": "baton.journal.records",
    "JournalRecord": "baton.journal.records",
    "RecordKind": "baton.journal.records",
    "RecordMetadata": "baton.journal.records",
    "JournalTap": "baton.journal.tap",
    "ServerJournal": "baton.journal.writer",
    "SecretValues": "baton.redaction",
}

if TYPE_CHECKING:
    from baton.durable.refs import JournalRef, validate_server_id
    from baton.journal.directory import JOURNALS_DIRNAME, Journal
    from baton.journal.limits import (
        DEFAULT_LIMITS,
        MAX_ENTRY_BYTES,
        MAX_SEGMENT_BYTES,
        MAX_TAIL_BYTES,
        MAX_TAIL_RECORDS,
        MAX_TOTAL_BYTES,
        MAX_UNSYNCED_BYTES,
        MIN_FREE_DISK_BYTES,
        SYNC_BATCH_BYTES,
        SYNC_INTERVAL_SECONDS,
        JournalLimits,
    )
    from baton.journal.reader import VerifyReport
    from baton.journal.records import Direction, JournalRecord, RecordKind, RecordMetadata
    from baton.journal.tap import JournalTap
    from baton.journal.writer import ServerJournal
    from baton.redaction import SecretValues

__getattr__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "DEFAULT_LIMITS",
    "JOURNALS_DIRNAME",
    "MAX_ENTRY_BYTES",
    "MAX_SEGMENT_BYTES",
    "MAX_TAIL_BYTES",
    "MAX_TAIL_RECORDS",
    "MAX_TOTAL_BYTES",
    "MAX_UNSYNCED_BYTES",
    "MIN_FREE_DISK_BYTES",
    "SYNC_BATCH_BYTES",
    "SYNC_INTERVAL_SECONDS",
    "Direction",
    "Journal",
    "JournalLimits",
    "JournalRecord",
    "JournalRef",
    "JournalTap",
    "RecordKind",
    "RecordMetadata",
    "SecretValues",
    "ServerJournal",
    "VerifyReport",
    "validate_server_id",
]
