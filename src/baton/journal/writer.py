"""One server instance's journal: redact, append, rotate, prune and sync.

Ordering. Appends for one server are serialized in call order: the part of an append that
assigns the sequence number, encodes the record and buffers its line never yields, so no other
append can interleave with it. Buffered lines are written with one plain ``write`` on the event
loop when :data:`~baton.journal.limits.WRITE_BUFFER_BYTES` are pending, and before every sync,
flush, outbound append, rotation, close and in-process read (:meth:`ServerJournal.write_pending`).
No fsync ever runs on the event loop: syncs run in a worker thread.

Encoding. A record line is a per-segment head (server, segment, sequence, direction, time) and
a body (raw text, metadata, hash; :class:`~baton.journal.records.RecordBody`). A simple
``session/update`` (see :func:`~baton.redaction.frames.session_update_shape`) has a
body decided by its shape alone, so the bodies of the last
:data:`~baton.journal.limits.MAX_CACHED_RECORD_BODIES` shapes are reused: every delta of a
streamed message is redacted and encoded once, and still gets its own record, sequence number
and timestamp.

Durability. :meth:`ServerJournal.append` of an *outbound* message returns only after the record
is written and synced (the connection writes to the agent after that). *Inbound* records are
written and synced in batches: a background task syncs within
:data:`~baton.journal.limits.SYNC_INTERVAL_SECONDS` of the first unsynced append, and the
append that brings :data:`~baton.journal.limits.SYNC_BATCH_BYTES` pending starts a sync at once
(without waiting for it); past :data:`~baton.journal.limits.MAX_UNSYNCED_BYTES` an inbound
append waits for the sync itself. :meth:`ServerJournal.flush` syncs everything appended so far.
Syncs are group commits: one sync covers every record appended before it started, and
concurrent callers share it. A failed write or sync is sticky: every later append, flush and
sync raises :class:`~baton.errors.JournalSyncFailed` (a failed write of buffered inbound
records surfaces at the write, which may be a later append, a flush or a sync).

A new segment's directory entry is synced before any record in it counts as synced; a retired
segment is synced before its descriptor is closed.

Crash safety. :meth:`ServerJournal.open` repairs the current segment
(:mod:`baton.journal.repair`): a partial last line (a write cut short by a crash) is truncated
and the truncation synced; the sequence continues from the last complete record, in that
segment or the one before it. A complete last line that fails validation is corruption, not a
torn write, and refuses to open.

Layout. :class:`ServerJournal` is the append path (the hot one), opening and closing; it
extends :class:`~baton.journal.commit.GroupCommit` (syncing), which extends
:class:`~baton.journal.segments.SegmentFiles` (writing, rotating and pruning segment files);
:mod:`baton.journal.repair` is crash repair on open.

Cancellation. Cancelling an append after its record was written does not unwrite it, and the
sync it started still completes; the record keeps its sequence number.

Threads. A ServerJournal belongs to the event loop that opened it; call it from that loop only.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable
from datetime import UTC, datetime
from operator import attrgetter
from pathlib import Path
from typing import Any, Final

import orjson

from baton.durable import files
from baton.durable.refs import (
    REF_SLOT_SETTERS,
    JournalRef,
    make_ref,
    validate_server_id,
)
from baton.errors import (
    JournalEntryTooLarge,
    JournalSyncFailed,
    UsageError,
)
from baton.journal.commit import GroupCommit
from baton.journal.limits import (
    DEFAULT_LIMITS,
    MAX_CACHED_RECORD_BODIES,
    WRITE_BUFFER_BYTES,
    JournalLimits,
)
from baton.journal.records import (
    MAX_METADATA_TEXT_CHARS,
    Direction,
    InboundRefs,
    PendingRecords,
    RecordBody,
    RecordMetadata,
    UtcStamps,
    metadata_for,
    micros_since_epoch,
)
from baton.journal.repair import Recovered, recover
from baton.journal.segments import PinnedFloor
from baton.redaction import MALFORMED_FRAME_MARKER, SecretValues, redact_frame_message
from baton.redaction.frames import (
    MAX_SHAPE_CHARS,
    session_update_shape,
    shape_chars,
    values_by_shape,
)

Clock = Callable[[], datetime]

_new_ref = object.__new__
_TAIL: Final = attrgetter("tail")

#: Bytes :meth:`ServerJournal.append_inbound_nowait` adds to a line's known length when it
#: checks the unsynced bound: more than the sequence digits (at most 20) a line may still need.
_NOWAIT_SLACK_BYTES: Final = 32


def utc_now() -> datetime:
    """The default clock: the current time in UTC."""
    return datetime.now(UTC)


class ServerJournal(GroupCommit):
    """The append side of one server instance's journal. Open it with :meth:`open`.

    ``secrets`` are the exact sensitive values (the profile's environment values) that
    redaction removes from every record besides the credential shapes it always removes.
    """

    def __init__(
        self,
        directory: Path,
        server_id: str,
        dir_fd: int,
        recovered: Recovered,
        *,
        secrets: SecretValues | None,
        limits: JournalLimits,
        clock: Clock,
        on_close: Callable[[ServerJournal], None] | None,
        pinned_floor: PinnedFloor | None = None,
    ) -> None:
        """Use :meth:`open`, which recovers the files first."""
        self._directory = directory
        self._server = server_id
        self._dir_fd = dir_fd
        self._fd = recovered.fd
        self._segment = recovered.segment
        self._sizes = dict(recovered.sizes)
        # Byte accounting, all as positions in the stream of bytes appended since opening:
        # the current segment starts at ``_segment_base`` (its size is ``_appended`` minus
        # that), the file holds everything up to ``_written`` (the rest is in ``_pending``),
        # and syncs have covered everything up to ``_synced``. ``_retired_bytes`` is the size
        # of every other segment on disk.
        self._appended = 0
        self._segment_base = -recovered.segment_size
        self._written = 0
        self._synced = 0
        self._retired_bytes = sum(self._sizes.values()) - recovered.segment_size
        # The next record's sequence number is always _written_sequence + 1.
        self._written_sequence = recovered.next_sequence - 1
        self._synced_sequence = recovered.next_sequence - 1
        self._secrets = secrets
        self._limits = limits
        self._clock = clock
        self._stamps = UtcStamps()
        self._max_record_bytes = limits.max_record_bytes
        self._max_entry_bytes = limits.max_entry_bytes
        # (a line's length plus its newline may reach, not exceed, the segment bound)
        self._max_segment_bytes = limits.max_segment_bytes
        self._heads = self._heads_for(recovered.segment)
        self._inbound_fixed = self._heads["inbound"].fixed
        # Sequences below _digits_next have _digits digits (sequences only grow).
        self._digits = 0
        self._digits_next = 0
        # Record bodies of simple session/update shapes (see session_update_shape), oldest
        # first; at most MAX_CACHED_RECORD_BODIES.
        self._bodies: dict[tuple[object, ...], RecordBody] = {}
        # Inbound records appended but not yet written: (sequence, recordedAt in microseconds
        # since the epoch, body); their lines are encoded when they are written.
        # (a batch of consecutive records is one entry; see PendingRecords)
        self._pending: list[PendingRecords] = []
        # The appended position from which an inbound append must look at the bounds (write
        # the buffer, prune, start or wait for a sync); see _inbound_bounds.
        self._check_at = 0
        # Where the sync in flight will bring ``_synced`` (meaningful while one is).
        self._sync_target = 0
        self._on_close = on_close
        self._pinned_floor = pinned_floor
        # The last sequence of each retired segment, once known (from rotation, or read back
        # from the file when retention asks about a segment recovered from disk).
        self._last_sequences: dict[int, int] = {}
        self._kept_until = 0
        self._loop = asyncio.get_running_loop()
        self._retired: list[int] = []
        self._dir_dirty = False
        self._first_unsynced_at = 0.0
        self._dirty = asyncio.Event()
        self._armed = False  # mirrors _dirty.is_set() (checked on every inbound append)
        self._sync: asyncio.Future[None] | None = None
        # (JournalRetentionExhausted, a subclass, when retention could not make room.)
        self._failure: JournalSyncFailed | None = None
        self._closing = False
        self._closed = False
        #: Bytes of a partial last line truncated when this journal was opened (0 if none).
        self.repaired_bytes = recovered.repaired_bytes
        self._background = self._loop.create_task(
            self._sync_loop(), name=f"baton-journal-sync-{server_id}"
        )

    @classmethod
    async def open(
        cls,
        directory: Path,
        server_id: str,
        *,
        secrets: SecretValues | None = None,
        limits: JournalLimits = DEFAULT_LIMITS,
        clock: Clock = utc_now,
        on_close: Callable[[ServerJournal], None] | None = None,
        pinned_floor: PinnedFloor | None = None,
    ) -> ServerJournal:
        """Open (creating or repairing) the journal of ``server_id`` in ``directory``.

        ``pinned_floor`` tells retention which records must stay (see :meth:`_prune`).

        ``directory`` must already be a private directory (see :class:`baton.journal.Journal`).
        Raises :class:`~baton.errors.UnsafePath` for symlinked or foreign files and
        :class:`~baton.errors.JournalCorrupt` when the last complete record is invalid.
        """
        validate_server_id(server_id)
        dir_fd = files.open_dir(directory)
        try:
            recovered = await asyncio.to_thread(recover, dir_fd, directory, server_id)
        except OSError as exc:
            os.close(dir_fd)
            # A full disk or a read-only directory as a stable code, not a traceback.
            raise files.storage_error(
                exc, directory, f"opening the journal of {server_id}"
            ) from exc
        except BaseException:
            os.close(dir_fd)
            raise
        journal = cls(
            directory,
            server_id,
            dir_fd,
            recovered,
            secrets=secrets,
            limits=limits,
            clock=clock,
            on_close=on_close,
            pinned_floor=pinned_floor,
        )
        try:
            journal._prune()  # lowered limits may already be exceeded
        except JournalSyncFailed:
            journal._on_close = None
            await journal.close()
            raise
        return journal

    # --- state -----------------------------------------------------------------------------

    @property
    def server_id(self) -> str:
        """The server instance this journal belongs to."""
        return self._server

    @property
    def limits(self) -> JournalLimits:
        """The bounds this journal enforces."""
        return self._limits

    @property
    def last_sequence(self) -> int:
        """The sequence number of the last record appended (0 before the first); it may still be
        in the write buffer (see :meth:`write_pending`)."""
        return self._written_sequence

    @property
    def synced_sequence(self) -> int:
        """Every record up to this sequence number is durable."""
        return self._synced_sequence

    @property
    def segment(self) -> int:
        """The number of the segment being appended to."""
        return self._segment

    @property
    def closed(self) -> bool:
        """True once :meth:`close` began."""
        return self._closing

    @property
    def failure(self) -> JournalSyncFailed | None:
        """The sticky write or sync failure, if one happened."""
        return self._failure

    # --- appending -------------------------------------------------------------------------

    async def append(
        self,
        direction: Direction,
        message: dict[str, Any],
        *,
        input_bytes: int,
        violation: str | None = None,
    ) -> JournalRef:
        """Redact and append one JSON-RPC message; return its reference.

        ``input_bytes`` is the size of the frame as it crossed the boundary, before redaction:
        over the entry bound the message is refused with JournalEntryTooLarge and no sequence
        number is used. ``violation`` names the protocol violation the frame is, if any.
        Outbound records are synced before this returns; inbound ones within the batch bounds.
        """
        if self._failure is not None or self._closing:
            self._check_usable()
        if input_bytes > self._max_entry_bytes:
            raise JournalEntryTooLarge(self._max_entry_bytes, input_bytes)
        # A simple session/update's body depends only on its shape (the hot path: a hit).
        shape = session_update_shape(message) if violation is None else None
        body = self._bodies.get(shape) if shape is not None else None
        if body is None:
            body = self._body(message, violation, shape)
        ref, must_wait = self._record(direction, body)
        if must_wait:
            await self._sync_through(ref.sequence)
        return ref

    def append_inbound_nowait(
        self, message: dict[str, Any], *, input_bytes: int
    ) -> JournalRef | None:
        """:meth:`append` of an inbound message, without a coroutine, when nothing about it
        needs awaiting: the message is a simple session/update whose record body is cached
        and its record will not reach the unsynced bound. Returns its reference then; returns
        None, having recorded nothing, otherwise (also when the journal failed or is closing,
        or the entry is too large), and the caller awaits :meth:`append` instead. Raises what
        :meth:`append` raises for a failure while recording (a failed buffer write)."""
        if self._failure is not None or self._closing or input_bytes > self._max_entry_bytes:
            return None
        shape = session_update_shape(message)
        body = self._bodies.get(shape) if shape is not None else None
        if body is None:
            return None
        # Room for the line (with slack for a sequence or segment number that grows a digit)
        # below the unsynced bound, so the record cannot make its caller wait.
        room = self._inbound_fixed + len(body.tail) + _NOWAIT_SLACK_BYTES
        if self._appended + room - self._synced >= self._limits.max_unsynced_bytes:
            return None
        return self._record_inbound(body)

    def append_inbound_batch_nowait(
        self, messages: list[dict[str, Any]], largest_frame: int
    ) -> InboundRefs | None:
        """:meth:`append_inbound_nowait` of consecutive inbound messages read together: the
        longest leading run of them that are simple session/updates with cached bodies, all or
        nothing, when together they reach neither the unsynced bound nor the segment's end (nor
        a sequence number with one more digit). Returns their references then (one per message
        of that run, in order, made when asked for; fewer than ``messages`` when one has no
        cached body: the caller journals that one on its own, which caches its body, and may
        try the rest again); otherwise returns None having recorded nothing, and the caller
        journals them one by one. ``largest_frame`` is the size of the longest of their frames
        as read (an upper bound is fine: over the entry bound, nothing is recorded here).

        The records share one ``recordedAt`` (the messages arrived in one read). Raises what
        :meth:`append` raises for a failure while recording (a failed buffer write), after the
        records took their sequence numbers, like :meth:`append_inbound_nowait`."""
        if (
            self._failure is not None
            or self._closing
            or largest_frame > self._max_entry_bytes
            or not messages
        ):
            return None
        bodies = values_by_shape(messages, self._bodies.get, prefix=True)
        if not bodies:
            return None
        count = len(bodies)
        first = self._written_sequence + 1
        if not self._digits or first + count > self._digits_next:
            return None  # a digit more somewhere in the batch: one by one (once per power of 10)
        fixed = self._inbound_fixed + self._digits
        tail_lengths = list(map(len, map(_TAIL, bodies)))
        longest = fixed + max(tail_lengths)
        total = count * (fixed + 1) + sum(tail_lengths)
        appended = self._appended
        offset = appended - self._segment_base
        if (
            longest > self._max_record_bytes
            or offset + total >= self._max_segment_bytes
            or appended + total + _NOWAIT_SLACK_BYTES - self._synced
            >= self._limits.max_unsynced_bytes
        ):
            return None
        micros = time.time_ns() // 1000 if self._clock is utc_now else self._clock_micros()
        self._pending.append((first, micros, bodies))
        appended = self._appended = appended + total
        self._written_sequence = first + count - 1
        if not self._armed:
            self._arm_timer()
        if appended >= self._check_at:
            self._inbound_bounds()
        return InboundRefs(self._server, self._segment, first, offset, fixed, bodies)

    async def append_skipped(self, direction: Direction, reason: str, length: int) -> JournalRef:
        """Append the marker of a skipped (unparseable) frame: Baton's ``reason`` and the
        frame's ``length``, never its bytes."""
        self._check_usable()
        raw = orjson.dumps(
            {
                "marker": MALFORMED_FRAME_MARKER,
                "reason": reason[:MAX_METADATA_TEXT_CHARS],
                "length": length,
            }
        )
        ref, must_wait = self._record(direction, RecordBody.of(raw, RecordMetadata("skipped")))
        if must_wait:
            await self._sync_through(ref.sequence)
        return ref

    def _body(
        self, message: dict[str, Any], violation: str | None, shape: tuple[object, ...] | None
    ) -> RecordBody:
        """The redacted, encoded body of ``message``'s record, kept under ``shape`` (the
        message's :func:`session_update_shape`, if it has one) for the next message of that
        shape."""
        redacted = redact_frame_message(message, self._secrets)
        try:
            raw = orjson.dumps(redacted)
        except orjson.JSONEncodeError as exc:
            raise UsageError(f"a journaled message must be JSON: {exc}") from exc
        body = RecordBody.of(raw, metadata_for(redacted, violation))
        if shape is not None and shape_chars(shape) <= MAX_SHAPE_CHARS:
            if len(self._bodies) >= MAX_CACHED_RECORD_BODIES:
                del self._bodies[next(iter(self._bodies))]
            self._bodies[shape] = body
        return body

    def _record(self, direction: Direction, body: RecordBody) -> tuple[JournalRef, bool]:
        """Give ``body`` its sequence number and buffer (inbound) or write (outbound) its line;
        return its reference and whether the caller must wait for its sync.

        Never yields, so appends are serialized in call order without a lock: each one's
        sequence number, offset and line are settled before the next can start.
        """
        # Not _check_usable: an append that passed it before close() began still records
        # (close syncs it); only a failure that happened meanwhile stops it.
        if self._failure is not None:
            self._raise_if_failed()
        if direction == "outbound":
            return self._record_outbound(body)
        ref = self._record_inbound(body)
        return ref, self._appended - self._synced >= self._limits.max_unsynced_bytes

    def _record_inbound(self, body: RecordBody) -> JournalRef:
        """The inbound part of :meth:`_record` (once per frame of a flood: locals, no helper
        calls); the bounds it reaches are handled by :meth:`_inbound_bounds`."""
        sequence = self._written_sequence + 1
        micros = time.time_ns() // 1000 if self._clock is utc_now else self._clock_micros()
        if sequence >= self._digits_next:
            self._digits = len(str(sequence))
            self._digits_next = 10**self._digits
        length = self._inbound_fixed + self._digits + len(body.tail)
        if length > self._max_record_bytes:
            raise JournalEntryTooLarge(self._max_record_bytes, length)
        appended = self._appended
        offset = appended - self._segment_base
        if offset > 0 and offset + length >= self._max_segment_bytes:
            self._rotate()
            offset = 0
            length = self._inbound_fixed + self._digits + len(body.tail)  # (segment digits)
        self._pending.append((sequence, micros, body))
        appended = self._appended = appended + length + 1
        self._written_sequence = sequence
        ref = _new_ref(JournalRef)
        set_server, set_segment, set_sequence, set_offset, set_length, set_sha = REF_SLOT_SETTERS
        set_server(ref, self._server)
        set_segment(ref, self._segment)
        set_sequence(ref, sequence)
        set_offset(ref, offset)
        set_length(ref, length)
        set_sha(ref, body.digest)
        if not self._armed:
            self._arm_timer()
        if appended >= self._check_at:
            self._inbound_bounds()
        return ref

    def _record_outbound(self, body: RecordBody) -> tuple[JournalRef, bool]:
        # Written at once (the caller waits for its sync anyway), after what was buffered
        # before it; a failed write then uses no sequence number, as for an oversized one.
        self._write_buffer()
        sequence = self._written_sequence + 1
        head = self._heads["outbound"]
        stamp = self._stamps.json(self._now_micros())
        line = head.line(sequence, stamp, body)
        if len(line) > self._max_record_bytes:
            raise JournalEntryTooLarge(self._max_record_bytes, len(line))
        offset = self._appended - self._segment_base
        if offset > 0 and offset + len(line) + 1 > self._limits.max_segment_bytes:
            self._rotate()
            offset = 0
            line = self._heads["outbound"].line(sequence, stamp, body)
        self._write_at(offset, [line, b"\n"])
        self._appended += len(line) + 1
        self._written = self._appended
        self._written_sequence = sequence
        if self.total_bytes > self._limits.max_total_bytes:
            self._prune()
        return make_ref(self._server, self._segment, sequence, offset, len(line), body.digest), True

    def _now_micros(self) -> int:
        """The record time, in microseconds since the epoch (UTC)."""
        if self._clock is utc_now:
            return time.time_ns() // 1000
        return self._clock_micros()

    def _clock_micros(self) -> int:
        return micros_since_epoch(self._clock())

    def _arm_timer(self) -> None:
        # The background task syncs within the interval of the first unsynced append.
        self._armed = True
        self._first_unsynced_at = self._loop.time()
        self._dirty.set()

    def _inbound_bounds(self) -> None:
        """The bounds an inbound append may have reached: write the buffer past
        WRITE_BUFFER_BYTES, prune past the disk budget, start a sync past the batch size (without
        waiting for it: in a flood the loop may not yield to the background task until much
        more is pending). Also works out from which appended position it is needed next (the
        unsynced bound, where the caller must wait, is checked by :meth:`_record`)."""
        limits = self._limits
        if self._appended - self._written >= WRITE_BUFFER_BYTES:
            self._write_buffer()
        if self.total_bytes > limits.max_total_bytes:
            self._prune()
        if self._appended - self._synced >= limits.sync_batch_bytes:
            self._kick_sync()
        next_checks = [
            self._written + WRITE_BUFFER_BYTES,
            # the first position at which the total is over the budget (or, while a running
            # turn's records are kept past it, the next position to look again)
            max(
                limits.max_total_bytes - self._retired_bytes + self._segment_base + 1,
                self._kept_until,
            ),
        ]
        if self._sync is None:
            next_checks.append(self._synced + limits.sync_batch_bytes)
        # (A sync in flight resets _check_at when it completes, so the next batch starts then.)
        self._check_at = min(next_checks)

    def write_pending(self) -> None:
        """Write the records appended so far to the segment file (without syncing them), so
        every reader sees them. In-process readers of :class:`baton.journal.Journal` call this
        first; other processes see records once they are written (within
        :data:`~baton.journal.limits.WRITE_BUFFER_BYTES` or one sync interval)."""
        self._raise_if_failed()
        self._write_buffer()

    def _check_usable(self) -> None:
        self._raise_if_failed()
        if self._closing:
            raise UsageError(f"the journal of {self._server} is closed")

    # --- closing ---------------------------------------------------------------------------

    async def close(self) -> None:
        """Sync what was written, stop the background task and release the files.

        Idempotent. Appends that began before it are written and synced too (an append records
        its line without yielding); later ones raise UsageError.
        Raises the sticky failure if the final sync could not happen (files are still released).
        """
        if self._closing:
            return
        self._closing = True
        self._background.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._background
        try:
            if self._failure is None:
                await self._sync_through(self._written_sequence)
            elif self._synced_sequence < self._written_sequence:
                self._raise_if_failed()
        finally:
            sync = self._sync
            if sync is not None and not sync.done():
                with contextlib.suppress(OSError):
                    await asyncio.shield(sync)
            for fd in [*self._retired, self._fd, self._dir_fd]:
                with contextlib.suppress(OSError):
                    os.close(fd)
            self._retired.clear()
            self._closed = True
            if self._on_close is not None:
                self._on_close(self)
