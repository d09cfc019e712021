"""The connection's durability tap, backed by a server's journal.

Plug a :class:`JournalTap` into :class:`baton.connection.Connection` (``tap=``): every frame
is then journaled at the boundary, inbound before it is dispatched and outbound before it is
written (and, outbound, synced first). The reference it returns reaches the handlers.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any

from baton.connection.tap import TapFrame
from baton.errors import InternalError
from baton.journal.records import InboundRefs, JournalRef
from baton.journal.writer import ServerJournal
from baton.wire.jsonrpc import Message


class JournalTap:
    """A :class:`baton.connection.tap.Tap` that appends each frame to ``journal``.

    Skipped (unparseable) frames are journaled as the malformed-frame marker with only their
    length and Baton's reason. A frame over the entry bound raises JournalEntryTooLarge, which
    makes the connection close (no unrecorded frame gets through).
    """

    def __init__(self, journal: ServerJournal) -> None:
        self.journal = journal

    def record_nowait(self, raw: bytes, message: Message) -> JournalRef | None:
        """Journal a valid inbound message without a coroutine when the journal can (see
        :meth:`ServerJournal.append_inbound_nowait`): a notification outside a batch, or one a
        batch could not take. None means nothing was recorded; the connection then awaits
        :meth:`record`."""
        return self.journal.append_inbound_nowait(
            message, input_bytes=len(raw) - 1 if raw.endswith(b"\n") else len(raw)
        )

    def record_batch_nowait(self, raws: list[bytes], messages: list[Message]) -> InboundRefs | None:
        """Journal the longest leading run of consecutive valid inbound messages
        (``messages[i]`` parsed from ``raws[i]``) the journal can take without a coroutine
        (see :meth:`ServerJournal.append_inbound_batch_nowait`); return their references.
        None means nothing was recorded; the connection then journals them one by one."""
        return self.journal.append_inbound_batch_nowait(messages, max(map(len, raws), default=0))

    def record(self, frame: TapFrame) -> Coroutine[Any, Any, JournalRef]:
        """Journal ``frame``; the awaitable returns its reference.

        A plain method returning the journal's own coroutine (not a coroutine wrapping it):
        the connection awaits one fewer coroutine per frame.
        """
        if frame.skipped is not None:
            return self.journal.append_skipped(
                frame.direction, frame.skipped.reason, frame.skipped.length
            )
        if frame.message is None:
            raise InternalError("a tap frame carries neither a message nor a skip marker")
        raw = frame.raw
        size = len(raw) - 1 if raw.endswith(b"\n") else len(raw)
        violation = frame.violation.kind if frame.violation is not None else None
        return self.journal.append(
            frame.direction, frame.message, input_bytes=size, violation=violation
        )
