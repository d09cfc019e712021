"""Pre-serialized frames equal what orjson would produce, byte for byte."""

from __future__ import annotations

import orjson

from baton.agents.scripted.frames import (
    STREAM_BATCH_BYTES,
    StreamBlob,
    message_chunk,
    session_update,
    split_chunk_frame,
    stream_text,
)


def test_stream_lines_equal_orjson() -> None:
    for session_id in ["session-1", 'we%ird"\\id\u00e9', "%d%s"]:
        blob = StreamBlob(session_id)
        expected = b"".join(
            orjson.dumps(session_update(session_id, message_chunk(stream_text(i)))) + b"\n"
            for i in range(1, 120)
        )
        assert blob.lines(1, 120) == expected


def test_batches_cover_the_range_in_order() -> None:
    blob = StreamBlob("s")
    batches = list(blob.batches(1, 20_001))
    assert sum(count for count, _ in batches) == 20_000
    assert b"".join(data for _, data in batches) == blob.lines(1, 20_001)
    assert all(len(data) <= STREAM_BATCH_BYTES + blob.line_bytes for _, data in batches)
    assert len(batches) > 1


def test_split_chunk_frame_wraps_any_text() -> None:
    before, after = split_chunk_frame("s")
    frame = before + b"xyz" + after
    assert orjson.loads(frame) == session_update("s", message_chunk("xyz"))
    assert after.endswith(b"\n")
