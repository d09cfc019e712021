"""The bounded stderr ring: keeps the newest bytes, cuts safely, redacts on read."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from baton.errors import UsageError
from baton.runtime.processes.stderr_tail import MAX_STDERR_TAIL_BYTES, STDERR_TAIL_BYTES, StderrTail


@given(
    capacity=st.integers(min_value=1, max_value=64),
    chunks=st.lists(st.binary(max_size=100), max_size=30),
)
def test_ring_keeps_exactly_the_newest_bytes(capacity: int, chunks: list[bytes]) -> None:
    tail = StderrTail(capacity)
    for chunk in chunks:
        tail.write(chunk)
    everything = b"".join(chunks)
    assert tail._retained() == everything[-capacity:]
    assert len(tail) == min(capacity, len(everything))
    assert tail.total_bytes == len(everything)
    assert tail.dropped_bytes == max(0, len(everything) - capacity)
    assert tail.truncated == (len(everything) > capacity)


def test_untruncated_text_is_everything_decoded() -> None:
    tail = StderrTail(64)
    tail.write(b"first line\n")
    tail.write("second: h\u00e9llo".encode())
    assert tail.text() == "first line\nsecond: h\u00e9llo"


def test_invalid_utf8_is_replaced() -> None:
    tail = StderrTail(64)
    tail.write(b"bad \xff\xfe byte\n")
    assert tail.text() == "bad \ufffd\ufffd byte\n"


def test_truncated_text_starts_after_the_first_newline() -> None:
    tail = StderrTail(16)
    tail.write(b"0123456789\nabcdefghi\n")  # 21 bytes; the ring keeps "56789\nabcdefghi\n"
    assert tail.truncated
    assert tail.text() == "abcdefghi\n"


def test_truncated_text_without_newline_starts_after_whitespace() -> None:
    tail = StderrTail(16)
    tail.write(b"aaaaaaaaaa bbbb cccc")  # keeps "aaaaaa bbbb cccc"
    assert tail.text() == "bbbb cccc"


def test_truncated_text_without_any_boundary_is_empty() -> None:
    tail = StderrTail(8)
    tail.write(b"x" * 20)
    assert tail.text() == ""


def test_a_secret_cut_by_the_ring_never_shows_a_fragment() -> None:
    secret = "sk-live-0123456789abcdef"
    tail = StderrTail(40, redact=lambda text: text.replace(secret, "[REDACTED]"))
    tail.write(f"token={secret}\n".encode())
    tail.write(b"later line one\n")
    tail.write(b"later line two\n")
    # The ring now starts inside the secret: its suffix is retained but must not surface.
    assert tail.truncated
    assert "abcdef" in tail._retained().decode()
    text = tail.text()
    assert "abcdef" not in text
    assert text == "later line one\nlater line two\n"


def test_redaction_applies_on_every_read() -> None:
    calls: list[str] = []

    def redact(text: str) -> str:
        calls.append(text)
        return text.replace("hunter2", "***")

    tail = StderrTail(128, redact=redact)
    tail.write(b"password hunter2 used\n")
    assert tail.text() == "password *** used\n"
    tail.write(b"again hunter2\n")
    assert tail.text() == "password *** used\nagain ***\n"
    assert len(calls) == 2


def test_text_stays_within_capacity_when_redaction_lengthens_it() -> None:
    tail = StderrTail(32, redact=lambda text: text.replace("k", "[REDACTED-KEY]"))
    tail.write(b"k k k k k k k k k k\n")  # 20 bytes, redacted to far more than 32
    text = tail.text()
    assert len(text.encode()) <= 32
    assert text.endswith("[REDACTED-KEY]\n")


def test_clamp_never_splits_a_multibyte_character() -> None:
    tail = StderrTail(10, redact=lambda text: text * 3)
    tail.write("\u00e9\u00e9\u00e9\n".encode())  # 7 bytes; tripled: 21
    text = tail.text()
    assert len(text.encode()) <= 10
    assert "\ufffd" not in text
    assert text.endswith("\u00e9\u00e9\u00e9\n")


def test_one_write_larger_than_the_ring_keeps_its_end() -> None:
    tail = StderrTail(10)
    tail.write(b"abcdefghijklmnopqrstuvwxyz")
    assert tail._retained() == b"qrstuvwxyz"
    assert tail.dropped_bytes == 16


def test_default_capacity_is_64_kib() -> None:
    assert STDERR_TAIL_BYTES == 64 * 1024
    assert StderrTail().capacity == STDERR_TAIL_BYTES


@pytest.mark.parametrize("capacity", [0, -1, MAX_STDERR_TAIL_BYTES + 1, True, 1.5])
def test_bad_capacity_is_a_usage_error(capacity: object) -> None:
    with pytest.raises(UsageError):
        StderrTail(capacity)  # type: ignore[arg-type]
