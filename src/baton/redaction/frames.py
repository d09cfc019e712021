"""What the journal stores of one JSON-RPC message.

Every message is redacted structurally (:func:`~baton.redaction.structural.redact_json`).
A ``session/update`` notification additionally loses its free-form stream fields (``content``,
``text``, ``rawInput``, ``rawOutput``, ``title``, ``data``, at any depth under
``params.update``), which become :data:`~baton.redaction.markers.STREAM_CONTENT_MARKER`,
while its routing and status fields (``sessionId``, ``sessionUpdate``, ``toolCallId``,
``messageId``, ``status``, ``kind``, ``locations[].path``, usage numbers...) are kept, redacted
like any other value. Requests and responses (the ``session/prompt`` prompt, which the user
wrote, included) are redacted structurally only.

The fast path. Most frames of a turn are ``session/update`` deltas whose update holds only
routing strings and stream fields; the stream fields become the marker whatever they hold, so
the redaction of such a frame is decided by its routing strings alone.
:func:`session_update_shape` names that decision (a hashable key), which lets the journal
redact and encode each distinct shape once instead of once per delta.
:func:`values_by_shape` does that for a batch of messages read together, and skips even the
shape of a message whose structure and routing strings equal its predecessor's (the deltas
of one streamed message: the shape is the same, so it need not be built and hashed again).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any, Final, NamedTuple, TypeVar

from baton.redaction.secret_values import SecretValues
from baton.redaction.structural import STREAM_FIELDS, redact_json, redact_json_with_stream

#: The notification whose free-form fields are masked in the journal.
SESSION_UPDATE_METHOD: Final = "session/update"

#: Where the stream content of a ``session/update`` sits.
_UPDATE_PATH: Final = ("params", "update")

#: Longest total of the strings (keys and routing values, :func:`shape_chars`) of a shape that
#: is worth caching. Bounds the memory a cache of shapes holds per entry (a frame with huge
#: routing strings is simply redacted the slow way, uncached); real routing strings are ids of
#: a few dozen characters.
MAX_SHAPE_CHARS: Final = 1024


class _Token:
    """A structural token of a shape; never equal to any string a message holds."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"<{self._name}>"


#: Where ``params`` sits among the message's keys, and ``update`` among the params' keys.
_PARAMS: Final = _Token("params")
_UPDATE: Final = _Token("update")
#: A stream field's value (any value but null): its redaction is the marker, whatever it is.
_STREAM: Final = _Token("stream")


def redact_frame_message(
    message: dict[str, Any], secrets: SecretValues | None = None
) -> dict[str, Any]:
    """Return the copy of ``message`` the journal may store (see the module docstring).

    ``secrets`` are exact values removed from every string. Never mutates ``message``.
    """
    if message.get("method") == SESSION_UPDATE_METHOD:
        redacted = redact_json_with_stream(message, _UPDATE_PATH, secrets)
    else:
        redacted = redact_json(message, secrets)
    assert isinstance(redacted, dict)  # the redaction of an object is an object
    return redacted


def session_update_shape(message: dict[str, Any]) -> tuple[object, ...] | None:
    """The key that decides the redaction of a simple ``session/update``, or None.

    A message is simple when it is a ``session/update`` whose every value is a string except
    ``params``, whose ``params`` values are strings except ``update``, and whose ``update``
    values are strings or non-null stream fields (:data:`STREAM_FIELDS`). The shape lists every
    key and string in order, with a stream field's value replaced by a token, so two messages
    with the same shape have equal :func:`redact_frame_message` results (for the same
    ``secrets``). Anything else (numbers, nested objects, ``_meta``, a ``null`` stream field,
    an ``id`` that is not a string...) returns None, and the caller redacts it in full.

    The usual envelope (exactly ``jsonrpc``, ``method``, ``params`` around exactly
    ``sessionId``, ``update``) is keyed by its key tuples and two strings instead of a walk;
    its keys never equal a walked shape's (they start with a tuple, not a string). Callers
    that keep shapes bound their size themselves (see :func:`shape_chars`).
    """
    params = message.get("params")
    if type(params) is not dict or message.get("method") != SESSION_UPDATE_METHOD:
        return None
    update = params.get("update")
    if type(update) is not dict:
        return None
    shape: list[object]
    if len(message) == 3 and len(params) == 2:
        # method and params are there; so exactly jsonrpc, method, params (in some order)
        # when jsonrpc is, and exactly sessionId and update when sessionId is.
        jsonrpc = message.get("jsonrpc")
        session = params.get("sessionId")
        if type(jsonrpc) is str and type(session) is str:
            shape = [tuple(message), jsonrpc, tuple(params), session]
        else:
            return None  # a non-string jsonrpc or sessionId, or another key
    else:
        shape = []
        for key, value in message.items():
            if key == "params":
                shape.append(_PARAMS)
            elif type(value) is str:
                shape.append(key)
                shape.append(value)
            else:
                return None
        for key, value in params.items():
            if key == "update":
                shape.append(_UPDATE)
            elif type(value) is str:
                shape.append(key)
                shape.append(value)
            else:
                return None
    for key, value in update.items():
        if key in STREAM_FIELDS:
            if value is None:
                return None
            shape.append(key)
            shape.append(_STREAM)
        elif type(value) is str:
            shape.append(key)
            shape.append(value)
        else:
            return None
    return tuple(shape)


def shape_chars(shape: tuple[object, ...]) -> int:
    """Characters of keys and strings a shape holds (what keeping it costs)."""
    total = 0
    for item in shape:
        if type(item) is str:
            total += len(item)
        elif type(item) is tuple:
            total += sum(len(key) for key in item)
    return total


_T = TypeVar("_T")


def _no_values(_: dict[str, Any]) -> tuple[()]:
    return ()


def _getter(keys: list[str]) -> Callable[[dict[str, Any]], object]:
    """A getter of the values under ``keys`` (comparable between two dicts of equal keys)."""
    if not keys:
        return _no_values
    return itemgetter(*keys)


_Getter = Callable[[dict[str, Any]], object]


class _Run(NamedTuple):
    """The structure of one simple ``session/update``: a later message with the same keys at
    each level in the same order, equal values besides ``params``, ``update`` and the stream
    fields, and no null stream field, has the same :func:`session_update_shape`.
    (A tuple: the loop of :func:`values_by_shape` unpacks it into locals.)"""

    message_keys: tuple[str, ...]
    message_get: _Getter
    message_values: object
    params_keys: tuple[str, ...]
    params_get: _Getter
    params_values: object
    update_keys: tuple[str, ...]
    update_get: _Getter
    update_values: object
    stream_get: Callable[[dict[str, Any]], tuple[object, ...]]

    @classmethod
    def of(cls, message: dict[str, Any], params: dict[str, Any], update: dict[str, Any]) -> _Run:
        """The structure of ``message`` (whose params and update are given)."""
        message_get = _getter([key for key in message if key != "params"])
        params_get = _getter([key for key in params if key != "update"])
        update_get = _getter([key for key in update if key not in STREAM_FIELDS])
        streams = [key for key in update if key in STREAM_FIELDS]
        # Always a tuple, so ``None in`` checks the values themselves (a single key is asked
        # for twice: an itemgetter of one key returns the bare value, which may be a list).
        stream_get: Callable[[dict[str, Any]], tuple[object, ...]] = (
            (itemgetter(*streams) if len(streams) > 1 else itemgetter(*streams * 2))
            if streams
            else _no_values
        )
        return cls(
            tuple(message),
            message_get,
            message_get(message),
            tuple(params),
            params_get,
            params_get(params),
            tuple(update),
            update_get,
            update_get(update),
            stream_get,
        )


#: Matches no message (no message's keys are the empty tuple: a shape needs ``params``).
_NO_RUN: Final = _Run((), _no_values, (), (), _no_values, (), (), _no_values, (), _no_values)


def values_by_shape(
    messages: Sequence[dict[str, Any]],
    lookup: Callable[[tuple[object, ...]], _T | None],
    *,
    prefix: bool = False,
) -> list[_T] | None:
    """``[lookup(session_update_shape(m)) for m in messages]``, or None as soon as a message
    has no shape or ``lookup`` gives None for one; with ``prefix``, the values of the messages
    before that one instead (a list, empty when the first has none). A message whose structure
    equals the one before it (see :class:`_Run`) reuses its predecessor's value without
    building its shape.
    """
    values: list[_T] = []
    add = values.append
    mk, mget, mvalues, pk, pget, pvalues, uk, uget, uvalues, sget = _NO_RUN
    value: _T | None = None
    for message in messages:
        params = message.get("params")
        if type(params) is not dict:
            return values if prefix else None
        update = params.get("update")
        if type(update) is not dict:
            return values if prefix else None
        if (
            tuple(message) == mk
            and tuple(params) == pk
            and tuple(update) == uk
            and mget(message) == mvalues
            and pget(params) == pvalues
            and uget(update) == uvalues
            and None not in sget(update)
        ):
            add(value)  # type: ignore[arg-type]
            continue
        shape = session_update_shape(message)
        value = lookup(shape) if shape is not None else None
        if value is None:
            return values if prefix else None
        add(value)
        mk, mget, mvalues, pk, pget, pvalues, uk, uget, uvalues, sget = _Run.of(
            message, params, update
        )
    return values
