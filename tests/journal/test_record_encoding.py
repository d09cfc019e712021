"""The writer's fast record encoding is byte for byte ``encode_record``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from baton.durable.timestamps import format_timestamp
from baton.journal.records import (
    Direction,
    RecordBody,
    RecordHead,
    RecordMetadata,
    UtcStamps,
    encode_record,
    micros_since_epoch,
)

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
raws = st.dictionaries(st.text(max_size=8), st.text(max_size=20), max_size=3).map(orjson.dumps)
metadata = st.builds(
    RecordMetadata,
    st.sampled_from(["request", "notification", "response", "skipped"]),
    st.one_of(st.none(), st.text(max_size=20)),
    st.one_of(st.none(), st.integers(0, 10**9), st.text(max_size=10)),
    st.one_of(st.none(), st.text(max_size=10)),
)
moments = st.datetimes(
    min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)
)


def _moment(micros: int) -> datetime:
    return EPOCH + timedelta(microseconds=micros)


@settings(max_examples=300, deadline=None)
@given(
    server=st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_-]{0,20}", fullmatch=True),
    segment=st.integers(0, 10**6),
    direction=st.sampled_from(["inbound", "outbound"]),
    records=st.lists(st.tuples(st.integers(1, 10**12), moments, raws, metadata), max_size=6),
)
def test_lines_and_lengths_equal_encode_record(
    server: str,
    segment: int,
    direction: Direction,
    records: list[tuple[int, datetime, bytes, RecordMetadata]],
) -> None:
    head = RecordHead(server, segment, direction)
    stamps = UtcStamps()
    expected = b""
    batch = []
    for sequence, moment, raw, meta in records:
        body = RecordBody.of(raw, meta)
        line, digest = encode_record(
            server, segment, sequence, direction, format_timestamp(moment), raw, meta
        )
        assert body.digest == digest
        assert head.length(sequence, body) == len(line)
        micros = micros_since_epoch(moment)
        assert head.line(sequence, stamps.json(micros), body) == line
        expected += line + b"\n"
        batch.append((sequence, micros, body))
    assert b"".join(head.line_parts(batch, stamps)) == expected


def test_stamps_across_second_boundaries_and_the_epoch() -> None:
    stamps = UtcStamps()
    for micros in (-1, 0, 999_999, 1_000_000, 1_000_001, -1_000_001, 1_764_000_000_123_456):
        assert orjson.loads(stamps.json(micros)) == format_timestamp(_moment(micros))
        assert micros_since_epoch(_moment(micros)) == micros


def test_lengths_follow_the_sequence_digits() -> None:
    head = RecordHead("srv-1", 0, "inbound")
    body = RecordBody.of(b"{}", RecordMetadata("notification"))
    stamp = UtcStamps().json(0)
    # Up, down and across powers of ten.
    for sequence in (1, 9, 10, 99, 100, 5, 10**12, 7):
        assert head.length(sequence, body) == len(head.line(sequence, stamp, body))
