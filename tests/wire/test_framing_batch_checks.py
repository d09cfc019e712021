"""The decoder's whole-chunk checks (one cap check and one CR check per chunk) give the same
lines and the same FrameTooLarge as checking every line on its own."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from baton.errors import FrameTooLarge
from baton.wire.framing import FrameDecoder

CAP = 1024


class ReferenceDecoder:
    """The per-line decoder: split on newlines, check each line against the cap (its CR
    included), then drop one trailing CR; an unterminated tail over the cap fails as well."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.partial = b""
        self.failed: FrameTooLarge | None = None

    def feed(self, data: bytes) -> list[bytes]:
        if self.failed is not None:
            raise self.failed
        *complete, tail = (self.partial + data).split(b"\n")
        lines = []
        for line in complete:
            if len(line) > self.cap:
                self.fail(len(line))
            lines.append(line[:-1] if line.endswith(b"\r") else line)
        self.partial = tail
        if len(tail) > self.cap:
            self.fail(len(tail))
        return lines

    def fail(self, seen: int) -> None:
        self.partial = b""
        self.failed = FrameTooLarge(self.cap, seen)
        raise self.failed


def test_a_cr_at_the_end_of_one_chunk_and_its_lf_at_the_start_of_the_next() -> None:
    decoder = FrameDecoder(CAP)
    assert decoder.feed(b'{"a":1}\r') == []
    assert decoder.feed(b'\n{"b":2}\n') == [b'{"a":1}', b'{"b":2}']
    # The same split with nothing else in the second chunk.
    assert decoder.feed(b"three\r") == []
    assert decoder.feed(b"\n") == [b"three"]


def test_a_cr_at_the_end_of_a_partial_line_of_several_chunks() -> None:
    decoder = FrameDecoder(CAP)
    assert decoder.feed(b"par") == []
    assert decoder.feed(b"tial\r") == []
    assert decoder.feed(b"\nnext\n") == [b"partial", b"next"]


def test_crlf_lines_in_the_middle_of_a_chunk_are_stripped() -> None:
    decoder = FrameDecoder(CAP)
    assert decoder.feed(b"one\ntwo\r\nthree\nfour\r\nfi") == [b"one", b"two", b"three", b"four"]
    assert decoder.feed(b"ve\r\n") == [b"five"]


def test_only_one_cr_is_stripped() -> None:
    decoder = FrameDecoder(CAP)
    assert decoder.feed(b"a\r\r\nb\n") == [b"a\r", b"b"]


def test_a_cr_not_followed_by_lf_is_kept() -> None:
    decoder = FrameDecoder(CAP)
    assert decoder.feed(b"in\rside\nend\r of\n\rstart\n") == [b"in\rside", b"end\r of", b"\rstart"]
    # A CR ending a chunk whose next chunk does not start with LF is part of the line.
    assert decoder.feed(b"cr\r") == []
    assert decoder.feed(b"x\n") == [b"cr\rx"]
    # A lone CR line ending before LF is a blank line.
    assert decoder.feed(b"\r\n") == [b""]


def test_a_cr_on_a_first_line_is_stripped_when_later_lines_have_none() -> None:
    decoder = FrameDecoder(CAP)
    assert decoder.feed(b"head") == []
    assert decoder.feed(b"\r") == []
    assert decoder.feed(b"\nplain\nlines\n") == [b"head", b"plain", b"lines"]


def test_an_over_cap_first_line_is_reported_though_later_lines_are_fine() -> None:
    decoder = FrameDecoder(CAP)
    with pytest.raises(FrameTooLarge) as caught:
        decoder.feed(b"x" * (CAP + 5) + b"\nfine\nfine too\n")
    assert caught.value.seen == CAP + 5
    assert caught.value.cap == CAP


def test_the_first_over_cap_line_is_reported_after_fine_ones() -> None:
    decoder = FrameDecoder(CAP)
    data = b"fine\n" + b"y" * (CAP + 1) + b"\n" + b"z" * (CAP + 50) + b"\nok\n"
    with pytest.raises(FrameTooLarge) as caught:
        decoder.feed(data)
    assert caught.value.seen == CAP + 1  # the first over the cap, not the longest


def test_an_over_cap_line_completed_from_a_partial_is_reported_with_its_whole_length() -> None:
    decoder = FrameDecoder(CAP)
    assert decoder.feed(b"p" * (CAP - 10)) == []
    with pytest.raises(FrameTooLarge) as caught:
        decoder.feed(b"q" * 20 + b"\n" + b"r" * (CAP + 100) + b"\n")
    assert caught.value.seen == CAP + 10


def test_a_cr_counts_toward_the_cap() -> None:
    decoder = FrameDecoder(CAP)
    assert decoder.feed(b"a" * (CAP - 1) + b"\r\n") == [b"a" * (CAP - 1)]
    with pytest.raises(FrameTooLarge) as caught:
        decoder.feed(b"ok\r\n" + b"a" * CAP + b"\r\n")
    assert caught.value.seen == CAP + 1


def test_lines_at_the_cap_pass_and_the_decoder_stays_failed_after_one_over() -> None:
    decoder = FrameDecoder(CAP)
    assert decoder.feed(b"a" * CAP + b"\n" + b"b" * CAP + b"\n") == [b"a" * CAP, b"b" * CAP]
    with pytest.raises(FrameTooLarge):
        decoder.feed(b"c\n" + b"d" * (CAP + 1) + b"\n")
    assert decoder.buffered == 0
    with pytest.raises(FrameTooLarge):
        decoder.feed(b"e\n")


_bytes = st.lists(
    st.one_of(
        st.sampled_from([b"\n", b"\r", b"\r\n", b"\r\r\n", b"{}", b"x", b"\n\n"]),
        st.builds(lambda n: b"y" * n, st.sampled_from([1, 100, CAP - 2, CAP - 1, CAP, CAP + 1])),
    ),
    max_size=30,
).map(b"".join)


@settings(max_examples=300, deadline=None)
@given(data=_bytes, cuts=st.lists(st.integers(0, 1 << 16), max_size=8))
def test_the_decoder_matches_the_per_line_reference(data: bytes, cuts: list[int]) -> None:
    points = sorted({cut % (len(data) + 1) for cut in cuts})
    chunks = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    decoder = FrameDecoder(CAP)
    reference = ReferenceDecoder(CAP)
    for chunk in chunks:
        try:
            expected: list[bytes] | int = reference.feed(chunk)
        except FrameTooLarge as exc:
            expected = exc.seen
        try:
            got: list[bytes] | int = decoder.feed(chunk)
        except FrameTooLarge as exc:
            got = exc.seen
        assert got == expected
        if isinstance(expected, int):
            return
    assert decoder.buffered == len(reference.partial)
