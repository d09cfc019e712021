"""The journal's fast path for simple session/update frames gives exactly the slow path's records.

``session_update_shape`` is the cache key the writer reuses a record body under: two messages
with the same shape must redact identically, and a journal that hits its cache must store the
same raw text, metadata and hash as redacting each message in full.
"""

from __future__ import annotations

from typing import Any

import capture_samples as _samples
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from baton.journal import Journal, JournalLimits, SecretValues
from baton.journal.limits import MAX_CACHED_RECORD_BODIES
from baton.journal.records import metadata_for
from baton.redaction import STREAM_FIELDS, redact_frame_message
from baton.redaction.frames import MAX_SHAPE_CHARS, session_update_shape, shape_chars

#: Limits whose background sync never fires during a test.
NO_TIMER = JournalLimits(sync_interval_seconds=3600)
#: An exact secret a profile would carry; it shows up in routing fields below.
SECRET = "hunter2-super-secret-value"
SECRETS = SecretValues([SECRET])

#: Routing values that must be redacted even on the fast path (shapes, exact secrets, keys).
SECRET_ROUTING = [
    "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789",
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "Bearer abcdefghijklmnop1234567890",
    "api_key=abcdefghijklmnop",
    "https://user:pa55word@example.com/x",
    f"session-{SECRET}",
    "AKIAABCDEFGHIJKLMNOP",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig",
]


FRAMES = _samples.transcript_messages()
UPDATES = [f for f in FRAMES if f.get("method") == "session/update"]


def test_the_captures_have_simple_updates_to_test() -> None:
    simple = [m for m in UPDATES if session_update_shape(m) is not None]
    assert len(UPDATES) > 50
    assert len(simple) > 20  # the bulk of a turn takes the fast path


@pytest.mark.parametrize("index", range(len(UPDATES)))
@pytest.mark.parametrize("secrets", [None, SECRETS], ids=["plain", "secrets"])
def test_same_shape_same_redaction_on_real_updates(
    index: int, secrets: SecretValues | None
) -> None:
    message = UPDATES[index]
    shape = session_update_shape(message)
    if shape is None:
        return  # not simple: always redacted in full
    for filler in ({"type": "text", "text": f"Bearer {'x' * 30} {SECRET}"}, "", [1, {"a": 2}]):
        other = _samples.restream(message, filler)
        assert session_update_shape(other) == shape
        assert redact_frame_message(other, secrets) == redact_frame_message(message, secrets)


@pytest.mark.parametrize("frame", FRAMES, ids=lambda f: str(f.get("method", "response")))
def test_only_session_updates_have_a_shape(frame: dict[str, Any]) -> None:
    if frame.get("method") != "session/update":
        assert session_update_shape(frame) is None


@pytest.mark.parametrize(
    "message",
    [
        _samples.session_update({"sessionUpdate": "usage_update", "used": 1, "size": 2}),  # numbers
        _samples.session_update(
            {"sessionUpdate": "agent_message_chunk", "content": None}
        ),  # null stream
        _samples.session_update(
            {"sessionUpdate": "tool_call", "locations": [{"path": "/a"}]}
        ),  # nested
        _samples.session_update({"sessionUpdate": "x", "_meta": {"token": "abc"}}),
        {**_samples.session_update({"sessionUpdate": "x"}), "id": 3},
        {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s"}},
        {"jsonrpc": "2.0", "method": "session/update", "params": {"update": "bare text"}},
        {"jsonrpc": "2.0", "method": "session/update", "params": ["positional"]},
        {"jsonrpc": "2.0", "method": "other", "params": {"update": {"content": "c"}}},
        {**_samples.session_update({"sessionUpdate": "x"}), "jsonrpc": 2},
        {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": 1, "update": {}}},
    ],
)
def test_anything_not_simple_has_no_shape(message: dict[str, Any]) -> None:
    assert session_update_shape(message) is None


def test_the_usual_envelope_and_a_walked_one_never_share_a_shape() -> None:
    usual = _samples.session_update({"sessionUpdate": "x"})
    walked = {**usual, "extra": "y"}
    reordered = {"method": usual["method"], "jsonrpc": "2.0", "params": usual["params"]}
    shapes = [session_update_shape(m) for m in (usual, walked, reordered)]
    assert None not in shapes and len(set(shapes)) == 3
    # Every key and string counts: jsonrpc method params 2.0 sessionId update sess-1
    # sessionUpdate x.
    assert shapes[0] is not None and shape_chars(shapes[0]) == 7 + 6 + 6 + 3 + 9 + 6 + 6 + 13 + 1


async def test_shapes_over_the_size_bound_are_not_cached(journal: Journal) -> None:
    server = await journal.open_server("srv-1", limits=NO_TIMER)
    huge = _samples.session_update({"sessionUpdate": "x", "messageId": "m" * (MAX_SHAPE_CHARS + 1)})
    shape = session_update_shape(huge)
    assert shape is not None and shape_chars(shape) > MAX_SHAPE_CHARS
    ref = await server.append("inbound", huge, input_bytes=2000)
    assert server._bodies == {}  # redacted in full, not kept
    await server.close()
    assert journal.read(ref).message() == redact_frame_message(huge)


def test_a_shape_token_never_equals_a_string() -> None:
    # Shapes hold strings only; a token never equals a string a message holds.
    a = _samples.session_update({"sessionUpdate": "x", "messageId": "<stream>"})
    b = _samples.session_update({"sessionUpdate": "x", "content": "text"})
    assert session_update_shape(a) != session_update_shape(b)


routing_text = st.one_of(st.sampled_from(SECRET_ROUTING), st.text(max_size=40))
stream_value = st.recursive(
    st.one_of(st.text(max_size=30), st.integers(), st.booleans()),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(), inner)),
    max_leaves=6,
)
routing_key = st.one_of(
    st.sampled_from(
        ["sessionUpdate", "messageId", "toolCallId", "status", "kind", "apiKey", "email", "name"]
    ),
    st.text(min_size=1, max_size=12),
)


@st.composite
def simple_updates(draw: st.DrawFn) -> dict[str, Any]:
    update: dict[str, Any] = {}
    for key in draw(st.lists(routing_key, max_size=5, unique=True)):
        if key in STREAM_FIELDS:
            update[key] = draw(stream_value.filter(lambda v: v is not None))
        else:
            update[key] = draw(routing_text)
    for key in draw(st.lists(st.sampled_from(sorted(STREAM_FIELDS)), max_size=3, unique=True)):
        update[key] = draw(stream_value)
    return _samples.session_update(update, session=draw(routing_text))


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(simple_updates(), stream_value)
def test_same_shape_same_redaction_on_generated_updates(
    message: dict[str, Any], filler: Any
) -> None:
    shape = session_update_shape(message)
    assert shape is not None
    other = _samples.restream(message, filler)
    assert session_update_shape(other) == shape
    for secrets in (None, SECRETS):
        assert redact_frame_message(other, secrets) == redact_frame_message(message, secrets)


def _stream_of_messages() -> list[dict[str, Any]]:
    """Real updates, then generated deltas with secrets in routing fields, many repeated."""
    messages: list[dict[str, Any]] = list(UPDATES)
    for n in range(200):
        routing = SECRET_ROUTING[n % len(SECRET_ROUTING)]
        messages.append(
            _samples.session_update(
                {
                    "sessionUpdate": "agent_message_chunk",
                    "messageId": routing if n % 3 else f"msg-{n % 5}",
                    "content": {"type": "text", "text": f"delta {n} {SECRET} "},
                },
                session=routing if n % 7 == 0 else "sess-1",
            )
        )
    # More distinct shapes than the cache holds, so entries are evicted and recomputed.
    for n in range(MAX_CACHED_RECORD_BODIES + 10):
        messages.append(
            _samples.session_update({"sessionUpdate": "agent_thought_chunk", "messageId": f"t{n}"})
        )
    return messages + messages[:50]


@pytest.mark.parametrize("secrets", [None, SECRETS], ids=["plain", "secrets"])
async def test_journal_records_equal_the_full_redaction(
    journal: Journal, secrets: SecretValues | None
) -> None:
    server = await journal.open_server("srv-1", secrets=secrets, limits=NO_TIMER)
    messages = _stream_of_messages()
    refs = [await server.append("inbound", m, input_bytes=100) for m in messages]
    await server.close()
    records = list(journal.records("srv-1"))
    assert [r.sequence for r in records] == list(range(1, len(messages) + 1))
    for message, ref, record in zip(messages, refs, records, strict=True):
        redacted = redact_frame_message(message, secrets)
        assert record.raw == orjson.dumps(redacted).decode()
        assert record.metadata == metadata_for(redacted)
        assert record.sha256 == ref.sha256
        assert secrets is None or SECRET not in record.raw
        assert journal.read(ref) == record
    assert len(server._bodies) <= MAX_CACHED_RECORD_BODIES  # the cache stays bounded


async def test_records_are_readable_in_process_before_any_sync(journal: Journal) -> None:
    server = await journal.open_server("srv-1", limits=NO_TIMER)
    ref = await server.append(
        "inbound", _samples.session_update({"sessionUpdate": "x"}), input_bytes=80
    )
    assert server.synced_sequence < ref.sequence  # buffered, not synced
    assert journal.read(ref).sequence == ref.sequence  # the reader wrote the buffer first
    assert journal.tail("srv-1")[-1].sequence == ref.sequence
    await server.close()
