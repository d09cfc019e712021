"""A sans-I/O JSON-RPC peer: lines in, events out; calls in, lines out.

Like h11 and websockets, :class:`Peer` does no I/O and keeps no clock: the asyncio
:class:`~baton.connection.core.Connection` reads lines, hands them to :meth:`Peer.receive`, and
acts on the events it gets back (journal, dispatch, resolve); it asks the peer for the lines it
writes (:meth:`Peer.request`, :meth:`Peer.notification`, :meth:`Peer.reply`,
:meth:`Peer.take_owed_replies`).

What the peer owns:

- Baton's request ids (integers from 1), which of them are pending and for which method, and
  the ids whose wait was abandoned (bounded, oldest forgotten): a late answer to one is dropped
  and counted, an answer to an id never sent is a violation;
- the table of the agent's requests in flight, keyed by the agent's own ids (echoed exactly);
- violations: classified (:func:`baton.wire.jsonrpc.classify` and the peer's own checks),
  counted, the newest kept (bounded);
- grouping: consecutive notifications of one grouped method (:meth:`Peer.group`) in one read
  become one event;
- two bounds against a flooding agent. At most :data:`MAX_AGENT_REQUESTS_IN_FLIGHT` agent
  requests are handled at once; one beyond that is refused with a -32603 reply the peer owes.
  Owed replies wait in a backlog of at most :data:`MAX_OWED_REPLIES` (an agent that pipelines
  requests faster than it reads the refusals fills it); a request refused when the backlog is
  full gets no reply and is a ``request_flood`` violation. So 100,000 pipelined permission
  requests cost at most the bounded backlog, never memory in proportion to the flood.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

import orjson

from baton.errors import ProtocolViolation
from baton.wire import jsonrpc
from baton.wire.framing import DEFAULT_MAX_FRAME_BYTES
from baton.wire.jsonrpc import Kind, Message, RequestId, Skipped, Violation

#: Ids whose wait was abandoned, remembered so their late answers are dropped and counted
#: rather than reported as answers to ids never sent. Oldest forgotten first.
MAX_ABANDONED_IDS: Final = 256

#: Protocol violations kept for diagnostics (all are counted). Bounds the memory an agent that
#: violates the protocol in a loop can make Baton hold.
MAX_KEPT_VIOLATIONS: Final = 64

#: Agent requests handled at once (each is a task that may wait for a person). More is a
#: misbehaving agent: refused with a -32603 reply.
MAX_AGENT_REQUESTS_IN_FLIGHT: Final = 64

#: Refusal replies owed and not yet written. Bounds the memory of an agent that pipelines
#: requests and does not read Baton's answers; a refusal beyond it is a violation instead.
MAX_OWED_REPLIES: Final = 64

#: The text of the reply to a request refused beyond :data:`MAX_AGENT_REQUESTS_IN_FLIGHT`.
TOO_MANY_REQUESTS: Final = "too many concurrent requests"

#: The violation kind of a request refused while the owed-reply backlog is full.
REQUEST_FLOOD: Final = "request_flood"

_loads = orjson.loads
_DecodeError = orjson.JSONDecodeError

#: What a line that is not JSON decodes to (``None`` is JSON's null).
_UNDECODABLE: Final = object()


# --- events ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Notifications:
    """Consecutive notifications of one ``method`` read together, in order; ``raws[i]`` is the
    frame ``messages[i]`` was parsed from."""

    method: str
    messages: list[Message]
    raws: list[bytes]


class Notification:
    """A notification of a method that is not grouped: its ``method``, the decoded
    ``message`` and the ``raw`` frame it was parsed from.

    Reused: one object per :class:`Peer`, whose fields are those of the notification just
    pulled and change when the next one is pulled (a peer's reads are pulled one at a time, by
    its one owner). It is the one event made
    per message on a client's one-by-one path, so it must cost next to nothing: a new object
    per message (a tuple subclass, a dataclass, a ``__slots__`` class with an ``__init__``)
    cost bench/flood.py 8-30% CPU (docs/decisions.md), three slot writes cost what a tuple
    did. Keep the fields (or :meth:`copy`) to hold one past the next pull."""

    __slots__ = ("message", "method", "raw")

    def __init__(self, method: str = "", message: Message | None = None, raw: bytes = b"") -> None:
        self.method = method
        self.message: Message = {} if message is None else message
        self.raw = raw

    def copy(self) -> Notification:
        """A notification of its own with the same fields (one that outlives the next pull)."""
        return Notification(self.method, self.message, self.raw)

    def __repr__(self) -> str:
        return f"Notification({self.method!r}, {len(self.raw)} bytes)"


@dataclass(frozen=True, slots=True)
class AgentRequest:
    """An agent request accepted into the in-flight table; answer it with :meth:`Peer.reply`
    or :meth:`Peer.reply_error` (``id`` is the agent's, echoed exactly)."""

    id: RequestId
    method: str
    params: Any
    message: Message
    raw: bytes


@dataclass(frozen=True, slots=True)
class RefusedRequest:
    """An agent request over the in-flight bound. A -32603 reply is owed (see
    :meth:`Peer.take_owed_replies`) unless ``violation`` is set: the backlog of owed replies was
    full, no reply is owed, and the frame is a violation."""

    id: RequestId
    method: str
    message: Message
    raw: bytes
    violation: Violation | None


@dataclass(frozen=True, slots=True)
class Reply:
    """The agent's answer to Baton's pending request ``request_id`` (sent for ``method``).
    ``error`` is the error object of an error answer, else None and ``result`` holds the
    result."""

    request_id: int
    method: str
    result: Any
    error: Message | None
    message: Message
    raw: bytes


@dataclass(frozen=True, slots=True)
class LateReply:
    """An answer to an id whose wait was abandoned: recorded and dropped."""

    request_id: int
    message: Message
    raw: bytes


@dataclass(frozen=True, slots=True)
class Broken:
    """A well-formed frame that breaks the protocol. ``marked`` says whether the frame itself
    is malformed (journaled with the violation's kind); otherwise it is a valid envelope used
    wrongly (an answer to an id never sent, a reused request id) and journaled as it is."""

    violation: Violation
    message: Message
    raw: bytes
    marked: bool


@dataclass(frozen=True, slots=True)
class SkippedLine:
    """A line that is not a JSON-RPC message (blank lines are separators, not skipped)."""

    skipped: Skipped
    raw: bytes


Event = (
    Notifications
    | Notification
    | AgentRequest
    | RefusedRequest
    | Reply
    | LateReply
    | Broken
    | SkippedLine
)


# --- the peer -------------------------------------------------------------------------------


class Peer:
    """One side's JSON-RPC state over newline-delimited JSON (see the module docstring).

    ``max_frame_bytes`` caps every outbound frame (:class:`~baton.errors.OutboundFrameTooLarge`).
    """

    __slots__ = (
        "_abandoned",
        "_grouped",
        "_in_flight",
        "_max_frame_bytes",
        "_next_id",
        "_note",
        "_owed",
        "_pending",
        "frames_in",
        "late_responses",
        "skipped_frames",
        "violation_count",
        "violations",
    )

    def __init__(self, *, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> None:
        self._max_frame_bytes = max_frame_bytes
        self._next_id = 1
        self._pending: dict[int, str] = {}
        self._abandoned: OrderedDict[int, str] = OrderedDict()
        self._in_flight: dict[RequestId, str] = {}
        self._owed: deque[RequestId] = deque()
        self._grouped: set[str] = set()
        #: The one plain-notification event, reused for every one pulled (see Notification).
        self._note = Notification()
        #: Valid inbound frames so far (violations included, skipped lines not).
        self.frames_in = 0
        #: Unparseable inbound lines skipped so far (blank lines are not counted).
        self.skipped_frames = 0
        #: Answers that arrived for ids whose wait was abandoned; dropped.
        self.late_responses = 0
        #: Protocol violations seen (the newest are kept in ``violations``).
        self.violation_count = 0
        self.violations: list[ProtocolViolation] = []

    # --- outbound ---------------------------------------------------------------------------

    def request(self, method: str, params: Message | None = None) -> tuple[int, Message, bytes]:
        """Make a request: its id (now pending), the message and its frame. A frame over the
        cap raises before the id is pending."""
        request_id = self._next_id
        message = jsonrpc.request(request_id, method, params)
        data = jsonrpc.encode(message, self._max_frame_bytes)
        self._next_id = request_id + 1
        self._pending[request_id] = method
        return request_id, message, data

    def notification(self, method: str, params: Message | None = None) -> tuple[Message, bytes]:
        """Make a notification: the message and its frame."""
        message = jsonrpc.notification(method, params)
        return message, jsonrpc.encode(message, self._max_frame_bytes)

    def reply(self, request_id: RequestId, result: Any) -> tuple[Message, bytes]:
        """Answer the agent's in-flight request ``request_id`` with ``result``; it leaves the
        table. A result too large for a frame is answered -32603 instead."""
        self._in_flight.pop(request_id, None)
        message = jsonrpc.result_response(request_id, result)
        try:
            return message, jsonrpc.encode(message, self._max_frame_bytes)
        except Exception:
            return self._error(request_id, jsonrpc.INTERNAL_ERROR, "the answer is too large")

    def reply_error(
        self, request_id: RequestId, code: int, text: str, data: Any = None
    ) -> tuple[Message, bytes]:
        """Answer the agent's in-flight request ``request_id`` with an error; it leaves the
        table."""
        self._in_flight.pop(request_id, None)
        return self._error(request_id, code, text, data)

    def _error(
        self, request_id: RequestId, code: int, text: str, data: Any = None
    ) -> tuple[Message, bytes]:
        message = jsonrpc.error_response(request_id, code, text, data)
        return message, jsonrpc.encode(message, self._max_frame_bytes)

    def take_owed_replies(self) -> list[tuple[Message, bytes]]:
        """The refusal replies owed so far (see :class:`RefusedRequest`), oldest first; the
        backlog is empty afterwards."""
        owed = [
            self._error(request_id, jsonrpc.INTERNAL_ERROR, TOO_MANY_REQUESTS)
            for request_id in self._owed
        ]
        self._owed.clear()
        return owed

    @property
    def owes_replies(self) -> bool:
        """True while refusal replies are owed."""
        return bool(self._owed)

    # --- Baton's requests -------------------------------------------------------------------

    def is_pending(self, request_id: int) -> bool:
        """True while ``request_id`` waits for its answer."""
        return request_id in self._pending

    def method_of(self, request_id: int) -> str | None:
        """The method of pending request ``request_id``, else None."""
        return self._pending.get(request_id)

    def forget(self, request_id: int) -> None:
        """``request_id`` is no longer pending and was never written (its write failed): an
        answer to it is a violation."""
        self._pending.pop(request_id, None)

    def abandon(self, request_id: int) -> None:
        """Stop waiting for ``request_id``: a late answer is dropped and counted."""
        method = self._pending.pop(request_id, None)
        if method is None:
            return
        self._abandoned[request_id] = method
        while len(self._abandoned) > MAX_ABANDONED_IDS:
            self._abandoned.popitem(last=False)

    # --- the agent's requests ---------------------------------------------------------------

    @property
    def agent_requests(self) -> list[RequestId]:
        """Ids of agent requests in flight (not answered yet), oldest first."""
        return list(self._in_flight)

    def cancel_target(self, message: Message) -> RequestId | None:
        """The in-flight agent request a ``$/cancel_request`` notification names, else None."""
        params = message.get("params")
        target = params.get("requestId") if isinstance(params, dict) else None
        if not jsonrpc.is_request_id(target):
            return None
        return target if target in self._in_flight else None

    # --- inbound ----------------------------------------------------------------------------

    def group(self, method: str) -> None:
        """Group consecutive notifications of ``method`` read together into one
        :class:`Notifications` (the owner handles them in one call). Other methods' notifications
        are one :class:`Notification` each."""
        self._grouped.add(method)

    def receive(self, lines: list[bytes]) -> Iterator[Event]:
        """Decode one read's lines into events, in order, as they are pulled (a frame is decoded
        after the event before it was handled, so a message lives no longer than it must).
        Never raises on agent input; pull every event (the counters follow the pull).

        Consecutive notifications of a grouped method (:meth:`group`) become one
        :class:`Notifications`; any other frame ends the group. Every other notification is
        the peer's one reused :class:`Notification`, holding the one just pulled.
        """
        grouped = self._grouped
        note = self._note  # reused: a read of one line must not pay for a new object
        group: list[Message] = []
        group_raws: list[bytes] = []
        group_method = ""  # no group yet (a group always holds its method's first message)
        for line in lines:
            if not line:
                continue
            try:
                message = _loads(line)
            except _DecodeError:
                message = _UNDECODABLE
            if type(message) is dict and message.get("jsonrpc") == "2.0":
                method = message.get("method")
                if type(method) is str and "id" not in message:
                    if method in grouped:
                        if method != group_method:
                            if group:
                                self.frames_in += len(group)
                                yield Notifications(group_method, group, group_raws)
                                group, group_raws = [], []
                            group_method = method
                        group.append(message)
                        group_raws.append(line)
                        continue
                    if group:
                        self.frames_in += len(group)
                        yield Notifications(group_method, group, group_raws)
                        group, group_raws = [], []
                        group_method = ""
                    self.frames_in += 1
                    note.method = method
                    note.message = message
                    note.raw = line
                    yield note
                    continue
            if group:
                self.frames_in += len(group)
                yield Notifications(group_method, group, group_raws)
                group, group_raws = [], []
                group_method = ""
            event = self._frame(line, message)
            if event is not None:
                if type(event) is not SkippedLine:
                    self.frames_in += 1
                yield event
        if group:
            self.frames_in += len(group)
            yield Notifications(group_method, group, group_raws)

    def _frame(self, line: bytes, message: object) -> Event | None:
        """A frame that is not a plain notification."""
        if message is _UNDECODABLE:
            return self._skip(line, "invalid_json")
        if type(message) is not dict:
            return self._skip(line, "not_an_object")
        if message.get("jsonrpc") != "2.0":
            return self._skip(line, "not_jsonrpc_2")
        kind = jsonrpc.classify(message)
        if kind is None:
            return self._skip(line, "not_an_envelope")
        if isinstance(kind, Violation):
            self.violate(kind)
            return Broken(kind, message, line, marked=True)
        if kind is Kind.RESPONSE:
            return self._answer(message, line)
        return self._agent_request(message, line)

    def _skip(self, line: bytes, reason: str) -> SkippedLine | None:
        if line.isspace():
            return None  # whitespace-only lines are separators, like blank ones
        self.skipped_frames += 1
        return SkippedLine(Skipped(reason, len(line)), line)

    def _answer(self, message: Message, line: bytes) -> Event:
        request_id = message["id"]
        is_int = type(request_id) is int
        method = self._pending.pop(request_id, None) if is_int else None
        if method is None:
            if is_int and self._abandoned.pop(request_id, None) is not None:
                self.late_responses += 1
                return LateReply(request_id, message, line)
            violation = Violation(
                "unknown_response_id", f"a response to id {request_id!r}, never sent"
            )
            self.violate(violation)
            return Broken(violation, message, line, marked=False)
        error = message.get("error") if "error" in message else None
        return Reply(request_id, method, message.get("result"), error, message, line)

    def _agent_request(self, message: Message, line: bytes) -> Event:
        request_id: RequestId = message["id"]
        method: str = message["method"]
        if request_id in self._in_flight:
            violation = Violation(
                "duplicate_request_id", f"agent reused pending request id {request_id!r}"
            )
            self.violate(violation)
            return Broken(violation, message, line, marked=False)
        if len(self._in_flight) >= MAX_AGENT_REQUESTS_IN_FLIGHT:
            if len(self._owed) >= MAX_OWED_REPLIES:
                violation = Violation(
                    REQUEST_FLOOD,
                    f"more than {MAX_AGENT_REQUESTS_IN_FLIGHT} requests in flight and "
                    f"{MAX_OWED_REPLIES} refusals unread",
                )
                self.violate(violation)
                return RefusedRequest(request_id, method, message, line, violation)
            self._owed.append(request_id)
            return RefusedRequest(request_id, method, message, line, None)
        self._in_flight[request_id] = method
        return AgentRequest(request_id, method, message.get("params"), message, line)

    def violate(self, violation: Violation) -> ProtocolViolation:
        """Count ``violation`` (keeping the newest) and return it as the error the owner
        reports."""
        error = ProtocolViolation(violation.kind, violation.detail)
        self.violation_count += 1
        self.violations.append(error)
        if len(self.violations) > MAX_KEPT_VIOLATIONS:
            del self.violations[0]
        return error
