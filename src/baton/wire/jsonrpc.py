"""JSON-RPC 2.0 messages as ACP uses them: decoding, classification and encoding.

Messages stay plain ``dict`` objects (what orjson produces) so the hot path allocates nothing
extra; this module says what a dict *is* and builds the dicts Baton sends.

Two kinds of bad input are kept apart (decisions.md item 2):

- an unparseable line (bad UTF-8, bad JSON, JSON that is not an object, not a JSON-RPC 2.0
  envelope) is *skipped*: :func:`decode_line` returns a :class:`Skipped` marker;
- a well-formed envelope that breaks the protocol (a response with both ``result`` and
  ``error``, a malformed error object) is a *violation*: :func:`decode_line` returns a
  :class:`Violation`, and the connection reports it to its owner.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Final

import orjson

from baton.errors import OutboundFrameTooLarge

JSONRPC_VERSION: Final = "2.0"

Message = dict[str, Any]
RequestId = int | str

# Standard and ACP error codes (schema $defs/ErrorCode).
PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
REQUEST_CANCELLED: Final = -32800
AUTH_REQUIRED: Final = -32000
RESOURCE_NOT_FOUND: Final = -32002


class Kind(enum.Enum):
    """What an inbound envelope is."""

    REQUEST = "request"
    NOTIFICATION = "notification"
    RESPONSE = "response"


@dataclass(frozen=True, slots=True)
class Skipped:
    """An inbound line that is not a JSON-RPC message. ``reason`` is Baton's, never the agent's."""

    reason: str
    length: int


@dataclass(frozen=True, slots=True)
class Violation:
    """A well-formed envelope that breaks the protocol."""

    kind: str
    detail: str


def is_request_id(value: object) -> bool:
    """True for a valid JSON-RPC id: an int (not a bool) or a string. Never test truthiness:
    adapters use 0 and the empty string is still an id."""
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


def classify(message: Message) -> Kind | Violation | None:
    """Classify an envelope that is already known to be a dict with ``jsonrpc == "2.0"``.

    Returns ``None`` when the dict is not a JSON-RPC envelope at all (to be skipped).
    """
    method = message.get("method")
    if method is not None:
        if not isinstance(method, str):
            return None
        if "id" not in message:
            return Kind.NOTIFICATION
        if is_request_id(message["id"]):
            return Kind.REQUEST
        if message["id"] is None:
            return Violation("null_request_id", f"request {method!r} carries a null id")
        return None
    if "id" not in message:
        return None
    has_result = "result" in message
    has_error = "error" in message
    if has_result and has_error:
        return Violation("result_and_error", "a response carries both result and error")
    if not has_result and not has_error:
        return None
    if not is_request_id(message["id"]):
        if message["id"] is None and has_error:
            # A null-id error answers a request the peer could not parse at all.
            return Kind.RESPONSE
        return Violation("bad_response_id", "a response carries an id that is not int or string")
    if has_error:
        error = message["error"]
        if (
            not isinstance(error, dict)
            or not isinstance(error.get("code"), int)
            or isinstance(error.get("code"), bool)
            or not isinstance(error.get("message"), str)
        ):
            return Violation("bad_error_object", "an error response has a malformed error object")
    return Kind.RESPONSE


def decode_line(line: bytes) -> tuple[Message, Kind] | Skipped | Violation:
    """Decode one frame. Never raises on agent input."""
    try:
        message = orjson.loads(line)
    except orjson.JSONDecodeError:
        # orjson rejects invalid UTF-8 with the same error.
        return Skipped("invalid_json", len(line))
    if not isinstance(message, dict):
        return Skipped("not_an_object", len(line))
    if message.get("jsonrpc") != JSONRPC_VERSION:
        return Skipped("not_jsonrpc_2", len(line))
    kind = classify(message)
    if kind is None:
        return Skipped("not_an_envelope", len(line))
    if isinstance(kind, Violation):
        return kind
    return message, kind


def encode(message: Message, max_frame_bytes: int) -> bytes:
    """Serialize ``message`` as one compact frame with its newline, bounded by the cap."""
    data = orjson.dumps(message, option=orjson.OPT_APPEND_NEWLINE)
    if len(data) - 1 > max_frame_bytes:
        raise OutboundFrameTooLarge(max_frame_bytes, len(data) - 1)
    return data


def request(request_id: RequestId, method: str, params: Message | None) -> Message:
    """Build a request envelope."""
    message: Message = {"jsonrpc": JSONRPC_VERSION, "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str, params: Message | None) -> Message:
    """Build a notification envelope."""
    message: Message = {"jsonrpc": JSONRPC_VERSION, "method": method}
    if params is not None:
        message["params"] = params
    return message


def result_response(request_id: RequestId | None, result: Any) -> Message:
    """Build a success response echoing ``request_id`` exactly."""
    return {"jsonrpc": JSONRPC_VERSION, "id": request_id, "result": result}


def error_response(
    request_id: RequestId | None, code: int, message: str, data: Any = None
) -> Message:
    """Build an error response echoing ``request_id`` exactly."""
    error: Message = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": JSONRPC_VERSION, "id": request_id, "error": error}


def method_of(message: Message) -> str | None:
    """The method of a request or notification, else None."""
    method = message.get("method")
    return method if isinstance(method, str) else None
