"""Newline-delimited JSON framing with an explicit per-frame byte cap.

Memory arithmetic. A :class:`FrameDecoder` holds at most one partial frame. The partial frame
is checked against the cap after every chunk is fed, so the bytes it holds never exceed
``max_frame_bytes + chunk_size`` (the last chunk is appended before the check that rejects it).
With the default cap of 16 MiB and the connection's 64 KiB reads, a connection holds at most
about 16.06 MiB for a partial inbound frame, whatever the agent writes. Complete lines of a chunk
are split out in one pass and handed over before the next chunk is read.

Each byte is scanned for a newline exactly once: a partial frame is kept as a list of chunks and
only the newly fed chunk is searched, so a 1 GiB line with no newline costs one pass over
``cap + chunk`` bytes and then a :class:`~baton.errors.FrameTooLarge`, never a quadratic rescan.
"""

from __future__ import annotations

from baton.errors import ConfigurationError, FrameTooLarge

#: Default per-frame cap. Large enough for session/load replays and inline images (2 MiB is
#: not), small enough that one misbehaving agent cannot take the machine's memory.
DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024

#: Hard upper limit for a configured cap: the most one connection may hold for one frame.
HARD_MAX_FRAME_BYTES = 256 * 1024 * 1024

#: Smallest configurable cap; a frame smaller than this cannot hold an initialize response.
MIN_MAX_FRAME_BYTES = 1024


def validate_frame_cap(max_frame_bytes: int) -> int:
    """Return ``max_frame_bytes`` if it is an allowed cap, else raise ConfigurationError."""
    if isinstance(max_frame_bytes, bool) or not isinstance(max_frame_bytes, int):
        raise ConfigurationError("the frame cap must be an integer number of bytes")
    if not MIN_MAX_FRAME_BYTES <= max_frame_bytes <= HARD_MAX_FRAME_BYTES:
        raise ConfigurationError(
            f"the frame cap must be between {MIN_MAX_FRAME_BYTES} and {HARD_MAX_FRAME_BYTES} "
            f"bytes, got {max_frame_bytes}"
        )
    return max_frame_bytes


class FrameDecoder:
    """Split a byte stream into complete lines, bounded by ``max_frame_bytes`` per line.

    ``feed`` returns the complete lines the new bytes finished (newline and a trailing ``\\r``
    removed; blank lines included as ``b""`` so a caller can ignore them). The decoder keeps the
    unfinished tail between calls, so it can be resumed after any interruption of the caller.
    Once it has raised :class:`FrameTooLarge` it stays failed: the stream has lost its framing.
    """

    __slots__ = ("_cap", "_failed", "_partial", "_partial_len")

    def __init__(self, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> None:
        self._cap = validate_frame_cap(max_frame_bytes)
        self._partial: list[bytes] = []
        self._partial_len = 0
        self._failed: FrameTooLarge | None = None

    @property
    def max_frame_bytes(self) -> int:
        """The cap on one frame, in bytes, excluding its newline."""
        return self._cap

    @property
    def buffered(self) -> int:
        """Bytes held for the unfinished frame."""
        return self._partial_len

    def feed(self, data: bytes) -> list[bytes]:
        """Consume ``data`` and return the lines it completed, in order."""
        if self._failed is not None:
            raise self._failed
        cap = self._cap
        newline = data.find(b"\n")
        if newline < 0:
            if data:
                self._partial.append(data)
                self._partial_len += len(data)
                if self._partial_len > cap:
                    self._fail(self._partial_len)
            return []
        if self._partial:
            first = b"".join(self._partial) + data[:newline]
            self._partial = []
            self._partial_len = 0
        else:
            first = data[:newline]
        lines = data[newline + 1 :].split(b"\n")
        tail = lines.pop()
        lines.insert(0, first)
        # Whole-list checks first (each a C loop), the per-line loop only when one applies: a
        # line ending in CR ends before a newline inside ``data`` (so a CR is in it: a one-byte
        # search is a memchr, several times faster than looking for ``\r\n``), or is
        # ``first``, whose CR may have come in an earlier chunk.
        if max(map(len, lines)) > cap:
            self._fail(next(len(line) for line in lines if len(line) > cap))
        if b"\r" in data or first.endswith(b"\r"):
            for index, line in enumerate(lines):
                if line.endswith(b"\r"):
                    lines[index] = line[:-1]
        if tail:
            self._partial.append(tail)
            self._partial_len = len(tail)
            if self._partial_len > cap:
                self._fail(self._partial_len)
        return lines

    def finish(self) -> bytes | None:
        """At end of stream: return the unterminated last line, if any, and reset."""
        if self._failed is not None or not self._partial:
            return None
        line = b"".join(self._partial)
        self._partial = []
        self._partial_len = 0
        return line[:-1] if line.endswith(b"\r") else line

    def _fail(self, seen: int) -> None:
        self._partial = []
        self._partial_len = 0
        self._failed = FrameTooLarge(self._cap, seen)
        raise self._failed
