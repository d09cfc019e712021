"""The connection's durability tap, backed by a server's journal.

Plug a :class:`JournalTap` into :class:`baton.connection.Connection` (``tap=``): every frame
is then journaled at the boundary, inbound before it is dispatched and outbound before it is
written (and, outbound, synced first). The reference it returns reaches the handlers.
"""

from __future__ import annotations

from baton.connection.tap import TapFrame
from baton.errors import InternalError
from baton.journal.records import JournalRef
from baton.journal.writer import ServerJournal


class JournalTap:
    """A :class:`baton.connection.tap.Tap` that appends each frame to ``journal``.

    Skipped (unparseable) frames are journaled as the malformed-frame marker with only their
    length and Baton's reason. A frame over the entry bound raises JournalEntryTooLarge, which
    makes the connection close (no unrecorded frame gets through).
    """

    def __init__(self, journal: ServerJournal) -> None:
        self.journal = journal

    async def record(self, frame: TapFrame) -> JournalRef:
        """Journal ``frame``; return its reference."""
        if frame.skipped is not None:
            return await self.journal.append_skipped(
                frame.direction, frame.skipped.reason, frame.skipped.length
            )
        if frame.message is None:
            raise InternalError("a tap frame carries neither a message nor a skip marker")
        size = len(frame.raw) - (1 if frame.raw.endswith(b"\n") else 0)
        violation = frame.violation.kind if frame.violation is not None else None
        return await self.journal.append(
            frame.direction, frame.message, input_bytes=size, violation=violation
        )
