"""Decoding and classification: what is skipped, what is a violation, what is a message."""

from __future__ import annotations

import orjson
import pytest

from baton.errors import OutboundFrameTooLarge
from baton.wire import jsonrpc
from baton.wire.jsonrpc import Kind, Skipped, Violation


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b"not json", "invalid_json"),
        (b"\xff\xfe{}", "invalid_json"),
        (b"[1,2]", "not_an_object"),
        (b'"text"', "not_an_object"),
        (b'{"id":1,"result":{}}', "not_jsonrpc_2"),
        (b'{"jsonrpc":"1.0","id":1,"result":{}}', "not_jsonrpc_2"),
        (b'{"jsonrpc":"2.0"}', "not_an_envelope"),
        (b'{"jsonrpc":"2.0","id":1}', "not_an_envelope"),
        (b'{"jsonrpc":"2.0","method":5}', "not_an_envelope"),
    ],
)
def test_unparseable_lines_are_skipped_with_a_reason(line: bytes, reason: str) -> None:
    decoded = jsonrpc.decode_line(line)
    assert decoded == Skipped(reason, len(line))


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        (
            {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "x"}},
            "result_and_error",
        ),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": "x", "message": "m"}}, "bad_error_object"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": True, "message": "m"}}, "bad_error_object"),
        ({"jsonrpc": "2.0", "id": 1.5, "result": {}}, "bad_response_id"),
        ({"jsonrpc": "2.0", "id": None, "method": "session/request_permission"}, "null_request_id"),
    ],
)
def test_well_formed_but_broken_envelopes_are_violations(
    message: dict[str, object], kind: str
) -> None:
    decoded = jsonrpc.decode_line(orjson.dumps(message))
    assert isinstance(decoded, Violation)
    assert decoded.kind == kind


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        (
            {"jsonrpc": "2.0", "id": 0, "method": "session/request_permission", "params": {}},
            Kind.REQUEST,
        ),
        ({"jsonrpc": "2.0", "id": "a-uuid", "method": "fs/read_text_file"}, Kind.REQUEST),
        ({"jsonrpc": "2.0", "method": "session/update", "params": {}}, Kind.NOTIFICATION),
        ({"jsonrpc": "2.0", "id": 3, "result": None}, Kind.RESPONSE),
        ({"jsonrpc": "2.0", "id": 3, "error": {"code": -32000, "message": "auth"}}, Kind.RESPONSE),
        (
            {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse"}},
            Kind.RESPONSE,
        ),
    ],
)
def test_messages_are_classified(message: dict[str, object], kind: Kind) -> None:
    decoded = jsonrpc.decode_line(orjson.dumps(message))
    assert decoded == (message, kind)


def test_ids_are_never_tested_for_truthiness() -> None:
    assert jsonrpc.is_request_id(0)
    assert jsonrpc.is_request_id("")
    assert not jsonrpc.is_request_id(False)
    assert not jsonrpc.is_request_id(None)
    assert not jsonrpc.is_request_id(1.0)


def test_encode_is_compact_with_one_newline() -> None:
    data = jsonrpc.encode(jsonrpc.request(1, "initialize", {"a": [1, 2]}), 1024)
    assert data == b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"a":[1,2]}}\n'


def test_encode_applies_the_cap_to_outbound_frames() -> None:
    message = jsonrpc.notification("x", {"t": "a" * 2000})
    size = len(orjson.dumps(message))
    assert jsonrpc.encode(message, size).endswith(b"\n")
    with pytest.raises(OutboundFrameTooLarge) as caught:
        jsonrpc.encode(message, size - 1)
    assert caught.value.size == size


def test_responses_echo_ids_exactly() -> None:
    assert jsonrpc.result_response("uuid-1", {})["id"] == "uuid-1"
    assert jsonrpc.error_response(0, -32601, "no")["id"] == 0
