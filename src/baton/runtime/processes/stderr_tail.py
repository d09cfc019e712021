"""A bounded rolling tail of an agent's stderr: the newest bytes only, redacted when read.

An agent may write any amount of stderr (log floods, stack traces, progress bars). Baton keeps
only the newest :data:`STDERR_TAIL_BYTES` of it in a fixed ring, so memory stays bounded however
much arrives, and writing never waits for anything. Reading (:meth:`StderrTail.text`) decodes
the bytes as UTF-8 with replacement characters and passes them through the owner's redactor.

A cut never exposes a fragment of a credential. Once older bytes were dropped, the retained
bytes may begin in the middle of a secret, where an exact-value redactor cannot recognise the
remaining suffix. So a truncated tail starts after its first newline; with no newline, after its
first ASCII whitespace (credentials do not contain whitespace); with neither, the tail is empty.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from baton.errors import UsageError

#: The stderr bytes kept per agent process (the newest ones), and the most :meth:`StderrTail.text`
#: returns (UTF-8 encoded). Protects memory against an agent that floods stderr, and keeps the
#: diagnostic a loss or a failed start reports readable. Task Monki keeps the same 64 KiB.
STDERR_TAIL_BYTES: Final = 64 * 1024

#: The largest tail a caller may ask for. Protects memory against a misconfigured bound.
MAX_STDERR_TAIL_BYTES: Final = 16 * 1024 * 1024

# Where a truncated tail may start: after a line break, else after any ASCII whitespace.
_LINE_BREAK: Final = b"\n"
_WHITESPACE: Final = b" \t\r\n\f\v"

Redactor = Callable[[str], str]


class StderrTail:
    """A fixed-size ring of the newest bytes written to it.

    ``capacity`` bounds both the bytes retained and the UTF-8 length of :meth:`text`.
    ``redact``, when given, is applied to every text read (never to the stored bytes, so a
    redactor learned later still covers everything retained).
    """

    __slots__ = ("_buf", "_capacity", "_end", "_redact", "_size", "_total")

    def __init__(
        self, capacity: int = STDERR_TAIL_BYTES, *, redact: Redactor | None = None
    ) -> None:
        if isinstance(capacity, bool) or not isinstance(capacity, int):
            raise UsageError(f"stderr tail capacity must be an integer, got {capacity!r}")
        if not 0 < capacity <= MAX_STDERR_TAIL_BYTES:
            raise UsageError(
                f"stderr tail capacity must be between 1 and {MAX_STDERR_TAIL_BYTES} bytes, "
                f"got {capacity}"
            )
        self._capacity = capacity
        self._buf = bytearray(capacity)
        self._end = 0  # where the next byte goes
        self._size = 0  # bytes retained, at most capacity
        self._total = 0  # bytes ever written
        self._redact = redact

    @property
    def capacity(self) -> int:
        """The most bytes retained."""
        return self._capacity

    @property
    def total_bytes(self) -> int:
        """Every byte ever written, retained or not."""
        return self._total

    @property
    def dropped_bytes(self) -> int:
        """Bytes written but no longer retained (the oldest ones)."""
        return self._total - self._size

    @property
    def truncated(self) -> bool:
        """True once older bytes were dropped to make room."""
        return self._total > self._size

    def write(self, data: bytes) -> None:
        """Append ``data``, dropping the oldest bytes beyond the capacity. Never blocks."""
        size = len(data)
        if size == 0:
            return
        self._total += size
        cap = self._capacity
        view = memoryview(data)
        if size >= cap:
            self._buf[:] = view[size - cap :]
            self._end = 0
            self._size = cap
            return
        first = min(size, cap - self._end)
        self._buf[self._end : self._end + first] = view[:first]
        rest = size - first
        if rest:
            self._buf[:rest] = view[first:]
        self._end = (self._end + size) % cap
        self._size = min(cap, self._size + size)

    def _retained(self) -> bytes:
        """The retained bytes, oldest first, unredacted (internal: never leaves the module)."""
        if self._size < self._capacity:
            return bytes(self._buf[: self._size])
        return bytes(self._buf[self._end :] + self._buf[: self._end])

    def text(self) -> str:
        """The tail as text: UTF-8 with replacement characters, cut at a safe boundary when
        truncated, redacted, and at most ``capacity`` bytes once encoded."""
        data = self._retained()
        if self.truncated:
            data = _after_safe_boundary(data)
        text = data.decode("utf-8", errors="replace")
        if self._redact is not None:
            text = self._redact(text)
        encoded = text.encode("utf-8", errors="replace")
        if len(encoded) > self._capacity:
            # Redaction markers and replacement characters can lengthen the text; keep its
            # newest part. A cut here falls in redacted text, which holds no secret.
            text = encoded[-self._capacity :].decode("utf-8", errors="ignore")
        return text

    def __len__(self) -> int:
        """The bytes retained."""
        return self._size


def _after_safe_boundary(data: bytes) -> bytes:
    """Drop the possibly cut first token of a truncated tail (see the module docstring)."""
    line = data.find(_LINE_BREAK)
    if line >= 0:
        return data[line + 1 :]
    for index, byte in enumerate(data):
        if byte in _WHITESPACE:
            return data[index + 1 :]
    return b""
