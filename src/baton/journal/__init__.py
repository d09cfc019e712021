"""The durable protocol journal: every ACP message, redacted, in per-server NDJSON segments.

One :class:`ServerJournal` per agent server instance appends records; a :class:`JournalTap`
plugs it into the connection so each frame is journaled at the boundary; :class:`Journal` owns
the directory and reads, verifies and tails. See docs/journal.md for the format, the bounds and
the durability guarantees.
"""

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
    SYNC_BATCH_BYTES,
    SYNC_INTERVAL_SECONDS,
    JournalLimits,
)
from baton.journal.reader import VerifyReport
from baton.journal.records import Direction, JournalRecord, RecordKind, RecordMetadata
from baton.journal.tap import JournalTap
from baton.journal.writer import ServerJournal
from baton.redaction import SecretValues

__all__ = [
    "DEFAULT_LIMITS",
    "JOURNALS_DIRNAME",
    "MAX_ENTRY_BYTES",
    "MAX_SEGMENT_BYTES",
    "MAX_TAIL_BYTES",
    "MAX_TAIL_RECORDS",
    "MAX_TOTAL_BYTES",
    "MAX_UNSYNCED_BYTES",
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
