"""The per-run stream buffer: ordered output, bounded memory, one item write per part.

Every text delta stays an individual journal entry (the journal sees frames at the boundary);
this buffer is the *normalized* projection, which must not rewrite a whole item per token.

- Output (what a watcher sees: the CLI, the event iterator) is published in groups at a 75 ms or
  64 KiB boundary; consecutive deltas of one part coalesce into one group, and 256 pending groups
  (a stream that alternates text and thought on every delta) force a flush.
- Output keeps the order of the deltas: only consecutive deltas of one part merge. When
  another part's output (or another kind of event) follows, what the part's redactor still
  holds is resolved and published first; the part goes on, and its item still holds all of
  its text. The ``coalescedEvents`` of a part's output groups add up to its item's count
  (deltas whose text was held are counted by the group that publishes it).
- Item records (the store's durable copy) are materialized once per part: at the prompt's end,
  on runtime loss, on shutdown, or when a memory bound needs room.
- A run keeps at most 8 live text parts, and the whole runtime at most 4 MiB of buffered text
  (normalized text plus redaction carry); past either bound the oldest part is materialized to
  make room. Its journal evidence stays where it was.
- Text is kept in segments of at most 8 KiB, so tiny or empty deltas cannot build an unbounded
  list of fragments.
- Exact credentials are redacted across delta boundaries (a :class:`StreamRedactor` per part);
  an unresolved prefix at the end becomes a marker in the part's item, never provider text.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any, Final

from baton.redaction import RedactedText, SecretValues, StreamRedactor

#: Output is published at least this often while deltas arrive (seconds).
STREAM_OUTPUT_FLUSH_SECONDS: Final = 0.075
#: ... or as soon as this many bytes of output are pending.
STREAM_OUTPUT_FLUSH_BYTES: Final = 64 * 1024
#: Pending output groups that force a flush (a stream alternating parts on every delta).
MAX_BUFFERED_OUTPUT_GROUPS: Final = 256
#: Largest text segment a part keeps; small deltas are joined up to this size.
STREAM_TEXT_SEGMENT_BYTES: Final = 8 * 1024
#: Live text parts per run before the oldest is materialized.
MAX_LIVE_PARTS_PER_RUN: Final = 8
#: Buffered text across the whole runtime before the oldest part anywhere is materialized.
MAX_BUFFERED_STREAM_BYTES: Final = 4 * 1024 * 1024

#: Part keys one buffer remembers (a key is only formatted again past this).
MAX_CACHED_PART_KEYS: Final = 1024

#: session/update kinds that carry streamed text, and the item kind each becomes.
TEXT_UPDATES: Final = {
    "agent_message_chunk": "text",
    "agent_thought_chunk": "thought",
    "user_message_chunk": "user_text",
}


@dataclass(slots=True)
class Item:
    """A materialized item: what the run store keeps of a part of the turn."""

    kind: str
    content: dict[str, Any]
    coalesced_events: int = 1


@dataclass(slots=True)
class OutputGroup:
    """A run of consecutive output of one part, published as one event."""

    kind: str
    part: str
    text: str
    events: int


#: What a part's snapshot is before it published anything.
_NO_SNAPSHOT: Final = object()


class TextPart:
    """One streamed text part (a message or a thought), kept in bounded segments."""

    __slots__ = (
        "_current",
        "_current_len",
        "_joinable",
        "_secrets",
        "_snapshot",
        "events",
        "key",
        "kind",
        "redactor",
        "segments",
        "size",
        "unpublished",
    )

    def __init__(self, key: str, kind: str, secrets: SecretValues | None) -> None:
        self.key = key
        self.kind = kind
        self.segments: list[str] = []
        self._current: list[str] = []
        self._current_len = 0
        self.size = 0
        self.events = 0
        # Deltas whose text the redactor still holds: counted by the next event that
        # publishes this part's text, so a part's events add up to its item's count.
        self.unpublished = 0
        self.redactor = StreamRedactor(secrets)
        # Whether the whole text is the redactor's output of one uninterrupted stream under
        # one snapshot of the secrets: then it is marked redacted and no sink scans it again.
        self._secrets = secrets
        self._snapshot: object = _NO_SNAPSHOT
        self._joinable = True

    def feed(self, raw: str) -> str:
        """Redact and keep a batch of raw deltas (in order); return the text safe to publish.

        Feeding deltas in batches is equivalent to feeding them one by one (the redactor's
        output is the redaction of the whole text either way) and costs one scan per batch.
        """
        safe = self.redactor.feed(raw)
        self._store(safe)
        return safe

    def _store(self, text: str) -> None:
        if not text:
            return
        if type(text) is not RedactedText:
            self._joinable = False
        elif self._snapshot is _NO_SNAPSHOT:
            self._snapshot = text.snapshot
        elif text.snapshot is not self._snapshot:
            self._joinable = False  # the secrets grew during the part: the sinks scan it
        size = len(text)
        self.size += size
        if self._current_len + size < STREAM_TEXT_SEGMENT_BYTES:
            self._current.append(text)  # the common delta: fits in the open segment
            self._current_len += size
            return
        while text:
            room = STREAM_TEXT_SEGMENT_BYTES - self._current_len
            piece, text = text[:room], text[room:]
            self._current.append(piece)
            self._current_len += len(piece)
            if self._current_len >= STREAM_TEXT_SEGMENT_BYTES:
                self.segments.append("".join(self._current))
                self._current = []
                self._current_len = 0

    def cut(self) -> str:
        """Release what the redactor holds, redacted, because another part's output follows
        (only consecutive output merges): the held end is resolved now, as at the end of a
        stream (an unresolved credential prefix becomes a marker), and the part goes on."""
        tail = self.redactor.finish()
        self._store(tail)
        # A new stream follows: a credential split across the cut is redacted in neither
        # stream's output alone, so the whole text is left for the sinks to scan.
        self._joinable = False
        return tail

    def finish(self) -> tuple[str, str]:
        """End the part: return (the last safe text to publish, the whole text)."""
        tail = self.redactor.finish()
        self._store(tail)
        if self._current:
            self.segments.append("".join(self._current))
            self._current = []
            self._current_len = 0
        whole = "".join(self.segments)
        if self._joinable and whole:
            # One stream's outputs in order: their concatenation is the redaction of the
            # whole stream (docs/redaction.md), so the item is stored without another scan.
            whole = RedactedText.of(whole, self._secrets, self._snapshot)
        return tail, whole


class StreamMemory:
    """Runtime-wide accounting of buffered stream text, shared by every run's buffer."""

    def __init__(self, limit: int = MAX_BUFFERED_STREAM_BYTES) -> None:
        self.limit = limit
        self.used = 0
        # Oldest first: (buffer, part key) of every live part in the runtime.
        self._parts: OrderedDict[tuple[int, str], RunBuffer] = OrderedDict()

    def register(self, buffer: RunBuffer, key: str) -> None:
        self._parts[(id(buffer), key)] = buffer

    def forget(self, buffer: RunBuffer, key: str, size: int) -> None:
        self._parts.pop((id(buffer), key), None)
        self.used -= size

    def make_room(self) -> None:
        """Materialize the oldest live parts until the runtime is under its bound."""
        while self.used > self.limit and self._parts:
            (_, key), buffer = next(iter(self._parts.items()))
            buffer.materialize_part(key, evicted=True)


@dataclass(slots=True)
class BufferStats:
    """What the buffer did, for tests and the run record."""

    deltas: int = 0
    output_flushes: int = 0
    item_writes: int = 0
    evictions: int = 0


ItemSink = Callable[[list[Item]], None]
OutputSink = Callable[[list[OutputGroup]], None]


@dataclass
class RunBuffer:
    """The ordered buffer of one run. Not thread-safe; driven from the event loop.

    ``items`` receives materialized items (the caller writes them to the store); ``output``
    receives published groups. ``now`` is the caller's monotonic clock.
    """

    run_id: str
    items: ItemSink
    output: OutputSink
    now: Callable[[], float]
    memory: StreamMemory
    secrets: SecretValues | None = None
    stats: BufferStats = field(default_factory=BufferStats)

    def __post_init__(self) -> None:
        self._parts: OrderedDict[str, TextPart] = OrderedDict()
        self._pending: list[OutputGroup] = []
        # Text appended to the last pending group since it was opened, joined when it is
        # published (appending to its ``text`` would copy the whole group on every delta).
        self._tail: list[str] = []
        self._pending_bytes = 0
        self._last_flush = self.now()
        # Part keys by (kind, messageId): built once, not formatted again on every delta.
        self._keys: dict[tuple[str, str | None], str] = {}
        # The part whose output was published last: its held text is released before another
        # part's output, so output keeps the order the deltas came in.
        self._last_published: str | None = None

    # --- text ------------------------------------------------------------------------------

    def add_text(self, update_kind: str, text: str, message_id: str | None = None) -> None:
        """Append one text delta of ``update_kind`` (a key of :data:`TEXT_UPDATES`)."""
        kind = TEXT_UPDATES[update_kind]
        key = self._keys.get((kind, message_id))
        if key is None:
            key = f"{kind}:{message_id}" if message_id else f"{self.run_id}:{kind}"
            if len(self._keys) < MAX_CACHED_PART_KEYS:
                self._keys[(kind, message_id)] = key
        part = self._parts.get(key)
        if part is None:
            part = self._open_part(key, kind)
        part.events += 1
        memory = self.memory
        # Raw text waits in its output group; it is redacted when the group is published.
        memory.used += len(text)
        self.stats.deltas += 1
        self._publish(kind, key, text)
        if memory.used > memory.limit:
            memory.make_room()

    def add_texts(self, update_kind: str, texts: list[str], message_id: str | None = None) -> None:
        """:meth:`add_text` of each of ``texts`` in order, with the same bounds and boundaries,
        in bulk: the deltas between two boundaries are appended in one step (a read of a
        streamed turn holds about a thousand of them), and the delta that reaches a boundary
        (the output flush, the memory bound) goes through :meth:`add_text` itself."""
        ends = list(accumulate(map(len, texts)))
        index = 0
        count = len(texts)
        while index < count:
            index += self._append_run(update_kind, message_id, texts, ends, index)
            if index < count:
                self.add_text(update_kind, texts[index], message_id)
                index += 1

    def _append_run(
        self,
        update_kind: str,
        message_id: str | None,
        texts: list[str],
        ends: list[int],
        start: int,
    ) -> int:
        """Append ``texts[start:]`` up to (not including) the first delta that would reach a
        boundary, when the part and its pending output group are open and the time boundary
        has not passed; return how many were appended. ``ends`` are the running totals of
        the texts' lengths."""
        key = self._keys.get((TEXT_UPDATES[update_kind], message_id))
        pending = self._pending
        if key is None or not pending or pending[-1].part != key:
            return 0
        part = self._parts.get(key)
        if part is None or self.now() - self._last_flush >= STREAM_OUTPUT_FLUSH_SECONDS:
            return 0
        memory = self.memory
        base = ends[start - 1] if start else 0
        stop = min(
            # the first delta that brings the pending output to the flush bound...
            bisect_left(ends, base + STREAM_OUTPUT_FLUSH_BYTES - self._pending_bytes, start),
            # ... or the runtime's stream memory over its limit
            bisect_right(ends, base + memory.limit - memory.used, start),
        )
        taken = stop - start
        if taken <= 0:
            return 0
        size = ends[stop - 1] - base
        part.events += taken
        pending[-1].events += taken
        self._tail.extend(texts[start:stop])
        self._pending_bytes += size
        memory.used += size
        self.stats.deltas += taken
        return taken

    def _open_part(self, key: str, kind: str) -> TextPart:
        # A new part after a different one ends nothing: messageIds may interleave. Parts end at
        # the prompt's end or when a bound needs room.
        while len(self._parts) >= MAX_LIVE_PARTS_PER_RUN:
            self.materialize_part(next(iter(self._parts)), evicted=True)
        part = TextPart(key, kind, self.secrets)
        self._parts[key] = part
        self.memory.register(self, key)
        return part

    def _publish(self, kind: str, key: str, text: str) -> None:
        pending = self._pending
        if pending and pending[-1].part == key:
            pending[-1].events += 1
            if text:
                self._tail.append(text)
        else:
            self._seal_tail()
            pending.append(OutputGroup(kind, key, text, 1))
        self._pending_bytes += len(text)
        if (
            self._pending_bytes >= STREAM_OUTPUT_FLUSH_BYTES
            or len(self._pending) >= MAX_BUFFERED_OUTPUT_GROUPS
            or self.now() - self._last_flush >= STREAM_OUTPUT_FLUSH_SECONDS
        ):
            self.flush_output()

    # --- other events ----------------------------------------------------------------------

    def add_event(self, kind: str, text: str = "") -> None:
        """Publish a non-text event in order with the text around it (flushes pending text)."""
        self.flush_output(release=True)
        if text:
            self.output([OutputGroup(kind, kind, text, 1)])

    # --- flushing and materialization ------------------------------------------------------

    def flush_due(self) -> None:
        """Flush output if the time boundary passed (call from a periodic ticker)."""
        if self._pending and self.now() - self._last_flush >= STREAM_OUTPUT_FLUSH_SECONDS:
            self.flush_output()

    def _seal_tail(self) -> None:
        """Join the text appended to the last pending group into its ``text``."""
        if self._tail:
            last = self._pending[-1]
            last.text = last.text + "".join(self._tail)
            self._tail = []

    def flush_output(self, *, release: bool = False) -> None:
        """Redact and publish every pending output group now, in order. ``release``: another
        kind of event follows, so the text the redactor holds is resolved and published too
        (it would otherwise come after that event)."""
        self._last_flush = self.now()
        if not self._pending:
            if release:
                held: list[OutputGroup] = []
                self._release_last(held)
                if held:
                    self.stats.output_flushes += 1
                    self.output(held)
            return
        self._seal_tail()
        pending = self._pending
        self._pending = []
        self._pending_bytes = 0
        memory = self.memory
        groups: list[OutputGroup] = []
        for group in pending:
            raw = group.text
            part = self._parts.get(group.part)
            if group.part != self._last_published:
                self._release_last(groups)
                self._last_published = group.part
            if part is not None:
                # The raw text leaves the count; what was kept and what is held back enter it.
                before = part.size + part.redactor.held
                group.text = part.feed(raw)
                memory.used += part.size + part.redactor.held - before - len(raw)
                if group.text:
                    group.events += part.unpublished
                    part.unpublished = 0
                else:
                    part.unpublished += group.events
            # (a group of a part already materialized carries the part's resolved tail)
            if group.text:
                groups.append(group)
        if release:
            self._release_last(groups)
        if groups:
            self.stats.output_flushes += 1
            self.output(groups)

    def _release_last(self, groups: list[OutputGroup]) -> None:
        """Append to ``groups`` what the last published part still holds (another part's output
        comes next)."""
        key = self._last_published
        part = self._parts.get(key) if key is not None else None
        if part is None or not part.redactor.held:
            return
        before = part.size + part.redactor.held
        tail = part.cut()
        self.memory.used += part.size - before
        if tail:
            groups.append(OutputGroup(part.kind, part.key, tail, part.unpublished))
            part.unpublished = 0

    def materialize_part(self, key: str, *, evicted: bool = False) -> None:
        """Finish one part and write its item (a bound needs room, or the turn ended)."""
        if key not in self._parts:
            return
        self.flush_output()  # the part's pending raw text is redacted and published first
        part = self._parts.pop(key)
        accounted = part.size + part.redactor.held  # what the count holds for this part
        # Only the part published last can hold text (see _release_last): the tail is in order.
        tail, whole = part.finish()
        if tail:
            self.output([OutputGroup(part.kind, key, tail, part.unpublished)])
        self.memory.forget(self, key, accounted)
        if evicted:
            self.stats.evictions += 1
        self.stats.item_writes += 1
        self.items([Item(part.kind, {"text": whole}, coalesced_events=part.events)])

    def close(self) -> None:
        """The prompt ended (or the runtime was lost or shut down): materialize everything."""
        for key in list(self._parts):
            self.materialize_part(key)
        self.flush_output()
