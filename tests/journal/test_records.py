"""The record line and the reference: encoding, decoding and every validation rule."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import orjson
import pytest

from baton.durable.refs import JournalRef, validate_server_id
from baton.durable.timestamps import format_timestamp
from baton.errors import JournalCorrupt, UsageError
from baton.journal.records import (
    RecordMetadata,
    decode_record,
    encode_record,
    metadata_for,
    parse_segment_name,
    segment_name,
    sha256_hex,
)

RAW = b'{"jsonrpc":"2.0","id":1,"method":"initialize"}'
WHEN = "2025-01-02T03:04:05.123456Z"


def _line(**overrides: Any) -> bytes:
    line, _digest = encode_record(
        "srv-1", 2, 7, "outbound", WHEN, RAW, RecordMetadata("request", "initialize", 1)
    )
    data = orjson.loads(line)
    data.update(overrides)
    return orjson.dumps(data)


def test_round_trip_keeps_every_field_in_order() -> None:
    line, digest = encode_record(
        "srv-1", 2, 7, "outbound", WHEN, RAW, RecordMetadata("request", "initialize", 1)
    )
    assert list(orjson.loads(line)) == [
        "serverInstanceId",
        "segment",
        "sequence",
        "direction",
        "recordedAt",
        "raw",
        "metadata",
        "sha256",
    ]
    record = decode_record(line, "here")
    assert record.server_instance_id == "srv-1"
    assert (record.segment, record.sequence, record.direction) == (2, 7, "outbound")
    assert record.raw == RAW.decode()
    assert record.sha256 == digest == sha256_hex(RAW)
    assert record.metadata == RecordMetadata("request", "initialize", 1)
    assert record.metadata.to_dict() == {
        "protocol": "acp",
        "kind": "request",
        "method": "initialize",
        "id": 1,
    }
    assert record.message() == orjson.loads(RAW)
    assert record.to_dict() == orjson.loads(line)


@pytest.mark.parametrize(
    ("overrides", "problem"),
    [
        ({"serverInstanceId": "bad id"}, "serverInstanceId"),
        ({"segment": -1}, "segment"),
        ({"segment": True}, "segment"),
        ({"sequence": 0}, "sequence"),
        ({"sequence": "7"}, "sequence"),
        ({"direction": "INBOUND"}, "direction"),
        ({"recordedAt": "2025-01-02 03:04:05"}, "recordedAt"),
        ({"recordedAt": "2025-13-02T03:04:05.123456Z"}, "valid date"),
        ({"raw": 5}, "raw is not a string"),
        ({"raw": "tampered"}, "SHA-256"),
        ({"sha256": "ABC"}, "sha256"),
        ({"metadata": []}, "metadata is not an object"),
        ({"metadata": {"protocol": "acp", "kind": "bogus"}}, "metadata.kind"),
        ({"metadata": {"protocol": "lsp", "kind": "request"}}, "metadata.protocol"),
        ({"metadata": {"protocol": "acp", "kind": "request", "id": 1.5}}, "metadata.id"),
        ({"metadata": {"protocol": "acp", "kind": "request", "method": 3}}, "metadata.method"),
        ({"metadata": {"protocol": "acp", "kind": "request", "x": 1}}, "unknown keys"),
        ({"extra": 1}, "keys"),
    ],
)
def test_decode_rejects_each_bad_field(overrides: dict[str, Any], problem: str) -> None:
    with pytest.raises(JournalCorrupt, match=problem) as info:
        decode_record(_line(**overrides), "srv-1 segment 2 sequence 7 at byte 0")
    assert info.value.code == "JOURNAL_CORRUPT"
    assert info.value.record == "srv-1 segment 2 sequence 7 at byte 0"


def test_decode_rejects_reordered_keys_and_non_json() -> None:
    data = orjson.loads(_line())
    reordered = {key: data[key] for key in reversed(list(data))}
    with pytest.raises(JournalCorrupt, match="keys"):
        decode_record(orjson.dumps(reordered), "x")
    with pytest.raises(JournalCorrupt, match="not valid JSON"):
        decode_record(b'{"serverInstanceId":', "x")
    with pytest.raises(JournalCorrupt, match="not a JSON object"):
        decode_record(b"[1,2]", "x")


def test_raw_with_quotes_and_unicode_hashes_its_utf8_bytes() -> None:
    raw = orjson.dumps({"text": 'a "quoted" \\ snowman ☃'})
    line, digest = encode_record("s", 0, 1, "inbound", WHEN, raw, RecordMetadata("notification"))
    record = decode_record(line, "x")
    assert record.raw.encode() == raw
    assert digest == sha256_hex(raw)


@pytest.mark.parametrize("server", ["a", "A1", "x" * 128, "srv-1_b", "0abc"])
def test_valid_server_ids(server: str) -> None:
    assert validate_server_id(server) == server


@pytest.mark.parametrize(
    "server", ["", "-a", "_a", "x" * 129, "a.b", "a/b", "a b", "abc\n", "ä", "a\x00"]
)
def test_invalid_server_ids(server: str) -> None:
    with pytest.raises(UsageError):
        validate_server_id(server)


def test_segment_names() -> None:
    assert segment_name("srv-1", 0) == "srv-1.0.ndjson"
    assert parse_segment_name("srv-1.12.ndjson") == ("srv-1", 12)
    for name in ("srv-1.ndjson", "srv-1.01.ndjson", "srv-1.-1.ndjson", "a.b.1.ndjson", "x.1.json"):
        assert parse_segment_name(name) is None


def test_timestamp_is_utc_with_microseconds() -> None:
    moment = datetime(2025, 1, 2, 5, 4, 5, 123456, tzinfo=timezone(timedelta(hours=2)))
    assert format_timestamp(moment) == "2025-01-02T03:04:05.123456Z"
    assert format_timestamp(datetime(2025, 1, 2, tzinfo=UTC)).endswith(".000000Z")


def test_metadata_of_messages() -> None:
    assert metadata_for({"jsonrpc": "2.0", "id": 0, "method": "m"}) == RecordMetadata(
        "request", "m", 0
    )
    assert metadata_for({"jsonrpc": "2.0", "method": "n"}) == RecordMetadata("notification", "n")
    assert metadata_for({"jsonrpc": "2.0", "id": "a", "result": {}}) == RecordMetadata(
        "response", None, "a"
    )
    # A null-id error response has no id to keep; a bool is not an id.
    assert metadata_for({"jsonrpc": "2.0", "id": None, "error": {}}).id is None
    assert metadata_for({"jsonrpc": "2.0", "id": True, "result": 1}).id is None
    long_id = "x" * 300
    assert metadata_for({"jsonrpc": "2.0", "id": long_id, "result": 1}).id is None
    assert metadata_for({"jsonrpc": "2.0", "id": 1, "result": 1}, "result_and_error").violation == (
        "result_and_error"
    )


def _ref_dict(**overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "server": "srv-1",
        "segment": 0,
        "sequence": 1,
        "byteOffset": 0,
        "byteLength": 10,
        "sha256": "a" * 64,
    }
    data.update(overrides)
    return data


def test_ref_round_trip() -> None:
    ref = JournalRef("srv-1", 3, 9, 120, 55, "b" * 64)
    assert JournalRef.from_dict(ref.to_dict()) == ref
    assert ref.to_dict()["byteOffset"] == 120
    assert str(ref) == "srv-1 segment 3 sequence 9 at byte 120"


@pytest.mark.parametrize(
    "overrides",
    [
        {"server": "a.b"},
        {"segment": -1},
        {"sequence": 0},
        {"byteOffset": -1},
        {"byteLength": 0},
        {"byteLength": True},
        {"sha256": "A" * 64},
        {"sha256": "a" * 63},
        {"extra": 1},
    ],
)
def test_ref_from_dict_rejects(overrides: dict[str, Any]) -> None:
    with pytest.raises(JournalCorrupt):
        JournalRef.from_dict(_ref_dict(**overrides))
