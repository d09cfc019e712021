"""The asyncio JSON-RPC connection: read, record, dispatch, write over a sans-I/O peer.

The protocol state (ids, pending and abandoned requests, the agent's requests in flight,
violations, notification grouping, the flood bounds) lives in :class:`baton.wire.peer.Peer`.
This module adds what needs an event loop: reading lines, recording every frame through the
tap (:mod:`baton.connection.tap`) before it is acted on or written, futures for answers, tasks
for the agent's requests, budgets and timeouts.

Cancellation safety. Cancelling :meth:`Connection.await_answer` (and :meth:`await_response`)
is safe: the request stays pending, its answer is still read and handled when it comes, and a
later wait for the same id returns it. The frame reader is resumable the same way: bytes it
already consumed stay in its decoder and complete the same frame on the next read. A bounded
request (:meth:`Connection.call`, :meth:`request`) whose bound expires or whose caller is
cancelled is given up (issue 29): its id is abandoned (a late answer is dropped and counted) and
the agent is sent ``$/cancel_request`` for it, journaled like every frame.

``$/cancel_request`` needs no advertisement: the pinned schemas define it as a protocol-level
notification (``x-side: protocol``) either side may send for any outstanding request. When the
agent cancels one of its own requests, the task serving it is cancelled with the message
:data:`AGENT_CANCELLED_REQUEST` (:func:`cancelled_by_agent` reads it from the
``CancelledError``, through every await below the handler), so a question on screen can say it
was withdrawn; the agent is answered -32800.

Ordering. Inbound notifications are handled in arrival order, inside the read loop: the
official SDK gives each its own task and can reorder a session's updates; Baton does not.
Consecutive notifications of one method read together are journaled together and handed over
together (:meth:`Connection.on_notifications`), in order; any other frame ends such a run,
after the run was handled. Agent-to-client requests run as tasks (a permission prompt may
wait for a person), started in arrival order after every earlier frame was handled, so they
see the tool-call state that preceded them. A response is resolved after every frame before
it was handled.

No deadlock by construction. Handlers called from the read loop (notification handlers,
``on_answer`` hooks, the violation handler) are plain functions: they cannot await, so they
cannot wait for the read loop they run in; work that must wait is scheduled as a task. A
handler that returns an awaitable, and :meth:`drained` or :meth:`wait_closed` awaited from
inside the read loop, raise :class:`~baton.errors.InternalError` (BATON_BUG) instead.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Generic, TypeVar

from baton.connection.reader import READ_CHUNK_BYTES, FrameReader
from baton.connection.streams import ByteReader, ByteWriter
from baton.connection.tap import Mark, Tap
from baton.errors import (
    AgentRequestError,
    AuthenticationRequired,
    BatonError,
    BudgetExpired,
    FrameTooLarge,
    InternalError,
    ProtocolViolation,
    TapFailed,
    TransportClosed,
    UsageError,
)
from baton.wire import jsonrpc
from baton.wire.budget import DEFAULT_REQUEST_LIMIT_SECONDS, BudgetClock
from baton.wire.framing import DEFAULT_MAX_FRAME_BYTES
from baton.wire.jsonrpc import Message, RequestId
from baton.wire.peer import (
    MAX_ABANDONED_IDS,
    MAX_AGENT_REQUESTS_IN_FLIGHT,
    MAX_KEPT_VIOLATIONS,
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

__all__ = [
    "AGENT_CANCELLED_REQUEST",
    "MAX_ABANDONED_IDS",
    "MAX_CANCEL_NOTICES_IN_FLIGHT",
    "MAX_CONCURRENT_INBOUND_REQUESTS",
    "MAX_KEPT_VIOLATIONS",
    "Answer",
    "BatchNotificationHandler",
    "Connection",
    "InboundRequest",
    "NotificationHandler",
    "RequestHandler",
    "RpcError",
    "ViolationHandler",
    "cancelled_by_agent",
]

#: Inbound agent requests handled at once (the peer's bound; kept under its old name).
MAX_CONCURRENT_INBOUND_REQUESTS: Final = MAX_AGENT_REQUESTS_IN_FLIGHT

#: ``$/cancel_request`` notifications for given-up requests waiting to be written at once.
#: Each waits on the write lock (an agent that stops reading blocks them); beyond this many the
#: request is still abandoned but no notification is queued (counted in
#: ``cancel_requests_skipped``), so a stalled pipe cannot collect unbounded tasks.
MAX_CANCEL_NOTICES_IN_FLIGHT: Final = 64

#: The message a task serving an agent request is cancelled with when the agent cancels that
#: request (``$/cancel_request``); see :func:`cancelled_by_agent`.
AGENT_CANCELLED_REQUEST: Final = "baton: the agent cancelled its request ($/cancel_request)"


def cancelled_by_agent(exc: BaseException) -> bool:
    """True when ``exc`` is the cancellation of an agent request's handler because the agent
    itself cancelled the request (the message propagates to every task the handler awaits)."""
    return isinstance(exc, asyncio.CancelledError) and AGENT_CANCELLED_REQUEST in exc.args


RefT = TypeVar("RefT")

#: A notification handler: ``handler(message, ref)``, a plain call from the read loop.
NotificationHandler = Callable[[Message, Any], None]
#: A batch handler: ``handler(messages, refs)`` handles consecutive notifications of one method
#: read together, in order (``refs[i]`` is the tap's reference of ``messages[i]``), in a plain
#: call from the read loop: the hot path of a streaming turn, no coroutine per message.
BatchNotificationHandler = Callable[[list[Message], Sequence[Any]], None]
#: Called with every protocol violation, from the read loop (a plain call).
ViolationHandler = Callable[[ProtocolViolation], None]

# Which client capability Baton would need to serve an agent-to-client method; used to say why
# an unhandled request is answered -32601.
_CAPABILITY_FOR_METHOD: Final = {
    "fs/read_text_file": "fs.readTextFile",
    "fs/write_text_file": "fs.writeTextFile",
    "terminal/": "terminal",
    "elicitation/": "elicitation",
}


class RpcError(Exception):
    """Raise from a request handler to answer the agent with a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


@dataclass(slots=True)
class InboundRequest:
    """An agent-to-client request. ``id`` is the agent's own id, echoed back exactly."""

    id: RequestId
    method: str
    params: Any
    message: Message
    ref: object = None


RequestHandler = Callable[[InboundRequest], Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class Answer(Generic[RefT]):
    """The agent's answer to one of Baton's requests: its ``result`` and the tap's ``ref`` of
    the answer's frame (what a durable record citing the answer points at)."""

    result: Any
    ref: RefT


@dataclass(slots=True)
class _Waiter:
    """The event-loop side of a pending request: its future, the tap reference of the request's
    frame, and the hook called when its answer is read."""

    future: asyncio.Future[Any]
    ref: object = None
    on_answer: Callable[[], None] | None = None


def _capability_note(method: str) -> str:
    for prefix, capability in _CAPABILITY_FOR_METHOD.items():
        if method == prefix or (prefix.endswith("/") and method.startswith(prefix)):
            return f"Baton advertises {capability} as false and does not implement it"
    return "Baton advertises no capability that offers it"


def _not_synchronous(handler: object, returned: object) -> InternalError:
    """The error for a read-loop handler that returned an awaitable (it would run unawaited or
    need the read loop); the awaitable is closed so it never runs half-way."""
    close = getattr(returned, "close", None)
    if close is not None:
        with contextlib.suppress(Exception):
            close()
    name = getattr(handler, "__qualname__", type(handler).__name__)
    return InternalError(
        f"the read-loop handler {name} returned an awaitable: read-loop handlers are plain "
        "functions (schedule a task for work that waits)"
    )


class Connection(Generic[RefT]):
    """A JSON-RPC 2.0 connection over newline-delimited JSON, generic over the tap's reference
    type ``RefT`` (None without a tap).

    Baton's request ids are integers from 1. The agent's request ids (integers from 0, strings,
    UUIDs) are kept in a separate table and echoed back exactly.

    Bounds: ``max_frame_bytes`` caps every frame in both directions (see
    :mod:`baton.wire.framing` for the memory arithmetic); ``request_limit`` is the fixed limit
    for :meth:`request` and :meth:`call` when no budget is given; the peer bounds the agent's
    requests in flight and the refusals owed (:mod:`baton.wire.peer`).
    """

    def __init__(
        self,
        reader: ByteReader,
        writer: ByteWriter,
        *,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        tap: Tap[RefT] | None = None,
        request_limit: float = DEFAULT_REQUEST_LIMIT_SECONDS,
        on_violation: ViolationHandler | None = None,
        read_chunk: int = READ_CHUNK_BYTES,
    ) -> None:
        self._writer = writer
        self._frames = FrameReader(reader, max_frame_bytes, read_chunk)
        self._peer = Peer(max_frame_bytes=max_frame_bytes)
        self._tap: Tap[Any] | None = tap
        self._request_limit = request_limit
        self._on_violation = on_violation
        self._waiters: dict[int, _Waiter] = {}
        self._serving: dict[RequestId, asyncio.Task[None]] = {}
        self._request_handlers: dict[str, RequestHandler] = {}
        self._notification_handlers: dict[str, NotificationHandler] = {}
        self._batch_notification_handlers: dict[str, BatchNotificationHandler] = {}
        self._fallback: NotificationHandler | None = None
        self._write_lock = asyncio.Lock()
        self._read_task: asyncio.Task[None] | None = None
        self._owed_task: asyncio.Task[None] | None = None
        self._cancel_notices: set[asyncio.Task[None]] = set()
        self._loop = asyncio.get_running_loop()
        self._closed: asyncio.Future[BatonError] = self._loop.create_future()
        #: Event-loop time of the last valid inbound frame (idle bounds reset on it).
        self.last_frame_at = self._loop.time()
        self.frames_out = 0
        #: ``$/cancel_request`` notifications written for requests Baton gave up on.
        self.cancel_requests_sent = 0
        #: Given-up requests whose notification was not queued (the in-flight bound was full).
        self.cancel_requests_skipped = 0
        #: Agent requests the agent itself cancelled while Baton was serving them.
        self.agent_cancelled_requests = 0

    # --- counters (the peer's) -------------------------------------------------------------

    @property
    def frames_in(self) -> int:
        """Valid inbound frames so far."""
        return self._peer.frames_in

    @property
    def skipped_frames(self) -> int:
        """Unparseable inbound lines skipped so far (blank lines are not counted)."""
        return self._peer.skipped_frames

    @property
    def late_responses(self) -> int:
        """Answers that arrived for ids whose wait was abandoned; dropped."""
        return self._peer.late_responses

    @property
    def violation_count(self) -> int:
        """Protocol violations seen (the newest are kept in :attr:`violations`)."""
        return self._peer.violation_count

    @property
    def violations(self) -> list[ProtocolViolation]:
        """The newest protocol violations (at most ``MAX_KEPT_VIOLATIONS``)."""
        return self._peer.violations

    # --- registration ----------------------------------------------------------------------

    def on_request(self, method: str, handler: RequestHandler) -> None:
        """Handle agent-to-client requests for ``method`` (each in a task of its own). The
        handler returns the result or raises :class:`RpcError`."""
        self._request_handlers[method] = handler

    def on_notification(self, method: str, handler: NotificationHandler) -> None:
        """Handle notifications for ``method`` one by one with a plain function, called with
        the message and the tap's ref."""
        self._notification_handlers[method] = handler

    def on_notifications(self, method: str, handler: BatchNotificationHandler) -> None:
        """Handle notifications for ``method`` in batches with a plain function (see
        :data:`BatchNotificationHandler`): the hot path of a streaming turn. Each batch is
        consecutive frames of one read, journaled before the call."""
        self._batch_notification_handlers[method] = handler
        self._peer.group(method)

    def on_any_notification(self, handler: NotificationHandler) -> None:
        """Catch-all (a plain function) for notifications without a handler (never a
        violation)."""
        self._fallback = handler

    # --- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        """Start reading. Idempotent."""
        if self._read_task is None:
            self._read_task = self._loop.create_task(self._read_loop(), name="baton-read")

    @property
    def is_closed(self) -> bool:
        """True once the connection closed, for any reason."""
        return self._closed.done()

    @property
    def close_reason(self) -> BatonError | None:
        """Why the connection closed, or None while open."""
        return self._closed.result() if self._closed.done() else None

    def _refuse_in_read_loop(self, what: str) -> None:
        task = self._read_task
        if task is not None and task is asyncio.current_task():
            raise InternalError(
                f"{what} was awaited from inside the connection's read loop: it needs that "
                "loop to finish and would never return"
            )

    async def wait_closed(self) -> BatonError:
        """Wait until the connection closes; return why. Cancellation-safe (it only waits).
        Raises InternalError (BATON_BUG) when awaited from inside the read loop."""
        self._refuse_in_read_loop("wait_closed()")
        return await asyncio.shield(self._closed)

    async def close(self, reason: BatonError | None = None) -> None:
        """Close the write side and stop reading. Pending requests fail with ``reason``.
        Cancelling it leaves the connection closed (the read task may still be finishing)."""
        self._shutdown(reason or TransportClosed("connection closed by Baton"))
        task = self._read_task
        if task is not None and task is not asyncio.current_task():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def drained(self) -> BatonError:
        """Wait for the reader to reach end of stream after handling every complete frame;
        return why the connection closed. Cancellation-safe (it only waits). Raises
        InternalError (BATON_BUG) when awaited from inside the read loop."""
        self._refuse_in_read_loop("drained()")
        task = self._read_task
        if task is not None and not task.done():
            # asyncio.wait neither raises the read task's failure nor swallows the caller's
            # cancellation (a drain bounded by wait_for must end when its bound expires).
            await asyncio.wait((task,))
        return await self.wait_closed()

    def _shutdown(self, reason: BatonError) -> None:
        if self._closed.done():
            return
        self._closed.set_result(reason)
        for waiter in self._waiters.values():
            if not waiter.future.done():
                waiter.future.set_exception(reason)
                waiter.future.exception()  # a failure nobody awaits is not an "unretrieved" one
        for task in self._serving.values():
            task.cancel()
        if self._owed_task is not None:
            self._owed_task.cancel()
        for notice in self._cancel_notices:
            notice.cancel()
        with contextlib.suppress(Exception):
            self._writer.close()

    # --- outbound --------------------------------------------------------------------------

    async def _write(self, message: Message, data: bytes) -> RefT:
        async with self._write_lock:
            if self._closed.done():
                raise self._closed.result()
            try:
                ref: RefT = (
                    await self._tap.record_outbound(data, message)
                    if self._tap is not None
                    else None  # type: ignore[assignment]  # RefT is None without a tap
                )
            except Exception as exc:
                failure = TapFailed(f"the durability tap failed on an outbound frame: {exc}")
                self._shutdown(failure)
                raise failure from exc
            try:
                self._writer.write(data)
                await self._writer.drain()
            except (ConnectionError, RuntimeError, OSError, TransportClosed) as exc:
                closed = TransportClosed(f"writing to the agent failed: {type(exc).__name__}")
                self._shutdown(closed)
                raise closed from exc
            self.frames_out += 1
            return ref

    async def send_request(self, method: str, params: Message | None = None) -> int:
        """Write a request and return its id. The answer is collected by :meth:`await_answer`.

        If the write fails, the request is not pending and the error propagates. Cancelling it
        while the frame is being written leaves nothing pending either.
        """
        request_id, message, data = self._peer.request(method, params)
        waiter = _Waiter(self._loop.create_future())
        self._waiters[request_id] = waiter
        try:
            waiter.ref = await self._write(message, data)
        except BaseException:
            self._waiters.pop(request_id, None)
            self._peer.forget(request_id)
            raise
        return request_id

    def on_answer(self, request_id: int, hook: Callable[[], None]) -> None:
        """Call ``hook`` synchronously when the answer to ``request_id`` is read, before any
        later frame is handled (a turn uses it to stop owning its session's updates exactly
        at its prompt's answer)."""
        waiter = self._waiters.get(request_id)
        if waiter is None:
            raise UsageError(f"request {request_id} is not pending")
        waiter.on_answer = hook

    def request_ref(self, request_id: int) -> object:
        """The tap reference of a pending request's outbound frame."""
        waiter = self._waiters.get(request_id)
        return waiter.ref if waiter else None

    async def await_answer(
        self,
        request_id: int,
        *,
        timeout: float | None = None,
        budget: BudgetClock | None = None,
    ) -> Answer[RefT]:
        """Wait for the answer to ``request_id``; return it with its tap reference.

        ``timeout`` (seconds) and ``budget`` bound the wait; when one elapses
        :class:`BudgetExpired` is raised and the request **stays pending** (call
        :meth:`abandon` to give up on it). Cancelling this coroutine is safe in the same way.
        Raises :class:`AgentRequestError` when the agent answered with an error.
        """
        waiter = self._waiters.get(request_id)
        if waiter is None:
            raise UsageError(f"request {request_id} is not pending")
        future = waiter.future
        loop = self._loop
        deadline = None if timeout is None else loop.time() + max(timeout, 0.0)
        while not future.done():
            now = loop.time()
            wait: float | None = None
            expired: BudgetExpired | None = None
            if deadline is not None:
                wait = deadline - now
                if wait <= 0:
                    limit = timeout or 0.0
                    method = self._peer.method_of(request_id) or "request"
                    expired = BudgetExpired("request", limit, limit, method)
            if budget is not None and expired is None:
                budget.touch(self.last_frame_at)
                expired = budget.expired(now, self._peer.method_of(request_id) or "request")
                left = budget.remaining(now)
                if left is not None and (wait is None or left[0] < wait):
                    wait = left[0]
            if expired is not None:
                raise expired
            await asyncio.wait((future,), timeout=wait)
        self._waiters.pop(request_id, None)
        answer: Answer[RefT] = future.result()
        return answer

    async def await_response(
        self,
        request_id: int,
        *,
        timeout: float | None = None,
        budget: BudgetClock | None = None,
    ) -> Any:
        """:meth:`await_answer`, returning only the result (same bounds, same cancellation
        safety)."""
        answer = await self.await_answer(request_id, timeout=timeout, budget=budget)
        return answer.result

    def abandon(self, request_id: int) -> None:
        """Stop waiting for ``request_id``: a late answer is dropped and counted."""
        waiter = self._waiters.pop(request_id, None)
        if waiter is not None and not waiter.future.done():
            waiter.future.cancel()
        self._peer.abandon(request_id)

    async def call(
        self,
        method: str,
        params: Message | None = None,
        *,
        timeout: float | None = None,
        budget: BudgetClock | None = None,
    ) -> Answer[RefT]:
        """Send a request and wait for its answer within ``budget`` and/or ``timeout``; with
        neither, within the connection's fixed request limit (30 s by default).

        On expiry, and when it is cancelled while waiting, the request is given up
        (:meth:`_give_up`): abandoned (its late answer is dropped and counted) and cancelled at
        the agent with ``$/cancel_request``; the expiry or the cancellation then propagates
        without waiting for that write. A request that must have no deadline (session/prompt)
        uses :meth:`send_request` and :meth:`await_answer` instead.
        """
        if timeout is None and budget is None:
            timeout = self._request_limit
        request_id = await self.send_request(method, params)
        try:
            return await self.await_answer(request_id, timeout=timeout, budget=budget)
        except (BudgetExpired, asyncio.CancelledError):
            self._give_up(request_id)
            raise

    def _give_up(self, request_id: int) -> None:
        """Abandon ``request_id`` and tell the agent (``$/cancel_request``) from a task of its
        own, so neither an expired bound nor a cancelled caller waits on the pipe."""
        self.abandon(request_id)
        if self._closed.done():
            return
        if len(self._cancel_notices) >= MAX_CANCEL_NOTICES_IN_FLIGHT:
            self.cancel_requests_skipped += 1
            return
        notice = self._loop.create_task(
            self._send_cancel_notice(request_id), name="baton-cancel-request"
        )
        self._cancel_notices.add(notice)
        notice.add_done_callback(self._cancel_notices.discard)

    async def _send_cancel_notice(self, request_id: int) -> None:
        with contextlib.suppress(BatonError):
            await self.cancel_request(request_id)
            self.cancel_requests_sent += 1

    async def request(
        self,
        method: str,
        params: Message | None = None,
        *,
        timeout: float | None = None,
        budget: BudgetClock | None = None,
    ) -> Any:
        """:meth:`call`, returning only the result (same bounds, same cancellation safety)."""
        answer = await self.call(method, params, timeout=timeout, budget=budget)
        return answer.result

    async def notify(self, method: str, params: Message | None = None) -> RefT:
        """Send a notification; returns the tap reference. Cancelling it mid-write may leave
        the frame recorded and not written (the journal then shows an unsent frame)."""
        message, data = self._peer.notification(method, params)
        return await self._write(message, data)

    async def cancel_request(self, request_id: int) -> None:
        """Ask the agent to cancel one of Baton's requests (``$/cancel_request``).

        The request stays pending: the agent still owes an answer (a result or -32800).
        """
        await self.notify("$/cancel_request", {"requestId": request_id})

    # --- inbound ---------------------------------------------------------------------------

    async def _read_loop(self) -> None:
        frames = self._frames
        receive = self._peer.receive
        tap = self._tap
        loop = self._loop
        handlers = self._notification_handlers
        reason: BatonError
        try:
            while True:
                lines = await frames.read_batch()
                if lines is None:
                    reason = TransportClosed("the agent closed its output")
                    break
                touched = False  # last_frame_at is read from the clock once per read
                for event in receive(lines):
                    if type(event) is Notification:
                        # One by one (a method without a batch handler): no group, no list.
                        # The peer reuses the event: its fields are read before the next pull.
                        if not touched:
                            self.last_frame_at = loop.time()
                            touched = True
                        message = event.message
                        ref = None if tap is None else await self._record(event.raw, message)
                        handler = handlers.get(event.method)
                        if handler is None:
                            self._unhandled(event.method, message, ref)
                        elif (returned := handler(message, ref)) is not None:
                            raise _not_synchronous(handler, returned)
                    elif type(event) is Notifications:
                        # The hot path: a run of streamed updates, journaled then handed over.
                        self.last_frame_at = loop.time()
                        touched = True
                        if tap is None:
                            refs: Sequence[object] = [None] * len(event.messages)
                        else:
                            try:
                                refs = await tap.record_inbound(event.raws, event.messages)
                            except Exception as exc:
                                raise TapFailed(
                                    f"the durability tap failed on inbound frames: {exc}"
                                ) from exc
                        self._notify(event.method, event.messages, refs)
                    else:
                        await self._handle(event)
                if self._peer.owes_replies and self._owed_task is None:
                    self._owed_task = loop.create_task(self._write_owed(), name="baton-owed")
        except FrameTooLarge as exc:
            reason = exc
        except TapFailed as exc:
            reason = exc
        except asyncio.CancelledError:
            self._shutdown(TransportClosed("connection closed by Baton"))
            raise
        except (ConnectionError, OSError) as exc:
            reason = TransportClosed(f"reading from the agent failed: {type(exc).__name__}")
        except Exception as exc:
            # A handler's bug: the connection closes with a classified error rather than
            # leaving its waiters (responses, drained(), the lane's watcher) waiting forever.
            reason = InternalError(f"a frame handler failed: {type(exc).__name__}: {exc}")
        self._shutdown(reason)

    def _notify(self, method: str, messages: list[Message], refs: Sequence[object]) -> None:
        """Hand notifications of ``method`` (already journaled) to their handler."""
        batch = self._batch_notification_handlers.get(method)
        if batch is not None:
            returned: object = batch(messages, refs)
            if returned is not None:
                raise _not_synchronous(batch, returned)
            return
        handler = self._notification_handlers.get(method)
        if handler is None and method == "$/cancel_request":
            for message in messages:
                self._cancel_inbound(message)
            return
        if handler is None:
            handler = self._fallback
            if handler is None:
                return
        for message, ref in zip(messages, refs, strict=True):
            returned = handler(message, ref)
            if returned is not None:
                raise _not_synchronous(handler, returned)

    def _unhandled(self, method: str, message: Message, ref: object) -> None:
        """A notification of a method without a handler: ``$/cancel_request`` cancels the
        agent request it names; anything else goes to the catch-all, if any."""
        if method == "$/cancel_request":
            self._cancel_inbound(message)
            return
        fallback = self._fallback
        if fallback is not None and (returned := fallback(message, ref)) is not None:
            raise _not_synchronous(fallback, returned)

    async def _record(self, raw: bytes, message: Message | None, mark: Mark = None) -> object:
        if self._tap is None:
            return None
        try:
            refs = await self._tap.record_inbound((raw,), (message,), mark)
        except Exception as exc:
            raise TapFailed(f"the durability tap failed on an inbound frame: {exc}") from exc
        return refs[0]

    async def _handle(self, event: object) -> None:
        """Record, then act on, one frame that is not a plain notification."""
        if type(event) is SkippedLine:
            await self._record(event.raw, None, event.skipped)
            return
        self.last_frame_at = self._loop.time()
        if type(event) is Reply:
            ref = await self._record(event.raw, event.message)
            self._resolve(event, ref)
        elif type(event) is AgentRequest:
            ref = await self._record(event.raw, event.message)
            request = InboundRequest(event.id, event.method, event.params, event.message, ref)
            task = self._loop.create_task(self._serve(request), name=f"baton-serve-{event.method}")
            self._serving[event.id] = task
        elif type(event) is RefusedRequest:
            await self._record(event.raw, event.message, event.violation)
            if event.violation is not None:
                self._violation()
        elif type(event) is Broken:
            await self._record(event.raw, event.message, event.violation if event.marked else None)
            self._violation()
        elif type(event) is LateReply:
            await self._record(event.raw, event.message)
        else:
            raise InternalError(f"an unknown peer event: {type(event).__name__}")

    def _violation(self) -> None:
        if self._on_violation is not None:
            self._on_violation(self._peer.violations[-1])

    def _resolve(self, reply: Reply, ref: object) -> None:
        waiter = self._waiters.get(reply.request_id)
        if waiter is None or waiter.future.done():
            return  # its wait was abandoned or failed: nobody to tell
        if waiter.on_answer is not None:
            waiter.on_answer()
        error = reply.error
        if error is not None:
            code = error["code"]
            cls = AuthenticationRequired if code == jsonrpc.AUTH_REQUIRED else AgentRequestError
            waiter.future.set_exception(
                cls(reply.method, code, error["message"], error.get("data"))
            )
        else:
            waiter.future.set_result(Answer(reply.result, ref))

    async def _write_owed(self) -> None:
        """Write the refusals the peer owes until none are left (one task at a time)."""
        try:
            while self._peer.owes_replies:
                for message, data in self._peer.take_owed_replies():
                    await self._write(message, data)
        except BatonError:
            pass
        finally:
            self._owed_task = None

    async def _serve(self, request: InboundRequest) -> None:
        handler = self._request_handlers.get(request.method)
        peer = self._peer
        try:
            if handler is None:
                reply = peer.reply_error(
                    request.id,
                    jsonrpc.METHOD_NOT_FOUND,
                    f"Method not found: {request.method} ({_capability_note(request.method)})",
                    {"method": request.method},
                )
            else:
                try:
                    result = await handler(request)
                    reply = peer.reply(request.id, result)
                except RpcError as exc:
                    reply = peer.reply_error(request.id, exc.code, exc.message, exc.data)
                except asyncio.CancelledError:
                    if self._closed.done():
                        raise
                    reply = peer.reply_error(
                        request.id, jsonrpc.REQUEST_CANCELLED, "Request cancelled"
                    )
                except BatonError as exc:
                    reply = peer.reply_error(request.id, jsonrpc.INTERNAL_ERROR, exc.code)
            with contextlib.suppress(BatonError):
                await self._write(*reply)
        finally:
            self._serving.pop(request.id, None)

    def _cancel_inbound(self, message: Message) -> None:
        target = self._peer.cancel_target(message)
        task = self._serving.get(target) if target is not None else None
        if task is not None and not task.done():
            self.agent_cancelled_requests += 1
            task.cancel(AGENT_CANCELLED_REQUEST)

    def pending_inbound(self) -> list[RequestId]:
        """Ids of agent requests Baton has not answered yet."""
        return self._peer.agent_requests
