"""The frame decoder: caps at the boundary, blank lines, CRLF, one scan per byte."""

from __future__ import annotations

import pytest

from baton.errors import ConfigurationError, FrameTooLarge
from baton.wire.framing import (
    DEFAULT_MAX_FRAME_BYTES,
    HARD_MAX_FRAME_BYTES,
    MIN_MAX_FRAME_BYTES,
    FrameDecoder,
    validate_frame_cap,
)

CAP = 4096


def test_splits_lines_and_keeps_the_partial_tail() -> None:
    decoder = FrameDecoder(CAP)
    assert decoder.feed(b'{"a":1}\n{"b"') == [b'{"a":1}']
    assert decoder.buffered == 4
    assert decoder.feed(b":2}\n\n") == [b'{"b":2}', b""]
    assert decoder.buffered == 0


def test_crlf_endings_are_accepted() -> None:
    decoder = FrameDecoder(CAP)
    assert decoder.feed(b"one\r\ntwo\r") == [b"one"]
    assert decoder.feed(b"\n") == [b"two"]


@pytest.mark.parametrize("size", [CAP - 1, CAP])
def test_a_line_at_or_under_the_cap_is_accepted(size: int) -> None:
    decoder = FrameDecoder(CAP)
    line = b"x" * size
    assert decoder.feed(line[: size // 2]) == []
    assert decoder.feed(line[size // 2 :] + b"\n") == [line]


def test_a_complete_line_over_the_cap_is_rejected_with_cap_and_size() -> None:
    decoder = FrameDecoder(CAP)
    with pytest.raises(FrameTooLarge) as caught:
        decoder.feed(b"x" * (CAP + 1) + b"\n")
    assert caught.value.cap == CAP
    assert caught.value.seen == CAP + 1
    assert caught.value.code == "AGENT_FRAME_TOO_LARGE"


def test_an_unterminated_line_is_rejected_as_soon_as_it_crosses_the_cap() -> None:
    decoder = FrameDecoder(CAP)
    assert decoder.feed(b"x" * CAP) == []
    with pytest.raises(FrameTooLarge) as caught:
        decoder.feed(b"x")
    assert caught.value.seen == CAP + 1
    # Once failed, the stream has lost its framing: it stays failed and holds nothing.
    assert decoder.buffered == 0
    with pytest.raises(FrameTooLarge):
        decoder.feed(b"\n")


def test_a_one_gib_line_is_rejected_after_cap_plus_one_chunk() -> None:
    """The 1 GiB line is never materialized: the decoder stops at the first chunk past the cap
    and has held at most cap + chunk bytes."""
    cap = DEFAULT_MAX_FRAME_BYTES
    chunk = b"y" * (256 * 1024)
    decoder = FrameDecoder(cap)
    fed = 0
    peak = 0
    with pytest.raises(FrameTooLarge) as caught:
        while fed < 1024**3:
            decoder.feed(chunk)
            fed += len(chunk)
            peak = max(peak, decoder.buffered)
    fed += len(chunk)
    assert fed <= cap + 2 * len(chunk)
    assert peak <= cap + len(chunk)
    assert caught.value.seen <= cap + len(chunk)


def test_each_byte_is_scanned_once() -> None:
    """Feeding a long line in tiny pieces must not rescan what was already searched.

    Counted, not timed: a subclass of bytes records how many bytes ``find`` is asked to scan.
    """
    scanned = 0

    class CountingBytes(bytes):
        def find(self, sub, *args):  # type: ignore[no-untyped-def, override]
            nonlocal scanned
            scanned += len(self)
            return super().find(sub, *args)

    decoder = FrameDecoder(1024 * 1024)
    pieces = 10_000
    for _ in range(pieces):
        decoder.feed(CountingBytes(b"z" * 10))
    assert scanned == pieces * 10


def test_finish_returns_the_unterminated_last_line() -> None:
    decoder = FrameDecoder(CAP)
    decoder.feed(b'{"a":1}\n{"b":2}')
    assert decoder.finish() == b'{"b":2}'
    assert decoder.finish() is None


@pytest.mark.parametrize(
    "cap", [MIN_MAX_FRAME_BYTES - 1, HARD_MAX_FRAME_BYTES + 1, 0, -5, True, 1.5]
)
def test_caps_outside_the_allowed_range_are_configuration_errors(cap: object) -> None:
    with pytest.raises(ConfigurationError):
        validate_frame_cap(cap)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "cap", [MIN_MAX_FRAME_BYTES, DEFAULT_MAX_FRAME_BYTES, HARD_MAX_FRAME_BYTES]
)
def test_caps_inside_the_range_are_accepted(cap: int) -> None:
    assert FrameDecoder(cap).max_frame_bytes == cap
