"""The sans-I/O JSON-RPC peer: lines in, events out; ids, tables, violations and flood bounds."""

from __future__ import annotations

import itertools
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from baton.errors import OutboundFrameTooLarge
from baton.wire import jsonrpc
from baton.wire.peer import (
    MAX_ABANDONED_IDS,
    MAX_AGENT_REQUESTS_IN_FLIGHT,
    MAX_KEPT_VIOLATIONS,
    MAX_OWED_REPLIES,
    REQUEST_FLOOD,
    TOO_MANY_REQUESTS,
    AgentRequest,
    Broken,
    LateReply,
    Notification,
    Notifications,
    Peer,
    RefusedRequest,
    Reply,
    SkippedLine,
)

Message = dict[str, Any]


def line(message: object) -> bytes:
    return orjson.dumps(message)


def note(n: int, method: str = "session/update") -> bytes:
    return line({"jsonrpc": "2.0", "method": method, "params": {"n": n}})


def ask(request_id: object, method: str = "session/request_permission") -> bytes:
    return line({"jsonrpc": "2.0", "id": request_id, "method": method, "params": {}})


def answer(request_id: object, result: object = None) -> bytes:
    return line({"jsonrpc": "2.0", "id": request_id, "result": result or {}})


def test_baton_ids_are_integers_from_one_and_pending_until_answered() -> None:
    peer = Peer()
    first, message, data = peer.request("initialize", {"protocolVersion": 1})
    second, _, _ = peer.request("session/new")
    assert (first, second) == (1, 2)
    assert (
        orjson.loads(data)
        == message
        == {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": 1},
        }
    )
    assert data.endswith(b"\n")
    assert peer.is_pending(1) and peer.method_of(2) == "session/new"
    (event,) = peer.receive([answer(1, {"ok": 1})])
    assert isinstance(event, Reply)
    assert (event.request_id, event.method, event.result, event.error) == (
        1,
        "initialize",
        {"ok": 1},
        None,
    )
    assert not peer.is_pending(1)
    assert peer.frames_in == 1


def test_an_oversized_request_is_refused_before_its_id_is_pending() -> None:
    peer = Peer(max_frame_bytes=64)
    with pytest.raises(OutboundFrameTooLarge):
        peer.request("session/prompt", {"text": "x" * 100})
    assert not peer.is_pending(1)
    request_id, _, _ = peer.request("ping")
    assert request_id == 1  # the refused request used no id


def test_an_error_answer_carries_its_error_object() -> None:
    peer = Peer()
    peer.request("session/new")
    error = {"code": -32000, "message": "Authentication required"}
    (event,) = peer.receive([line({"jsonrpc": "2.0", "id": 1, "error": error})])
    assert isinstance(event, Reply)
    assert event.error == error


def test_answers_to_abandoned_ids_are_late_others_are_violations() -> None:
    peer = Peer()
    peer.request("session/set_mode")
    peer.abandon(1)
    assert not peer.is_pending(1)
    late, unknown, again = peer.receive([answer(1), answer(7), answer(1)])
    assert isinstance(late, LateReply) and late.request_id == 1
    assert peer.late_responses == 1
    # An id never sent, and a second answer to an abandoned id, are violations (kept as they
    # are in the journal: the frame is a valid envelope used wrongly).
    assert isinstance(unknown, Broken) and not unknown.marked
    assert unknown.violation.kind == "unknown_response_id"
    assert isinstance(again, Broken)
    assert peer.violation_count == 2


def test_forgotten_ids_are_not_late() -> None:
    peer = Peer()
    peer.request("session/new")
    peer.forget(1)  # its write failed: never sent
    (event,) = peer.receive([answer(1)])
    assert isinstance(event, Broken)


def test_abandoned_ids_are_bounded_oldest_forgotten() -> None:
    peer = Peer()
    for _ in range(MAX_ABANDONED_IDS + 1):
        request_id, _, _ = peer.request("ping")
        peer.abandon(request_id)
    oldest, newest = peer.receive([answer(1), answer(MAX_ABANDONED_IDS + 1)])
    assert isinstance(oldest, Broken)  # forgotten: now an id the peer does not know
    assert isinstance(newest, LateReply)


@pytest.mark.parametrize("agent_id", [0, -1, "0", "", "perm-7", "6f1c2d9e-aaaa-bbbb-cccc-0123"])
def test_agent_ids_are_echoed_exactly(agent_id: object) -> None:
    peer = Peer()
    (event,) = peer.receive([ask(agent_id)])
    assert isinstance(event, AgentRequest)
    assert event.id == agent_id and type(event.id) is type(agent_id)
    assert peer.agent_requests == [agent_id]
    message, data = peer.reply(event.id, {"outcome": "x"})
    assert orjson.loads(data)["id"] == agent_id
    assert message["id"] == agent_id
    assert peer.agent_requests == []


def test_agent_ids_and_baton_ids_live_in_separate_tables() -> None:
    peer = Peer()
    peer.request("session/prompt")  # Baton's id 1
    request, reply = peer.receive([ask(1), answer(1)])
    assert isinstance(request, AgentRequest) and request.id == 1
    assert isinstance(reply, Reply) and reply.request_id == 1
    assert peer.agent_requests == [1]


def test_a_reused_agent_id_is_a_violation() -> None:
    peer = Peer()
    first, second = peer.receive([ask("a"), ask("a")])
    assert isinstance(first, AgentRequest)
    assert isinstance(second, Broken) and second.violation.kind == "duplicate_request_id"


def test_consecutive_notifications_of_a_grouped_method_are_one_event() -> None:
    peer = Peer()
    peer.group("session/update")
    peer.request("session/prompt")
    events = list(
        peer.receive(
            [
                note(0),
                note(1),
                note(2, "_x.ai/models/update"),
                note(3),
                b"",
                note(4),
                answer(1),
                note(5),
                note(6, "_other"),
                note(7, "_other"),
            ]
        )
    )
    kinds = [
        (type(e).__name__, [m["params"]["n"] for m in e.messages])
        if isinstance(e, Notifications)
        else (type(e).__name__, [])
        for e in events
    ]
    assert kinds == [
        ("Notifications", [0, 1]),
        ("Notification", []),  # _x.ai/models/update is not grouped: one Notification event
        ("Notifications", [3, 4]),  # a blank line is a separator, not a frame
        ("Reply", []),
        ("Notifications", [5]),
        ("Notification", []),  # a method that is not grouped: one event per notification
        ("Notification", []),
    ]
    first = events[0]
    assert isinstance(first, Notifications)
    assert first.raws == [note(0), note(1)]
    assert peer.frames_in == 9


def test_events_are_decoded_as_they_are_pulled() -> None:
    peer = Peer()
    events = peer.receive([note(0), b"not json", note(1)])
    assert peer.frames_in == 0  # nothing decoded before the first pull
    first = next(events)
    assert isinstance(first, Notification)
    assert (first.method, first.message, first.raw) == (
        "session/update",
        orjson.loads(note(0)),
        note(0),
    )
    kept = first.copy()
    assert (peer.frames_in, peer.skipped_frames) == (1, 0)
    rest = [next(events), next(events)]
    assert [type(e) for e in rest] == [SkippedLine, Notification]
    # The plain notification is reused: it now holds the next one; the copy kept the first.
    assert rest[1] is first and first.raw == note(1)
    assert (kept.method, kept.raw) == ("session/update", note(0))
    assert (peer.frames_in, peer.skipped_frames) == (2, 1)


def test_lines_that_are_not_messages_are_skipped_and_counted() -> None:
    peer = Peer()
    events = list(
        peer.receive(
            [b"not json", b"[1]", b'{"jsonrpc":"1.0"}', b'{"jsonrpc":"2.0"}', b"   ", b"\xff\xfe"]
        )
    )
    reasons = [e.skipped.reason for e in events if isinstance(e, SkippedLine)]
    assert reasons == [
        "invalid_json",
        "not_an_object",
        "not_jsonrpc_2",
        "not_an_envelope",
        "invalid_json",
    ]
    assert peer.skipped_frames == 5
    assert peer.frames_in == 0


def test_malformed_envelopes_are_marked_violations() -> None:
    peer = Peer()
    (event,) = peer.receive([b'{"jsonrpc":"2.0","id":3,"result":1,"error":{"code":1}}'])
    assert isinstance(event, Broken) and event.marked
    assert event.violation.kind == "result_and_error"
    assert [v.kind for v in peer.violations] == ["result_and_error"]


def test_kept_violations_are_bounded_all_counted() -> None:
    peer = Peer()
    list(peer.receive([answer(1000 + n) for n in range(MAX_KEPT_VIOLATIONS + 10)]))
    assert peer.violation_count == MAX_KEPT_VIOLATIONS + 10
    assert len(peer.violations) == MAX_KEPT_VIOLATIONS
    assert "1010" in str(peer.violations[0])  # the oldest were dropped


def test_requests_over_the_in_flight_bound_are_refused_with_owed_replies() -> None:
    peer = Peer()
    accepted = list(peer.receive([ask(n) for n in range(MAX_AGENT_REQUESTS_IN_FLIGHT)]))
    assert all(isinstance(e, AgentRequest) for e in accepted)
    (refused,) = peer.receive([ask("over")])
    assert isinstance(refused, RefusedRequest) and refused.violation is None
    assert peer.owes_replies
    ((message, data),) = peer.take_owed_replies()
    assert message == jsonrpc.error_response("over", jsonrpc.INTERNAL_ERROR, TOO_MANY_REQUESTS)
    assert orjson.loads(data) == message
    assert not peer.owes_replies
    # Answering one makes room again.
    peer.reply(0, {})
    (event,) = peer.receive([ask("room")])
    assert isinstance(event, AgentRequest)


def test_a_pipelined_flood_is_bounded_and_a_violation() -> None:
    # 100,000 pipelined requests: the in-flight table and the owed backlog stay bounded, the
    # excess is a violation per frame (counted; the kept list is bounded too).
    peer = Peer()
    flood = 100_000
    refused_with_reply = 0
    floods = 0
    for start in range(0, flood, 1000):
        for event in peer.receive([ask(n) for n in range(start, start + 1000)]):
            if isinstance(event, RefusedRequest):
                if event.violation is None:
                    refused_with_reply += 1
                else:
                    assert event.violation.kind == REQUEST_FLOOD
                    floods += 1
    assert len(peer.agent_requests) == MAX_AGENT_REQUESTS_IN_FLIGHT
    assert refused_with_reply == MAX_OWED_REPLIES
    assert floods == flood - MAX_AGENT_REQUESTS_IN_FLIGHT - MAX_OWED_REPLIES
    assert peer.violation_count == floods
    assert len(peer.violations) == MAX_KEPT_VIOLATIONS
    assert len(peer.take_owed_replies()) == MAX_OWED_REPLIES


def test_a_cancel_request_names_an_in_flight_request_only() -> None:
    peer = Peer()
    list(peer.receive([ask("p1")]))

    def cancel(target: object) -> Message:
        return {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": target}}

    assert peer.cancel_target(cancel("p1")) == "p1"
    assert peer.cancel_target(cancel("p2")) is None
    assert peer.cancel_target(cancel(True)) is None
    assert peer.cancel_target({"jsonrpc": "2.0", "method": "$/cancel_request"}) is None


def test_a_reply_too_large_for_a_frame_becomes_an_internal_error() -> None:
    peer = Peer(max_frame_bytes=200)
    list(peer.receive([ask(5)]))
    message, _data = peer.reply(5, {"text": "x" * 500})
    assert message["error"]["code"] == jsonrpc.INTERNAL_ERROR
    assert peer.agent_requests == []


_frames = st.one_of(
    st.integers(0, 9).map(note),
    st.integers(0, 3).map(lambda n: note(n, "_other")),
    st.integers(0, 5).map(answer),
    st.sampled_from([0, "a", 1]).map(ask),
    st.sampled_from([b"", b"junk", b"[]", b'{"jsonrpc":"2.0"}']),
)


@given(st.lists(_frames, max_size=40))
def test_events_cover_every_frame_in_order(frames: list[bytes]) -> None:
    peer = Peer()
    peer.group("session/update")
    for _ in range(3):
        peer.request("ping")
    covered: list[bytes] = []
    events: list[object] = []
    for event in peer.receive(frames):  # pulled one by one: a Notification is reused
        events.append(event)
        if isinstance(event, Notifications):
            assert len({m["method"] for m in event.messages}) == 1
            covered.extend(event.raws)
        elif isinstance(event, Notification):
            assert event.method == "_other"
            covered.append(event.raw)
        else:
            covered.append(event.raw)
    assert covered == [f for f in frames if f.strip()]
    # Two grouped notification events in a row never share a method (else they would be one).
    for before, after in itertools.pairwise(events):
        if isinstance(before, Notifications) and isinstance(after, Notifications):
            assert before.method != after.method
    skipped = sum(isinstance(e, SkippedLine) for e in events)
    assert peer.frames_in + skipped == len(covered)
