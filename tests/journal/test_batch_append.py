"""The batched inbound hot path gives exactly the records, references and bytes of one-by-one
appends, or refuses having recorded nothing.

Covers :func:`values_by_shape` (against its per-message definition), the batch entries of
:meth:`RecordHead.line_parts`, :class:`InboundRefs`, :meth:`ServerJournal.append_inbound_batch_nowait`
(every refusal, and the success path against a journal fed the same messages one at a time) and
:meth:`JournalTap.record_inbound`.
"""

from __future__ import annotations

import asyncio
import copy
import errno
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime, timedelta
from itertools import cycle
from pathlib import Path
from typing import Any

import capture_samples as _samples
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from baton.durable import files as journal_files
from baton.durable.refs import make_ref
from baton.durable.timestamps import format_timestamp
from baton.errors import JournalEntryPruned, JournalEntryTooLarge, JournalSyncFailed
from baton.journal import Journal, JournalLimits, JournalRef, JournalTap, SecretValues
from baton.journal.limits import WRITE_BUFFER_BYTES
from baton.journal.records import (
    InboundRefs,
    PendingRecords,
    RecordBody,
    RecordHead,
    RecordMetadata,
    UtcStamps,
    encode_record,
    metadata_for,
    sha256_hex,
)
from baton.journal.writer import ServerJournal
from baton.redaction import STREAM_FIELDS, redact_frame_message
from baton.redaction.frames import session_update_shape, values_by_shape

#: Limits whose background sync never fires during a test.
NO_TIMER = JournalLimits(sync_interval_seconds=3600)
#: An exact secret a profile would carry; it shows up in routing fields below.
SECRET = "hunter2-super-secret-value"
SECRETS = SecretValues([SECRET])
#: Routing values that must be redacted on the batched path too (shapes, exact secrets).
SECRET_ROUTING = [
    "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789",
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "Bearer abcdefghijklmnop1234567890",
    f"session-{SECRET}",
    SECRET,
    "AKIAABCDEFGHIJKLMNOP",
]
SERVER = "srv-1"
#: Generous bound for background work (never a timing assertion).
WAIT = 10.0
#: A constant record time: two journals fed the same records then hold the same bytes.
FIXED_MOMENT = datetime(2025, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)

Message = dict[str, Any]
Shape = tuple[object, ...]


FRAMES = _samples.transcript_messages()
UPDATES = [f for f in FRAMES if f.get("method") == "session/update"]
SIMPLE = [m for m in UPDATES if session_update_shape(m) is not None]


def _delta(n: int, message_id: str = "msg-1", session: str = "sess-1") -> Message:
    return _samples.session_update(
        {
            "sessionUpdate": "agent_message_chunk",
            "messageId": message_id,
            "content": {"type": "text", "text": f"delta {n} {SECRET}"},
        },
        session,
    )


def _request(request_id: int) -> Message:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "session/prompt",
        "params": {"sessionId": "sess-1", "prompt": [{"type": "text", "text": "go"}]},
    }


def _size(message: Message) -> int:
    return len(orjson.dumps(message))


def _body(message: Message, secrets: SecretValues | None = None) -> RecordBody:
    redacted = redact_frame_message(message, secrets)
    return RecordBody.of(orjson.dumps(redacted), metadata_for(redacted))


def _line_length(sequence: int, message: Message, segment: int = 0) -> int:
    """The length of the inbound record line of ``message`` (no secrets), without newline."""
    return RecordHead(SERVER, segment, "inbound").length(sequence, _body(message))


def _assert_full_redaction(
    record: Any, message: Message, secrets: SecretValues | None, direction: str = "inbound"
) -> None:
    redacted = redact_frame_message(message, secrets)
    raw = orjson.dumps(redacted)
    assert record.direction == direction
    assert record.raw == raw.decode()
    assert record.metadata == metadata_for(redacted)
    assert record.sha256 == sha256_hex(raw)
    if secrets is not None:
        assert SECRET not in record.raw


# --- values_by_shape ---------------------------------------------------------------------------


class Lookup:
    """A lookup of values by shape that counts its calls; ``known`` None means every shape."""

    def __init__(self, known: Iterable[Shape] | None = None) -> None:
        self.known = None if known is None else set(known)
        self.calls: list[Shape] = []

    def __call__(self, shape: Shape) -> tuple[str, Shape] | None:
        self.calls.append(shape)
        return self.value(shape)

    def value(self, shape: Shape) -> tuple[str, Shape] | None:
        """What a call returns for ``shape`` (without counting it)."""
        if self.known is not None and shape not in self.known:
            return None
        return ("value", shape)


def _per_message(messages: Sequence[Message], lookup: Lookup) -> list[object] | None:
    """The definition: ``lookup(session_update_shape(m))`` for each message, None on a miss."""
    values: list[object] = []
    for message in messages:
        shape = session_update_shape(message)
        if shape is None:
            return None
        value = lookup.value(shape)
        if value is None:
            return None
        values.append(value)
    return values


_STREAMED = object()


def _structure(message: Message) -> object:
    """What decides that a message reuses its predecessor's value: its keys in order at the
    message, params and update levels and every value but params, update and non-null stream
    fields (the documented rule, written independently of ``_Run``)."""
    params = message["params"]
    update = params["update"]
    return (
        [(key, None if key == "params" else value) for key, value in message.items()],
        [(key, None if key == "update" else value) for key, value in params.items()],
        [
            (key, _STREAMED if key in STREAM_FIELDS and value is not None else value)
            for key, value in update.items()
        ],
    )


def _expected_calls(messages: Sequence[Message], lookup: Lookup) -> int:
    """How many lookups values_by_shape may make: one per run of equal structures, up to the
    message that stops it."""
    calls = 0
    previous: object = None
    for message in messages:
        params = message.get("params")
        if type(params) is not dict or type(params.get("update")) is not dict:
            break
        structure = _structure(message)
        if previous is not None and structure == previous:
            continue
        shape = session_update_shape(message)
        if shape is None:
            break
        calls += 1
        if lookup.value(shape) is None:
            break
        previous = structure
    return calls


def _check_values(messages: Sequence[Message], known: Iterable[Shape] | None = None) -> Lookup:
    lookup = Lookup(known)
    assert values_by_shape(messages, lookup) == _per_message(messages, lookup)
    assert len(lookup.calls) == _expected_calls(messages, lookup)
    return lookup


def test_the_captures_have_runs_of_simple_updates() -> None:
    assert len(SIMPLE) > 100
    assert len({session_update_shape(m) for m in SIMPLE}) > 5


def test_real_updates_in_capture_order_equal_the_definition() -> None:
    lookup = _check_values(SIMPLE)
    # The captured deltas come in long runs of one structure: far fewer lookups than messages.
    assert 0 < len(lookup.calls) < len(SIMPLE) // 4
    assert set(lookup.calls) == {session_update_shape(m) for m in SIMPLE}
    for start in range(len(UPDATES)):
        _check_values(UPDATES[start : start + 4])
    assert values_by_shape(UPDATES, Lookup()) is None  # some captured updates are not simple


def test_real_updates_with_restreamed_copies_reuse_the_value() -> None:
    messages: list[Message] = []
    for message in SIMPLE:
        messages += [
            message,
            _samples.restream(message, {"type": "text", "text": "other"}),
            _samples.restream(message, [1, {"a": None}]),
            message,
        ]
    lookup = _check_values(messages)
    assert len(lookup.calls) <= len(SIMPLE)


def test_real_updates_with_one_body_missing() -> None:
    shapes = list(dict.fromkeys(session_update_shape(m) for m in SIMPLE))
    for missing in shapes:
        known = [s for s in shapes if s != missing and s is not None]
        assert values_by_shape(SIMPLE, Lookup(known)) is None
        for start in range(0, len(SIMPLE), 3):
            _check_values(SIMPLE[start : start + 5], known)


def _chunk(text: str, message_id: str = "m1") -> Message:
    return _samples.session_update(
        {"sessionUpdate": "agent_message_chunk", "messageId": message_id, "content": text}
    )


def test_the_lookup_is_called_once_per_run() -> None:
    a, b, c = (
        _chunk("x"),
        _chunk("y", "m2"),
        _samples.session_update({"sessionUpdate": "plan", "text": "t"}),
    )
    messages = [
        a,
        _samples.restream(a, "a2"),
        _samples.restream(a, {"type": "text", "text": "a3"}),
        _samples.restream(a, [None, None]),  # a list holding nulls is not a null stream field
        b,
        _samples.restream(b, ["b2"]),
        a,
        c,
        c,
    ]
    lookup = Lookup()
    values = values_by_shape(messages, lookup)
    shape_a, shape_b, shape_c = (session_update_shape(m) for m in (a, b, c))
    assert lookup.calls == [shape_a, shape_b, shape_a, shape_c]
    runs = [shape_a] * 4 + [shape_b] * 2 + [shape_a] + [shape_c] * 2
    assert values == [("value", s) for s in runs]


def test_a_reused_value_is_the_predecessors_own_object() -> None:
    made: list[object] = []

    def lookup(shape: Shape) -> object:
        made.append(object())
        return made[-1]

    values = values_by_shape([_chunk("1"), _chunk("2"), _chunk("3")], lookup)
    assert values is not None and len(made) == 1
    assert all(value is made[0] for value in values)


LEVEL_NAMES = ("message", "params", "update")


NOT_SIMPLE: dict[str, Message] = {
    "params-list": {"jsonrpc": "2.0", "method": "session/update", "params": ["x"]},
    "no-params": {"jsonrpc": "2.0", "method": "session/update"},
    "update-text": {"jsonrpc": "2.0", "method": "session/update", "params": {"update": "text"}},
    "no-update": {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s"}},
    "null-stream": _samples.session_update(
        {"sessionUpdate": "agent_message_chunk", "content": None}
    ),
    "int-routing": _samples.session_update({"sessionUpdate": "usage_update", "used": 1}),
    "int-session": {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": 1, "update": {}},
    },
    "nested": _samples.session_update(
        {"sessionUpdate": "tool_call", "locations": [{"path": "/a"}]}
    ),
    "other-method": {"jsonrpc": "2.0", "method": "other", "params": {"update": {"text": "c"}}},
    "request": {**_chunk("x"), "id": 3},
}


@pytest.mark.parametrize("position", [0, 1, 2])
@pytest.mark.parametrize("name", sorted(NOT_SIMPLE))
def test_none_when_a_message_has_no_shape(name: str, position: int) -> None:
    messages = [_chunk("a"), _chunk("b"), _chunk("c")]
    messages[position] = NOT_SIMPLE[name]
    lookup = Lookup()
    assert values_by_shape(messages, lookup) is None
    # Nothing is looked up from the message that stops it on.
    assert lookup.calls == [session_update_shape(_chunk("a"))] * min(position, 1)


def test_none_when_the_lookup_misses() -> None:
    a, b = _chunk("x"), _chunk("y", "m2")
    lookup = Lookup([session_update_shape(a)])  # type: ignore[list-item]
    assert values_by_shape([a, a, b, a], lookup) is None
    assert lookup.calls == [session_update_shape(a), session_update_shape(b)]
    lookup = Lookup([])
    assert values_by_shape([a, _samples.restream(a, "z")], lookup) is None
    assert len(lookup.calls) == 1
    assert values_by_shape([], Lookup([])) == []


@pytest.mark.parametrize("level", LEVEL_NAMES)
def test_a_routing_string_turned_number_is_not_reused(level: str) -> None:
    before = _chunk("x")
    _level(before, level)[_routing_key(before, level)] = "7"
    after = copy.deepcopy(before)
    _level(after, level)[_routing_key(before, level)] = 7
    lookup = Lookup()
    assert values_by_shape([before, after], lookup) is None
    assert values_by_shape([before, copy.deepcopy(before)], lookup) is not None


def _two_streams() -> Message:
    return _samples.session_update(
        {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Run", "rawInput": {"a": 1}}
    )


def _walked() -> Message:
    message = _chunk("x")
    message["extra"] = "y"
    message["params"]["more"] = "z"
    return message


BASES = {
    "one-stream": _chunk("x"),
    "two-streams": _two_streams(),
    "no-stream": _samples.session_update(
        {"sessionUpdate": "agent_thought_chunk", "messageId": "m"}
    ),
    "walked": _walked(),
    "tool-call-update": _samples.session_update(
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "call-1",
            "status": "in_progress",
            "kind": "execute",
            "rawOutput": {"stdout": "x"},
        }
    ),
}


def _level(message: Message, level: str) -> dict[str, Any]:
    if level == "message":
        return message
    if level == "params":
        return message["params"]  # type: ignore[no-any-return]
    return message["params"]["update"]  # type: ignore[no-any-return]


def _routing_keys(container: dict[str, Any]) -> list[str]:
    skip = {"params", "update", *STREAM_FIELDS}
    return [k for k, v in container.items() if k not in skip and type(v) is str]


def _routing_key(container: dict[str, Any], level: str) -> str:
    return next(k for k in _routing_keys(container) if k != "method")


def _mutations(base: Message) -> dict[str, Message]:
    out: dict[str, Message] = {}
    for level in ("message", "params", "update"):
        for key in _routing_keys(_level(base, level)):
            for name, value in (("changed", _level(base, level)[key] + "-2"), ("int", 2)):
                mutated = copy.deepcopy(base)
                _level(mutated, level)[key] = value
                out[f"{level}-{key}-{name}"] = mutated
        key = _routing_key(_level(base, level), level)
        extra = copy.deepcopy(base)
        _level(extra, level)["zExtra"] = "v"
        out[f"{level}-extra-key"] = extra
        reordered = copy.deepcopy(base)
        inner = _level(reordered, level)
        items = list(inner.items())
        inner.clear()
        inner.update(reversed(items))
        out[f"{level}-reordered"] = reordered
        dropped = copy.deepcopy(base)
        del _level(dropped, level)[key]
        out[f"{level}-key-dropped"] = dropped
    null = copy.deepcopy(base)
    null["params"]["update"]["content"] = None
    out["null-stream"] = null
    renamed = copy.deepcopy(base)
    update = renamed["params"]["update"]
    update["data"] = update.pop("content", "d")
    out["stream-renamed"] = renamed
    params_list = copy.deepcopy(base)
    params_list["params"] = [params_list["params"]]
    out["params-not-a-dict"] = params_list
    update_text = copy.deepcopy(base)
    update_text["params"]["update"] = "text"
    out["update-not-a-dict"] = update_text
    method = copy.deepcopy(base)
    method["method"] = "session/other"
    out["method-changed"] = method
    return out


@pytest.mark.parametrize("base_name", sorted(BASES))
def test_near_duplicates_are_never_reused(base_name: str) -> None:
    base = BASES[base_name]
    for name, mutated in _mutations(base).items():
        for messages in ([base, mutated], [base, base, mutated, base]):
            lookup = _check_values(messages)
            if session_update_shape(mutated) is not None:
                assert session_update_shape(mutated) != session_update_shape(base), name
                assert session_update_shape(mutated) in lookup.calls, name
        # Followed by its own copy, a mutated message is looked up once.
        lookup = _check_values([mutated, copy.deepcopy(mutated)])
        assert len(lookup.calls) <= 1


routing_text = st.one_of(
    st.sampled_from([*SECRET_ROUTING, "sess-1", "m1", "7"]), st.text(max_size=12)
)
stream_value = st.recursive(
    st.one_of(st.none(), st.text(max_size=10), st.integers(), st.booleans()),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner)
    ),
    max_leaves=4,
)
some_key = st.one_of(
    st.sampled_from(
        ["sessionUpdate", "messageId", "toolCallId", "status", "sessionId", *STREAM_FIELDS]
    ),
    st.text(min_size=1, max_size=6),
)


@st.composite
def simple_updates(draw: st.DrawFn) -> Message:
    update: dict[str, Any] = {}
    for key in draw(st.lists(some_key, max_size=4, unique=True)):
        if key in STREAM_FIELDS:
            update[key] = draw(stream_value.filter(lambda v: v is not None))
        else:
            update[key] = draw(routing_text)
    message = _samples.session_update(update, session=draw(routing_text))
    if draw(st.booleans()):
        message["params"]["zExtra"] = draw(routing_text)
    if draw(st.booleans()):
        message["id2"] = draw(routing_text)
    return message


def _mutate(draw: st.DrawFn, previous: Message, first: Message) -> Message:
    op = draw(
        st.sampled_from(
            [
                "same-object",
                "copy",
                "restream",
                "restream",
                "route",
                "route",
                "route",
                "reorder",
                "extra",
                "drop",
                "null",
                "int",
                "non-dict",
                "fresh",
                "first",
            ]
        )
    )
    if op == "same-object":
        return previous
    if op == "fresh":
        return draw(simple_updates())
    if op == "first":
        return copy.deepcopy(first)
    message = copy.deepcopy(previous)
    params = message.get("params")
    if type(params) is not dict or type(params.get("update")) is not dict:
        return message  # nothing structural left to vary
    if op == "restream":
        return _samples.restream(message, draw(stream_value.filter(lambda v: v is not None)))
    if op == "copy":
        return message
    container = _level(message, draw(st.sampled_from(LEVEL_NAMES)))
    keys = [k for k in container if k not in ("params", "update")]
    if op == "non-dict":
        if draw(st.booleans()):
            message["params"] = draw(st.sampled_from([["x"], "text", None, 3]))
        else:
            params["update"] = draw(st.sampled_from([["x"], "text", None, 3]))
    elif op == "null":
        params["update"][draw(st.sampled_from(sorted(STREAM_FIELDS)))] = None
    elif op == "extra":
        container[draw(some_key.filter(lambda k: k not in ("params", "update")))] = draw(
            routing_text
        )
    elif op == "reorder":
        items = list(container.items())
        order = draw(st.permutations(range(len(items))))
        container.clear()
        container.update(items[i] for i in order)
    elif keys:
        key = draw(st.sampled_from(keys))
        if op == "drop":
            del container[key]
        elif op == "route":
            container[key] = draw(routing_text)
        else:  # int: a routing string becomes a number (possibly the same digits)
            value = container[key]
            digits = type(value) is str and value.isascii() and value.isdigit()
            container[key] = int(value) if digits else draw(st.integers(0, 9))
    return message


@st.composite
def message_sequences(draw: st.DrawFn) -> tuple[list[Message], list[Shape] | None]:
    first = draw(simple_updates())
    messages = [first]
    for _ in range(draw(st.integers(0, 10))):
        messages.append(_mutate(draw, messages[-1], first))
    shapes = [s for s in map(session_update_shape, messages) if s is not None]
    if draw(st.booleans()):
        return messages, None
    cached = draw(st.lists(st.booleans(), min_size=len(shapes), max_size=len(shapes)))
    return messages, [s for s, keep in zip(shapes, cached, strict=True) if keep]


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(message_sequences())
def test_generated_near_duplicates_equal_the_definition(
    case: tuple[list[Message], list[Shape] | None],
) -> None:
    messages, known = case
    _check_values(messages, known)


# --- RecordHead.line_parts batch entries --------------------------------------------------------


def _singles(entries: Sequence[PendingRecords]) -> list[PendingRecords]:
    out: list[PendingRecords] = []
    for sequence, micros, body in entries:
        if isinstance(body, RecordBody):
            out.append((sequence, micros, body))
        else:
            out.extend((sequence + i, micros, one) for i, one in enumerate(body))
    return out


def _encoded(
    server: str, segment: int, singles: Sequence[tuple[int, int, RecordBody]], raws: dict[int, Any]
) -> bytes:
    """The lines ``encode_record`` gives for ``singles`` (``raws`` maps id(body) to its input)."""
    out = b""
    for sequence, micros, body in singles:
        raw, meta = raws[id(body)]
        stamp = format_timestamp(datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=micros))
        line, digest = encode_record(server, segment, sequence, "inbound", stamp, raw, meta)
        assert digest == body.digest
        out += line + b"\n"
    return out


def _bodies() -> tuple[list[RecordBody], dict[int, Any]]:
    inputs = [
        (b'{"a":"x"}', RecordMetadata("notification", "session/update")),
        (b'{"b":"\\"quoted\\" \xc3\xa9"}', RecordMetadata("notification", "session/update")),
        (b"{}", RecordMetadata("response", None, 7)),
        (b'{"a":"x"}', RecordMetadata("notification", "session/update")),  # equal to the first
    ]
    bodies = [RecordBody.of(raw, meta) for raw, meta in inputs]
    return bodies, {id(body): pair for body, pair in zip(bodies, inputs, strict=True)}


def test_a_batch_entry_has_the_lines_of_its_single_entries() -> None:
    (a, b, c, a_equal), raws = _bodies()
    assert a == a_equal and a is not a_equal
    second = 1_764_000_000 * 1_000_000
    entries: list[PendingRecords] = [
        (5, second - 1, a),
        (6, second - 1, [a, a, b, a, c, c]),  # the same second as the single before it
        (12, second, [c]),  # the next second
        (13, second + 999_999, b),
        (14, second + 999_999, [b, b, a, a_equal, a]),  # equal, not identical, bodies
        (95, second + 2_000_000, [a, b, c, c, a]),  # 95..99
        (100, second + 2_000_001, [c, c, a, b]),  # a digit more than the entry before
        (998, second + 2_000_001, [a, a, a, b]),  # 998..1001: digits grow inside the entry
        (1_002, second + 5_000_000, a),
    ]
    head = RecordHead(SERVER, 3, "inbound")
    singles = _singles(entries)
    assert [s[0] for s in singles][:8] == [5, 6, 7, 8, 9, 10, 11, 12]
    batched = b"".join(head.line_parts(entries, UtcStamps()))
    assert batched == b"".join(head.line_parts(singles, UtcStamps()))
    assert batched == _encoded(SERVER, 3, singles, raws)  # type: ignore[arg-type]
    assert batched.count(b"\n") == len(singles)


def test_a_batch_entry_alone_and_with_one_body() -> None:
    (a, b, _, _), raws = _bodies()
    head = RecordHead(SERVER, 0, "inbound")
    for entry in ([(1, 0, [a])], [(9, 123, [b] * 7)], [(7, 5, [a, b])]):
        singles = _singles(entry)
        assert b"".join(head.line_parts(entry, UtcStamps())) == _encoded(SERVER, 0, singles, raws)  # type: ignore[arg-type]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(1, 10**12),
            st.one_of(
                st.integers(0, 4 * 10**15),
                st.sampled_from([10**15 - 1, 10**15, 10**15 + 1, 0, 999_999, 1_000_000]),
            ),
            st.one_of(
                st.integers(0, 3),
                st.lists(st.integers(0, 3), min_size=1, max_size=8),
            ),
        ),
        max_size=6,
    )
)
def test_generated_batch_entries_have_the_lines_of_single_entries(
    entries: list[tuple[int, int, int | list[int]]],
) -> None:
    bodies, raws = _bodies()
    pending: list[PendingRecords] = [
        (seq, micros, bodies[pick] if isinstance(pick, int) else [bodies[i] for i in pick])
        for seq, micros, pick in entries
    ]
    head = RecordHead("s", 12, "inbound")
    singles = _singles(pending)
    stamps = UtcStamps()  # one cache across both calls, as in the writer
    assert b"".join(head.line_parts(pending, stamps)) == b"".join(head.line_parts(singles, stamps))
    assert b"".join(head.line_parts(pending, UtcStamps())) == _encoded("s", 12, singles, raws)  # type: ignore[arg-type]


# --- InboundRefs -------------------------------------------------------------------------------


def test_inbound_refs_is_a_sequence_of_journal_refs() -> None:
    (a, b, c, _), _ = _bodies()
    bodies = [a, b, a, c]
    refs = InboundRefs("srv-x", 4, 70, 1000, 50, bodies)
    offsets = [1000]
    for body in bodies[:-1]:
        offsets.append(offsets[-1] + 50 + len(body.tail) + 1)
    expected = [
        make_ref("srv-x", 4, 70 + i, offsets[i], 50 + len(body.tail), body.digest)
        for i, body in enumerate(bodies)
    ]
    assert expected[1] == JournalRef("srv-x", 4, 71, offsets[1], 50 + len(b.tail), b.digest)
    assert isinstance(refs, Sequence)
    assert len(refs) == 4
    assert [refs[i] for i in range(4)] == expected
    assert [refs[i] for i in range(-4, 0)] == expected
    assert list(refs) == expected
    assert list(reversed(refs)) == expected[::-1]
    assert refs[1:3] == expected[1:3]
    assert refs[::-1] == expected[::-1]
    assert refs[::2] == expected[::2]
    assert refs[-2:] == expected[-2:]
    assert refs[3:10] == expected[3:] and refs[5:] == []
    assert refs.index(expected[2]) == 2 and expected[3] in refs
    for bad in (4, 5, -5, -100):
        with pytest.raises(IndexError):
            refs[bad]
    one = InboundRefs("srv-x", 0, 1, 0, 10, [c])
    assert list(one) == [make_ref("srv-x", 0, 1, 0, 10 + len(c.tail), c.digest)]
    with pytest.raises(IndexError):
        one[1]


# --- ServerJournal.append_inbound_batch_nowait: refusals ---------------------------------------


class State:
    """What a refused batch must leave unchanged."""

    def __init__(self, server: ServerJournal) -> None:
        self.values = self.read(server)

    @staticmethod
    def read(server: ServerJournal) -> tuple[int, int, int, int]:
        return (server.last_sequence, server.total_bytes, server.segment, server.synced_sequence)


def _refuse(server: ServerJournal, messages: list[Message], largest: int | None = None) -> None:
    before = State.read(server)
    largest = max(map(_size, messages), default=0) if largest is None else largest
    assert server.append_inbound_batch_nowait(messages, largest) is None
    assert State.read(server) == before


def _accept(
    server: ServerJournal, messages: list[Message], largest: int | None = None
) -> InboundRefs:
    first = server.last_sequence + 1
    largest = max(map(_size, messages)) if largest is None else largest
    refs = server.append_inbound_batch_nowait(messages, largest)
    assert refs is not None
    assert len(refs) == len(messages)
    assert [r.sequence for r in refs] == list(range(first, first + len(messages)))
    assert server.last_sequence == first + len(messages) - 1
    return refs


async def _single(server: ServerJournal, message: Message) -> JournalRef:
    ref = server.append_inbound_nowait(message, input_bytes=_size(message))
    if ref is None:
        ref = await server.append("inbound", message, input_bytes=_size(message))
    return ref


async def _singles_until(server: ServerJournal, sequence: int, message: Message) -> None:
    while server.last_sequence < sequence:
        await _single(server, message)


async def _close_and_check(
    journal: Journal, server: ServerJournal, expected: dict[int, Message]
) -> None:
    """Close, then check the journal holds exactly the records in ``expected`` (by sequence)."""
    await server.close()
    records = list(journal.records(SERVER))
    assert [r.sequence for r in records] == sorted(expected)
    for record in records:
        _assert_full_redaction(record, expected[record.sequence], None)


async def test_refused_when_empty(journal: Journal) -> None:
    server = await journal.open_server(SERVER, limits=NO_TIMER)
    await _single(server, _chunk("a"))
    _refuse(server, [], 0)
    _refuse(server, [], 10)
    await _close_and_check(journal, server, {1: _chunk("a")})


async def test_refused_when_a_body_is_not_cached(journal: Journal) -> None:
    server = await journal.open_server(SERVER, limits=NO_TIMER)
    cached, other = _chunk("a"), _chunk("b", "m2")
    await _single(server, cached)
    for stranger in [other, _request(1), NOT_SIMPLE["null-stream"], NOT_SIMPLE["params-list"]]:
        _refuse(server, [stranger])
        _refuse(server, [stranger, cached])
    # Once its body is cached, the same batch goes through.
    await server.append("inbound", other, input_bytes=_size(other))
    refs = _accept(server, [cached, cached, other])
    assert [r.sequence for r in refs] == [3, 4, 5]
    await _close_and_check(journal, server, {1: cached, 2: other, 3: cached, 4: cached, 5: other})


async def test_a_batch_takes_the_leading_part_up_to_a_body_not_cached(journal: Journal) -> None:
    server = await journal.open_server(SERVER, limits=NO_TIMER)
    cached = _chunk("a")
    await _single(server, cached)
    for stranger in [_chunk("b", "m2"), _request(1), NOT_SIMPLE["null-stream"]]:
        before = server.last_sequence
        batch = [cached, cached, stranger, cached]
        refs = server.append_inbound_batch_nowait(batch, max(map(_size, batch)))
        assert refs is not None and len(refs) == 2  # the stranger and what follows: not taken
        assert [r.sequence for r in refs] == [before + 1, before + 2]
        assert server.last_sequence == before + 2
    await _close_and_check(journal, server, dict.fromkeys(range(1, 8), cached))


async def test_a_body_cached_by_an_outbound_append_serves_inbound_batches(
    journal: Journal,
) -> None:
    server = await journal.open_server(SERVER, limits=NO_TIMER)
    await _single(server, _request(0))  # an inbound record (no shape)
    message = _chunk("o")
    await server.append("outbound", message, input_bytes=_size(message))
    refs = _accept(server, [message, message])
    await server.close()
    records = list(journal.records(SERVER))
    assert [r.direction for r in records] == ["inbound", "outbound", "inbound", "inbound"]
    for ref, record in zip(refs, records[2:], strict=True):
        _assert_full_redaction(record, message, None)
        assert journal.read(ref) == record


@pytest.mark.parametrize("delta", [0, 1])
async def test_refused_over_the_entry_bound(journal: Journal, delta: int) -> None:
    bound = 2000
    server = await journal.open_server(
        SERVER, limits=JournalLimits(sync_interval_seconds=3600, max_entry_bytes=bound)
    )
    message = _chunk("a")
    await _single(server, message)
    if delta:
        _refuse(server, [message, message], bound + delta)
        _refuse(server, [message], 10**9)
    else:
        _accept(server, [message, message], bound)
    assert server.last_sequence == (1 if delta else 3)
    await server.close()


async def test_refused_across_a_sequence_digit_boundary(journal: Journal) -> None:
    server = await journal.open_server(SERVER, limits=NO_TIMER)
    m = _chunk("a")
    refs: dict[int, JournalRef] = {}
    await _singles_until(server, 8, m)
    _refuse(server, [m, m])  # 9, 10
    _refuse(server, [m] * 5)
    refs[9] = _accept(server, [m])[0]  # 9 has one digit
    _refuse(server, [m])  # 10
    refs[10] = await _single(server, m)
    _refuse(server, [m] * 90)  # 11..100
    batch = _accept(server, [m] * 89)  # 11..99
    refs.update({r.sequence: r for r in batch})
    _refuse(server, [m])  # 100
    refs[100] = await _single(server, m)
    refs[101] = _accept(server, [m])[0]
    assert refs[9].byte_length + 1 == refs[10].byte_length == refs[99].byte_length
    assert refs[101].byte_length == refs[10].byte_length + 1
    await server.close()
    records = list(journal.records(SERVER))
    assert [r.sequence for r in records] == list(range(1, 102))
    for sequence, ref in refs.items():
        assert journal.read(ref) == records[sequence - 1]


async def test_refused_at_the_segment_end(journal: Journal) -> None:
    m = _chunk("a")
    # Sequences 1..10 as singles, then room in segment 0 for exactly 10 more lines and 4 bytes
    # (a batch must end before the segment bound; a line may not reach it with its newline).
    primed = sum(_line_length(s, m) + 1 for s in range(1, 11))
    step = _line_length(11, m) + 1
    bound = primed + 10 * step + 4
    server = await journal.open_server(
        SERVER, limits=JournalLimits(sync_interval_seconds=3600, max_segment_bytes=bound)
    )
    await _singles_until(server, 10, m)
    assert server.total_bytes == primed
    _refuse(server, [m] * 11)
    first = _accept(server, [m] * 7)
    _refuse(server, [m] * 4)
    second = _accept(server, [m] * 3)  # ends 4 bytes before the bound
    assert server.total_bytes == bound - 4 and server.segment == 0
    _refuse(server, [m])
    rotated = await _single(server, m)  # a single append starts the next segment
    assert (rotated.segment, rotated.byte_offset, rotated.sequence) == (1, 0, 21)
    third = _accept(server, [m] * 10)
    assert all(r.segment == 1 for r in third)
    assert [r.byte_offset for r in third] == [step * i for i in range(1, 11)]
    _refuse(server, [m] * 9)  # the new segment is nearly full again
    await server.close()
    records = list(journal.records(SERVER))
    assert [r.sequence for r in records] == list(range(1, 32))
    assert [r.segment for r in records] == [0] * 20 + [1] * 11
    for ref in [*first, *second, rotated, *third]:
        assert journal.read(ref) == records[ref.sequence - 1]
    sizes = sorted(p.stat().st_size for p in journal.directory.iterdir())
    assert sizes == sorted([bound - 4, 11 * step])


async def test_refused_over_the_record_bound(journal: Journal) -> None:
    # max_entry_bytes=1 allows record lines of 2 + 4096 bytes; a routing string of control
    # characters (escaped twice in the line: 7 bytes each) makes one longer although its frame
    # is declared small and its shape is small enough to be cached.
    server = await journal.open_server(
        SERVER, limits=JournalLimits(sync_interval_seconds=3600, max_entry_bytes=1)
    )
    small, huge = _chunk("a"), _chunk("b", "\x01" * 900)
    assert _line_length(1, huge) > server.limits.max_record_bytes
    await server.append("inbound", small, input_bytes=1)
    with pytest.raises(JournalEntryTooLarge):
        await server.append("inbound", huge, input_bytes=1)
    assert server.last_sequence == 1
    # Its body is cached (the refusal below is the record bound, not a cache miss).
    assert values_by_shape([huge], server._bodies.get) is not None
    _refuse(server, [huge], 1)
    _refuse(server, [small, small, huge], 1)
    _accept(server, [small, small], 1)
    await _close_and_check(journal, server, {1: small, 2: small, 3: small})


async def test_refused_at_the_unsynced_bound(journal: Journal) -> None:
    m = _chunk("a")
    primed = sum(_line_length(s, m) + 1 for s in range(1, 11))
    step = _line_length(11, m) + 1
    # A batch of 10 would reach the bound; 9 stay below it (with room for any slack the
    # writer keeps for digits: a line is longer than that slack).
    bound = primed + 10 * step
    assert step > 64
    server = await journal.open_server(
        SERVER,
        limits=JournalLimits(
            sync_interval_seconds=3600, sync_batch_bytes=bound, max_unsynced_bytes=bound
        ),
    )
    await _singles_until(server, 10, m)
    assert server.synced_sequence == 0 and server.total_bytes == primed
    _refuse(server, [m] * 10)
    _accept(server, [m] * 9)
    _refuse(server, [m])
    assert server.synced_sequence == 0
    await server.flush()  # what counts is the unsynced part
    assert server.synced_sequence == 19
    _accept(server, [m] * 9)
    await _close_and_check(journal, server, dict.fromkeys(range(1, 29), m))


async def test_refused_when_the_journal_failed(
    journal: Journal, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = await journal.open_server(SERVER, limits=NO_TIMER)
    m = _chunk("a")
    await _single(server, m)
    _accept(server, [m, m])
    await server.flush()

    def failing_write(fd: int, data: object) -> int:
        raise OSError(errno.EIO, "Input/output error")

    real_write = os.writev
    monkeypatch.setattr(os, "writev", failing_write)
    with pytest.raises(JournalSyncFailed):
        await server.append("outbound", _request(1), input_bytes=100)
    monkeypatch.setattr(os, "writev", real_write)
    assert server.failure is not None
    _refuse(server, [m, m])
    assert server.append_inbound_nowait(m, input_bytes=_size(m)) is None
    await _close_and_check(journal, server, {1: m, 2: m, 3: m})


async def test_a_failed_write_during_a_batch_is_sticky(
    journal: Journal, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = await journal.open_server(SERVER, limits=NO_TIMER)
    m = _chunk("a")
    await _singles_until(server, 100, m)
    await server.flush()

    def failing_write(fd: int, data: object) -> int:
        raise OSError(errno.EIO, "Input/output error")

    real_write = os.writev
    monkeypatch.setattr(os, "writev", failing_write)
    # A batch the writer takes (three digits throughout) that fills the write buffer at once.
    count = WRITE_BUFFER_BYTES // (_line_length(101, m) + 1) + 1
    assert count < 899
    with pytest.raises(JournalSyncFailed):
        server.append_inbound_batch_nowait([m] * count, _size(m))
    monkeypatch.setattr(os, "writev", real_write)
    assert server.failure is not None
    _refuse(server, [m])
    with pytest.raises(JournalSyncFailed):
        await server.close()  # the batch's records were never durable
    assert journal.verify(SERVER).last_sequence == 100


async def test_refused_while_closing_and_after_close(journal: Journal) -> None:
    server = await journal.open_server(SERVER, limits=NO_TIMER)
    m = _chunk("a")
    await _single(server, m)
    closing = asyncio.create_task(server.close())
    await asyncio.sleep(0)
    assert server.closed
    _refuse(server, [m])
    await asyncio.wait_for(closing, 10)
    _refuse(server, [m])
    records = list(journal.records(SERVER))
    assert [r.sequence for r in records] == [1]


# --- ServerJournal.append_inbound_batch_nowait: what it records --------------------------------


def _pool() -> list[Message]:
    """Distinct simple shapes: every captured one, and routing values holding secrets."""
    pool = list({session_update_shape(m): m for m in SIMPLE}.values())
    for n, routing in enumerate(SECRET_ROUTING):
        pool.append(_delta(n, message_id=routing))
        pool.append(_delta(n, session=routing))
        pool.append(
            _samples.session_update(
                {"sessionUpdate": "tool_call_update", "toolCallId": routing, "status": "done"}
            )
        )
    return pool


def _stream(pool: list[Message], count: int) -> list[Message]:
    """``count`` messages of the pool's shapes, in runs of 1 to 4 of one shape."""
    messages: list[Message] = []
    for i, base in enumerate(cycle(pool)):
        for j in range(1 + i % 4):
            messages.append(
                _samples.restream(base, {"type": "text", "text": f"delta {i}.{j} {SECRET}"})
            )
        if len(messages) >= count:
            return messages[:count]
    raise AssertionError("unreachable")


Op = tuple[str, Any]


async def _run(server: ServerJournal, script: list[Op], *, batched: bool) -> list[JournalRef]:
    """Apply ``script``; batches go through the batch path (which must accept each) or one by
    one. Returns every record's reference in order."""
    refs: list[JournalRef] = []
    for kind, payload in script:
        if kind == "prime":
            refs.append(await server.append("inbound", payload, input_bytes=_size(payload)))
        elif kind == "single":
            refs.append(await _single(server, payload))
        elif kind == "outbound":
            refs.append(await server.append("outbound", payload, input_bytes=_size(payload)))
        elif kind == "skipped":
            refs.append(await server.append_skipped("inbound", "not JSON", payload))
        elif batched:
            batch = server.append_inbound_batch_nowait(payload, max(map(_size, payload)))
            assert batch is not None, f"a batch of {len(payload)} was refused"
            assert len(batch) == len(payload)
            refs.extend(batch)
        else:
            for message in payload:
                refs.append(await _single(server, message))
    return refs


def _expected(script: list[Op]) -> list[tuple[str, Message | None]]:
    out: list[tuple[str, Message | None]] = []
    for kind, payload in script:
        if kind == "batch":
            out += [("inbound", m) for m in payload]
        elif kind == "skipped":
            out.append(("inbound", None))
        else:
            out.append(("outbound" if kind == "outbound" else "inbound", payload))
    return out


async def _compare(
    tmp_path: Path,
    script: list[Op],
    *,
    secrets: SecretValues | None,
    clock: Callable[[], datetime] | None,
    limits: JournalLimits = NO_TIMER,
) -> tuple[Journal, list[JournalRef]]:
    """Run ``script`` batched and one by one in two journals; check the batched one's records
    against the full redaction and its refs against the one-by-one refs."""
    refs: dict[bool, list[JournalRef]] = {}
    journals: dict[bool, Journal] = {}
    for batched in (True, False):
        journals[batched] = journal = Journal(tmp_path / ("batched" if batched else "single"))
        extra = {} if clock is None else {"clock": clock}
        server = await journal.open_server(SERVER, secrets=secrets, limits=limits, **extra)
        refs[batched] = await _run(server, script, batched=batched)
        await server.close()
    # The same positions, lengths and hashes as appending them one at a time.
    assert refs[True] == refs[False]
    journal = journals[True]
    records = list(journal.records(SERVER))
    expected = _expected(script)
    assert [r.sequence for r in records] == list(range(1, len(expected) + 1))
    assert len(refs[True]) == len(records)
    for ref, record, (direction, message) in zip(refs[True], records, expected, strict=True):
        assert journal.read(ref) == record
        if message is None:
            assert record.metadata.kind == "skipped"
        else:
            _assert_full_redaction(record, message, secrets, direction)
    if clock is not None:  # the same record times: the same bytes
        for name in sorted(os.listdir(journals[True].directory)):
            batched_bytes = (journals[True].directory / name).read_bytes()
            assert batched_bytes == (journals[False].directory / name).read_bytes()
    return journal, refs[True]


@pytest.mark.parametrize("fixed_clock", [False, True], ids=["utc-now", "fixed-clock"])
@pytest.mark.parametrize("secrets", [None, SECRETS], ids=["plain", "secrets"])
async def test_batches_record_what_single_appends_record(
    tmp_path: Path, secrets: SecretValues | None, fixed_clock: bool
) -> None:
    pool = _pool()
    script: list[Op] = [("prime", m) for m in pool]  # every body cached
    filler = pool[0]
    script += [("single", filler)] * (100 - len(pool))  # sequences of three digits from 101
    messages = _stream(pool, 850)
    sizes = [1, 2, 3, 5, 8, 13, 40, 100, 200, 478]
    assert sum(sizes) == len(messages)
    start = 0
    for size in sizes:
        script.append(("batch", messages[start : start + size]))
        start += size
    assert len(pool) < 100
    await _compare(
        tmp_path, script, secrets=secrets, clock=(lambda: FIXED_MOMENT) if fixed_clock else None
    )


@pytest.mark.parametrize("secrets", [None, SECRETS], ids=["plain", "secrets"])
async def test_batches_interleaved_with_single_outbound_and_skipped_appends(
    tmp_path: Path, secrets: SecretValues | None
) -> None:
    pool = _pool()
    stream = _stream(pool, 300)
    script: list[Op] = [("prime", m) for m in pool]
    script += [("single", pool[1])] * (100 - len(pool))  # three-digit sequences from 101
    chunks = iter(stream[i : i + 15] for i in range(0, 300, 15))
    script += [
        ("batch", next(chunks)),
        ("single", stream[0]),
        ("batch", next(chunks)),
        ("outbound", _request(1)),
        ("batch", next(chunks)),
        ("batch", next(chunks)),
        ("skipped", 40),
        ("batch", next(chunks)),
        ("outbound", _delta(99, message_id=f"out-{SECRET}")),  # its body serves the next batch
        ("batch", [_delta(100, message_id=f"out-{SECRET}")] * 3 + next(chunks)),
        ("single", NOT_SIMPLE["int-routing"]),
        ("batch", next(chunks)),
        ("prime", _request(2)),
        ("batch", next(chunks)),
    ]
    await _compare(tmp_path, script, secrets=secrets, clock=lambda: FIXED_MOMENT)


async def test_batches_across_a_segment_rotation_match_single_appends(tmp_path: Path) -> None:
    """With small segments, batches that would reach a segment's end are refused (the caller
    then appends one by one, which rotates) and work again in the next segment."""
    m = _chunk("a")
    step = _line_length(50, m) + 1
    limits = JournalLimits(sync_interval_seconds=3600, max_segment_bytes=12 * step + step // 2)
    journal = Journal(tmp_path / "rotating")
    server = await journal.open_server(SERVER, limits=limits)
    await _singles_until(server, 10, m)
    refs: list[JournalRef] = []
    batched: list[JournalRef] = []
    refused = 0
    while server.segment < 4:
        before = server.last_sequence
        batch = server.append_inbound_batch_nowait([m] * 3, _size(m))
        if batch is None:
            assert server.last_sequence == before
            refused += 1
            for _ in range(3):
                refs.append(await _single(server, m))
        else:
            refs.extend(batch)
            batched.extend(batch)
    assert refused >= 3
    # Batches landed in every segment after a rotation (segment 0 is nearly full of primes).
    assert {r.segment for r in batched} >= {1, 2, 3}
    await server.close()
    records = list(journal.records(SERVER))
    assert [r.sequence for r in records] == list(range(1, server.last_sequence + 1))
    assert server.last_sequence < 100  # two digits throughout: no refusal was a digit boundary
    for ref in refs:
        assert journal.read(ref) == records[ref.sequence - 1]
    for name in os.listdir(journal.directory):
        assert (journal.directory / name).stat().st_size < limits.max_segment_bytes
    # The same refs as one-by-one appends (the comparison journal never batches).
    single = Journal(tmp_path / "single")
    other = await single.open_server(SERVER, limits=limits)
    await _singles_until(other, 10, m)
    assert [await _single(other, m) for _ in refs] == refs
    await other.close()


async def test_batch_records_share_one_recorded_at(journal: Journal) -> None:
    given: list[datetime] = []

    def clock() -> datetime:
        given.append(FIXED_MOMENT + timedelta(milliseconds=300 * len(given)))
        return given[-1]

    server = await journal.open_server(SERVER, limits=NO_TIMER, clock=clock)
    m = _chunk("a")
    await _single(server, m)
    await _single(server, m)
    calls_before = len(given)
    _accept(server, [m, _samples.restream(m, "b"), m, m])
    batch_moment = given[-1]
    assert len(given) > calls_before
    await _single(server, m)
    await server.close()
    stamps = [r.recorded_at for r in journal.records(SERVER)]
    assert stamps[2:6] == [format_timestamp(batch_moment)] * 4
    assert len({stamps[0], stamps[1], stamps[2], stamps[6]}) == 4  # singles get their own
    assert stamps[1] < stamps[2] < stamps[6]


async def _until(predicate: Callable[[], bool]) -> None:
    async with asyncio.timeout(WAIT):
        # Polling state the journal owns (no event to wait on), bounded by the timeout.
        while not predicate():  # noqa: ASYNC110
            await asyncio.sleep(0.005)


async def test_a_batch_arms_the_background_sync(journal: Journal) -> None:
    server = await journal.open_server(SERVER, limits=JournalLimits(sync_interval_seconds=0.02))
    m = _chunk("a")
    await _single(server, m)
    await _until(lambda: server.synced_sequence == 1)  # the background task synced it
    refs = _accept(server, [m] * 5)
    assert server.synced_sequence == 1
    await _until(lambda: server.synced_sequence == refs[-1].sequence)  # and the batch too
    await server.close()


async def test_a_batch_past_the_sync_batch_bytes_starts_a_sync(
    journal: Journal, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced = threading.Event()
    real = journal_files.sync_file

    def sync_file(fd: int) -> None:
        real(fd)
        synced.set()

    monkeypatch.setattr(journal_files, "sync_file", sync_file)
    m = _chunk("a")
    step = _line_length(5, m) + 1
    limits = JournalLimits(
        sync_interval_seconds=3600, sync_batch_bytes=3 * step, max_unsynced_bytes=1_000_000
    )
    server = await journal.open_server(SERVER, limits=limits)
    await _single(server, m)
    await asyncio.sleep(0.02)
    assert not synced.is_set()  # below the batch bound: nothing synced yet
    _accept(server, [m] * 4)
    # Block the loop thread (on purpose): the sync must already be running in its worker.
    assert synced.wait(WAIT)
    await _until(lambda: server.synced_sequence == 5)
    await server.close()


async def test_a_batch_past_the_write_buffer_writes_it(journal: Journal) -> None:
    m = _chunk("a" * 100)
    server = await journal.open_server(SERVER, limits=NO_TIMER)
    await _singles_until(server, 100, m)
    path = journal.directory / f"{SERVER}.0.ndjson"
    written = path.stat().st_size
    assert written < server.total_bytes  # the singles are still buffered
    count = WRITE_BUFFER_BYTES // (_line_length(101, m) + 1) + 1
    _accept(server, [m] * count)
    # No await since: the batch itself wrote the buffer once it held WRITE_BUFFER_BYTES.
    assert path.stat().st_size == server.total_bytes > WRITE_BUFFER_BYTES
    await server.close()


async def test_batches_keep_the_disk_budget(journal: Journal) -> None:
    m = _chunk("a")
    step = _line_length(50, m) + 1
    segment_bytes = 12 * step + step // 2
    limits = JournalLimits(
        sync_interval_seconds=3600,
        max_segment_bytes=segment_bytes,
        max_total_bytes=2 * segment_bytes + step,
    )
    server = await journal.open_server(SERVER, limits=limits)
    await _singles_until(server, 10, m)
    refs: list[JournalRef] = []
    pruned_by_a_batch = False
    while server.last_sequence < 90:
        oldest = min(int(n.split(".")[1]) for n in os.listdir(journal.directory))
        batch = server.append_inbound_batch_nowait([m] * 3, _size(m))
        if batch is None:
            refs += [await _single(server, m) for _ in range(3)]
        else:
            refs += batch
            pruned_by_a_batch |= oldest < min(
                int(n.split(".")[1]) for n in os.listdir(journal.directory)
            )
        assert server.total_bytes <= limits.max_total_bytes
    assert pruned_by_a_batch
    await server.close()
    with pytest.raises(JournalEntryPruned):
        journal.read(refs[0])
    kept = list(journal.records(SERVER))
    assert kept[-1].sequence == server.last_sequence
    for record in kept:
        if record.sequence > 10:
            assert journal.read(refs[record.sequence - 11]) == record


# --- JournalTap.record_inbound ----------------------------------------------------------------


async def test_the_tap_passes_the_longest_frame(journal: Journal) -> None:
    messages = [_chunk("a"), _chunk("b", "m" * 300), _chunk("c")]
    raws = [orjson.dumps(m) for m in messages]
    longest = max(map(len, raws))
    assert longest == len(raws[1]) > len(raws[0])
    for server_id, bound, accepted in (("srv-a", longest, True), ("srv-b", longest - 1, False)):
        server = await journal.open_server(
            server_id, limits=JournalLimits(sync_interval_seconds=3600, max_entry_bytes=bound)
        )
        for message in messages:
            await server.append("inbound", message, input_bytes=len(raws[0]))
        tap = JournalTap(server)
        refs: object = None
        if accepted:
            refs = await tap.record_inbound(raws, messages)
            assert isinstance(refs, InboundRefs)  # the batch path took the whole run
        else:
            # The batch path declines (the longest frame is over the bound); one by one, the
            # frame over the bound is refused before anything of it is recorded.
            with pytest.raises(JournalEntryTooLarge):
                await tap.record_inbound(raws, messages)
        assert server.last_sequence == (6 if accepted else 4)
        await server.close()
        if isinstance(refs, InboundRefs):
            records = list(journal.records(server_id))[3:]
            assert [journal.read(ref) for ref in refs] == records
            for record, message in zip(records, messages, strict=True):
                _assert_full_redaction(record, message, None)
    await server.close()
