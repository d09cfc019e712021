"""The connection's durability tap, backed by a server's journal.

Plug a :class:`JournalTap` into :class:`baton.connection.Connection` (``tap=``): every frame
is then journaled at the boundary, inbound before it is acted on and outbound before it is
written (and, outbound, synced first). The reference it returns reaches the handlers.

The tap picks its path per call. A run of streamed notifications goes to
:meth:`ServerJournal.append_inbound_batch_nowait` (one synchronous append for the run, lazy
references); what that cannot take (a body shape not cached yet, a batch that would cross the
unsynced bound or the segment's end, a sequence number gaining a digit) is journaled one by one,
synchronously when :meth:`ServerJournal.append_inbound_nowait` can, awaited otherwise, and the
rest of the run is offered as a batch again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from baton.connection.tap import Mark
from baton.errors import InternalError
from baton.journal.records import JournalRef
from baton.journal.writer import ServerJournal
from baton.wire.jsonrpc import Message, Skipped


def _size(raw: bytes) -> int:
    """The size of a frame as it crossed the boundary (without its newline)."""
    return len(raw) - 1 if raw.endswith(b"\n") else len(raw)


class JournalTap:
    """A :class:`baton.connection.tap.Tap` that appends each frame to ``journal``.

    Skipped (unparseable) frames are journaled as the malformed-frame marker with only their
    length and Baton's reason. A frame over the entry bound raises JournalEntryTooLarge, which
    makes the connection close (no unrecorded frame gets through). ``on_skipped`` is called
    after a skipped line was journaled (a strict lane quarantines on it).
    """

    def __init__(
        self, journal: ServerJournal, *, on_skipped: Callable[[Skipped], None] | None = None
    ) -> None:
        self.journal = journal
        self._on_skipped = on_skipped

    async def record_inbound(
        self, raws: Sequence[bytes], messages: Sequence[Message | None], mark: Mark = None
    ) -> Sequence[JournalRef]:
        """Journal inbound frames read together; return their references in order."""
        journal = self.journal
        if mark is not None:
            if isinstance(mark, Skipped):
                ref = await journal.append_skipped("inbound", mark.reason, mark.length)
                if self._on_skipped is not None:
                    self._on_skipped(mark)
                return (ref,)
            message = messages[0]
            if message is None:
                raise InternalError("a violation frame carries no message")
            ref = await journal.append(
                "inbound", message, input_bytes=_size(raws[0]), violation=mark.kind
            )
            return (ref,)
        batch: list[Message] = messages  # type: ignore[assignment]
        if len(batch) == 1:
            return (await self._one(raws[0], batch[0]),)
        # The hot path: the whole run in one synchronous append.
        refs = journal.append_inbound_batch_nowait(batch, max(map(len, raws)))
        if refs is not None and len(refs) == len(batch):
            return refs
        gathered: list[JournalRef] = []
        start = 0
        while start < len(batch):
            if refs is None:
                # Declined as a batch: one by one.
                for index in range(start, len(batch)):
                    gathered.append(await self._one(raws[index], batch[index]))
                break
            gathered.extend(refs)
            start += len(refs)
            if start >= len(batch):
                break
            # The frame the batch could not take goes on its own (which caches its body), then
            # the rest is offered as a batch again.
            gathered.append(await self._one(raws[start], batch[start]))
            start += 1
            if start < len(batch):
                refs = journal.append_inbound_batch_nowait(
                    batch[start:], max(map(len, raws[start:]))
                )
        return gathered

    async def _one(self, raw: bytes, message: Message) -> JournalRef:
        size = _size(raw)
        ref = self.journal.append_inbound_nowait(message, input_bytes=size)
        if ref is None:
            ref = await self.journal.append("inbound", message, input_bytes=size)
        return ref

    async def record_outbound(self, raw: bytes, message: Message) -> JournalRef:
        """Journal an outbound frame, synced before this returns."""
        return await self.journal.append("outbound", message, input_bytes=_size(raw))
