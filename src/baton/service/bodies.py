"""Reading a request: its JSON body (bounded while it streams) and typed fields, each refused
with API_REQUEST_INVALID (400) naming the field."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from starlette.requests import Request

from baton.errors import ApiBodyTooLarge, ApiRequestInvalid
from baton.service.limits import MAX_BODY_BYTES


async def bounded_body(request: Request) -> bytes:
    """The whole body, refused (API_BODY_TOO_LARGE) once it passes
    :data:`~baton.service.limits.MAX_BODY_BYTES` while it streams."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise ApiBodyTooLarge(f"request bodies are at most {MAX_BODY_BYTES} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


async def json_object(request: Request) -> dict[str, Any]:
    """The body as a JSON object (an empty body is ``{}``)."""
    raw = await bounded_body(request)
    if not raw.strip():
        return {}
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ApiRequestInvalid(f"the body is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise ApiRequestInvalid("the body must be a JSON object")
    return value


def optional_str(body: Mapping[str, Any], name: str) -> str | None:
    """A string field, or None when absent or null."""
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ApiRequestInvalid(f"{name} must be a string")
    return value


def required_str(body: Mapping[str, Any], name: str) -> str:
    """A string field that must be present and not empty."""
    value = optional_str(body, name)
    if value is None or not value.strip():
        raise ApiRequestInvalid(f"{name} is required (a non-empty string)")
    return value


def optional_seconds(body: Mapping[str, Any], name: str) -> float | None:
    """A positive number of seconds, or None."""
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ApiRequestInvalid(f"{name} must be a positive number of seconds")
    return float(value)


def optional_bool(body: Mapping[str, Any], name: str) -> bool:
    """A boolean field (absent is false)."""
    value = body.get(name, False)
    if not isinstance(value, bool):
        raise ApiRequestInvalid(f"{name} must be true or false")
    return value


def string_map(body: Mapping[str, Any], name: str) -> dict[str, str]:
    """An object of string values (absent is empty)."""
    value = body.get(name)
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ApiRequestInvalid(f"{name} must be an object of strings")
    return value


def string_list(body: Mapping[str, Any], name: str) -> list[str]:
    """A list of strings (absent is empty)."""
    value = body.get(name)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ApiRequestInvalid(f"{name} must be a list of strings")
    return value


def query_int(request: Request, name: str, default: int, *, low: int, high: int) -> int:
    """An integer query parameter within ``low..high`` (clamped above)."""
    text = request.query_params.get(name)
    if text is None:
        return default
    try:
        number = int(text)
    except ValueError:
        raise ApiRequestInvalid(f"{name} must be an integer") from None
    if number < low:
        raise ApiRequestInvalid(f"{name} must be at least {low}")
    return min(number, high)
