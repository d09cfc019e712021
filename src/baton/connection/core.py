"""The JSON-RPC connection: correlation, dispatch, budgets and the durability tap.

Cancellation safety. Cancelling :meth:`Connection.await_response` is safe: the request stays
pending, its answer is still read and handled when it comes, and a later ``await_response`` for
the same id returns it. The frame reader is resumable the same way: bytes it already consumed
stay in its decoder and complete the same frame on the next read.

Ordering. Inbound notifications are handled in arrival order, inside the read loop: the
official SDK gives each its own task and can reorder a session's updates; Baton does not.
Consecutive notifications of a method with a batch handler (:meth:`Connection.on_notifications`)
are journaled together and handed over together, in order; any other frame ends such a run,
after the run was handled. Agent-to-client requests run as tasks (a permission prompt may wait for a person), started
in arrival order after every earlier frame was handled, so they see the tool-call state that
preceded them. A response is resolved after every frame before it was handled.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import orjson

from baton.connection.reader import READ_CHUNK_BYTES, FrameReader
from baton.connection.streams import ByteReader, ByteWriter
from baton.connection.tap import Tap, TapFrame
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
from baton.wire.jsonrpc import Kind, Message, RequestId, Skipped, Violation

#: Ids whose wait was abandoned, remembered so their late answers are dropped and counted
#: rather than reported as answers to ids never sent. Oldest forgotten first.
MAX_ABANDONED_IDS: Final = 256

#: Protocol violations kept on the connection for diagnostics (all are counted).
MAX_KEPT_VIOLATIONS: Final = 64

#: Inbound agent requests handled at once. More is a misbehaving agent: answered -32603.
MAX_CONCURRENT_INBOUND_REQUESTS: Final = 64

NotificationHandler = Callable[[Message, object], Awaitable[None]]
#: A batch handler: ``handler(messages, refs, start)`` handles ``messages[start:]`` in order
#: (``refs[i]`` is the tap's reference of ``messages[i]``) in a plain call. It returns None
#: when it handled them all, or ``(index, awaitable)`` when message ``index`` needs work that
#: must wait: the read loop awaits that, then calls again from ``index + 1``.
BatchNotificationHandler = Callable[
    [list[Message], Sequence[object], int], tuple[int, Awaitable[None]] | None
]

#: What a line that is not JSON decodes to (``None`` is JSON's null).
_UNDECODABLE: Final = object()


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


@dataclass(slots=True)
class _Pending:
    method: str
    future: asyncio.Future[Any]
    ref: object = None
    response_ref: object = None
    on_answer: Callable[[], None] | None = None


def _capability_note(method: str) -> str:
    for prefix, capability in _CAPABILITY_FOR_METHOD.items():
        if method == prefix or (prefix.endswith("/") and method.startswith(prefix)):
            return f"Baton advertises {capability} as false and does not implement it"
    return "Baton advertises no capability that offers it"


class Connection:
    """A JSON-RPC 2.0 peer over newline-delimited JSON.

    Baton's request ids are integers from 1. The agent's request ids (integers from 0, strings,
    UUIDs) are kept in a separate table and echoed back exactly.

    Bounds: ``max_frame_bytes`` caps every frame in both directions (see
    :mod:`baton.wire.framing` for the memory arithmetic); ``request_limit`` is the fixed limit
    for :meth:`request` when no budget is given.
    """

    def __init__(
        self,
        reader: ByteReader,
        writer: ByteWriter,
        *,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        tap: Tap | None = None,
        request_limit: float = DEFAULT_REQUEST_LIMIT_SECONDS,
        on_violation: ViolationHandler | None = None,
        read_chunk: int = READ_CHUNK_BYTES,
    ) -> None:
        self._writer = writer
        self._frames = FrameReader(reader, max_frame_bytes, read_chunk)
        self._max_frame_bytes = max_frame_bytes
        self._tap = tap
        # Optional: journals a valid inbound notification without a coroutine, or returns
        # None having recorded nothing (then ``record`` is awaited). See baton.connection.tap.
        self._tap_nowait: Callable[[bytes, Message], object] | None = getattr(
            tap, "record_nowait", None
        )
        # Optional too: journals a leading part of consecutive valid inbound notifications at
        # once, returning their references (or None: then one by one).
        self._tap_batch: Callable[[list[bytes], list[Message]], Sequence[object] | None] | None = (
            getattr(tap, "record_batch_nowait", None)
        )
        self._request_limit = request_limit
        self._on_violation = on_violation
        self._next_id = 1
        self._pending: dict[int, _Pending] = {}
        self._abandoned: OrderedDict[int, str] = OrderedDict()
        self._inbound: dict[RequestId, asyncio.Task[None]] = {}
        self._request_handlers: dict[str, RequestHandler] = {}
        self._notification_handlers: dict[str, NotificationHandler] = {}
        self._batch_notification_handlers: dict[str, BatchNotificationHandler] = {}
        self._fallback: NotificationHandler | None = None
        self._write_lock = asyncio.Lock()
        self._read_task: asyncio.Task[None] | None = None
        self._closed: asyncio.Future[BatonError] = asyncio.get_running_loop().create_future()
        self._loop = asyncio.get_running_loop()
        #: Event-loop time of the last valid inbound frame (idle bounds reset on it).
        self.last_frame_at = self._loop.time()
        #: Unparseable inbound lines skipped so far (blank lines are not counted).
        self.skipped_frames = 0
        #: Answers that arrived for ids whose wait was abandoned; dropped.
        self.late_responses = 0
        #: Protocol violations seen (the newest are kept in ``violations``).
        self.violation_count = 0
        self.violations: list[ProtocolViolation] = []
        self.frames_in = 0
        self.frames_out = 0
        #: The tap reference of the most recent answer to one of Baton's requests.
        self.last_response_ref: object = None

    # --- registration ----------------------------------------------------------------------

    def on_request(self, method: str, handler: RequestHandler) -> None:
        """Handle agent-to-client requests for ``method``. The handler returns the result or
        raises :class:`RpcError`."""
        self._request_handlers[method] = handler

    def on_notification(self, method: str, handler: NotificationHandler) -> None:
        """Handle notifications for ``method``; called with the message and the tap's ref."""
        self._notification_handlers[method] = handler

    def on_notifications(self, method: str, handler: BatchNotificationHandler) -> None:
        """Handle notifications for ``method`` in batches with a plain function (see
        :data:`BatchNotificationHandler`): the hot path of a streaming turn, no coroutine per
        message. Each batch is consecutive frames of one read, journaled before the call."""
        self._batch_notification_handlers[method] = handler

    def on_any_notification(self, handler: NotificationHandler) -> None:
        """Catch-all for notifications without a handler (never a violation)."""
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

    async def wait_closed(self) -> BatonError:
        """Wait until the connection closes; return why."""
        return await asyncio.shield(self._closed)

    async def close(self, reason: BatonError | None = None) -> None:
        """Close the write side and stop reading. Pending requests fail with ``reason``."""
        self._shutdown(reason or TransportClosed("connection closed by Baton"))
        task = self._read_task
        if task is not None and task is not asyncio.current_task():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def drained(self) -> BatonError:
        """Wait for the reader to reach end of stream after handling every complete frame."""
        if self._read_task is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.shield(self._read_task)
        return await self.wait_closed()

    def _shutdown(self, reason: BatonError) -> None:
        if self._closed.done():
            return
        self._closed.set_result(reason)
        for pending in self._pending.values():
            if not pending.future.done():
                pending.future.set_exception(reason)
                pending.future.exception()  # a failure nobody awaits is not an "unretrieved" one
        for task in self._inbound.values():
            task.cancel()
        with contextlib.suppress(Exception):
            self._writer.close()

    # --- outbound --------------------------------------------------------------------------

    async def _write(self, message: Message) -> object:
        data = jsonrpc.encode(message, self._max_frame_bytes)
        async with self._write_lock:
            if self._closed.done():
                raise self._closed.result()
            ref: object = None
            if self._tap is not None:
                try:
                    ref = await self._tap.record(TapFrame("outbound", data, message))
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
        """Write a request and return its id. The answer is collected by :meth:`await_response`.

        If the write fails, the request is not pending and the error propagates.
        """
        request_id = self._next_id
        self._next_id += 1
        pending = _Pending(method, self._loop.create_future())
        self._pending[request_id] = pending
        try:
            pending.ref = await self._write(jsonrpc.request(request_id, method, params))
        except BaseException:
            self._pending.pop(request_id, None)
            raise
        return request_id

    def on_answer(self, request_id: int, hook: Callable[[], None]) -> None:
        """Call ``hook`` synchronously when the answer to ``request_id`` is read, before any
        later frame is handled (a turn uses it to stop owning its session's updates exactly
        at its prompt's answer)."""
        pending = self._pending.get(request_id)
        if pending is None:
            raise UsageError(f"request {request_id} is not pending")
        pending.on_answer = hook

    def request_ref(self, request_id: int) -> object:
        """The tap reference of a pending request's outbound frame."""
        pending = self._pending.get(request_id)
        return pending.ref if pending else None

    async def await_response(
        self,
        request_id: int,
        *,
        timeout: float | None = None,
        budget: BudgetClock | None = None,
    ) -> Any:
        """Wait for the answer to ``request_id`` and return its result.

        ``timeout`` (seconds) and ``budget`` bound the wait; when one elapses
        :class:`BudgetExpired` is raised and the request **stays pending** (call
        :meth:`abandon` to give up on it). Cancelling this coroutine is safe in the same way.
        Raises :class:`AgentRequestError` when the agent answered with an error.
        """
        result, _ref = await self.await_response_with_ref(
            request_id, timeout=timeout, budget=budget
        )
        return result

    async def await_response_with_ref(
        self,
        request_id: int,
        *,
        timeout: float | None = None,
        budget: BudgetClock | None = None,
    ) -> tuple[Any, object]:
        """Like :meth:`await_response`, also returning the tap reference of the answer."""
        pending = self._pending.get(request_id)
        if pending is None:
            raise UsageError(f"request {request_id} is not pending")
        future = pending.future
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
                    expired = BudgetExpired("request", limit, limit, pending.method)
            if budget is not None and expired is None:
                budget.touch(self.last_frame_at)
                expired = budget.expired(now, pending.method)
                left = budget.remaining(now)
                if left is not None and (wait is None or left[0] < wait):
                    wait = left[0]
            if expired is not None:
                raise expired
            await asyncio.wait((future,), timeout=wait)
        self._pending.pop(request_id, None)
        return future.result(), pending.response_ref

    def abandon(self, request_id: int) -> None:
        """Stop waiting for ``request_id``: a late answer is dropped and counted."""
        pending = self._pending.pop(request_id, None)
        if pending is None:
            return
        if not pending.future.done():
            pending.future.cancel()
        self._abandoned[request_id] = pending.method
        while len(self._abandoned) > MAX_ABANDONED_IDS:
            self._abandoned.popitem(last=False)

    async def request(
        self,
        method: str,
        params: Message | None = None,
        *,
        timeout: float | None = None,
        budget: BudgetClock | None = None,
    ) -> Any:
        """Send a request and wait for its result within ``budget`` and/or ``timeout``; with
        neither, within the connection's fixed request limit (30 s by default).

        On expiry the request is abandoned (its late answer is dropped and counted). A request
        that must have no deadline (session/prompt) uses :meth:`send_request` and
        :meth:`await_response` instead.
        """
        if timeout is None and budget is None:
            timeout = self._request_limit
        request_id = await self.send_request(method, params)
        try:
            return await self.await_response(request_id, timeout=timeout, budget=budget)
        except BudgetExpired:
            self.abandon(request_id)
            raise

    async def notify(self, method: str, params: Message | None = None) -> object:
        """Send a notification; returns the tap reference."""
        return await self._write(jsonrpc.notification(method, params))

    async def cancel_request(self, request_id: int) -> None:
        """Ask the agent to cancel one of Baton's requests (``$/cancel_request``).

        The request stays pending: the agent still owes an answer (a result or -32800).
        """
        await self.notify("$/cancel_request", {"requestId": request_id})

    # --- inbound ---------------------------------------------------------------------------

    async def _read_loop(self) -> None:
        frames = self._frames
        reason: BatonError
        try:
            while True:
                lines = await frames.read_batch()
                if lines is None:
                    reason = TransportClosed("the agent closed its output")
                    break
                await self._handle_lines(lines)
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

    async def _handle_lines(self, lines: list[bytes]) -> None:
        """Handle one read's lines in order. Consecutive notifications of a method with a batch
        handler (the deltas of a streamed turn) are journaled together and handed over
        together; every other frame is handled on its own, after the run before it."""
        loads = orjson.loads
        decode_error = orjson.JSONDecodeError
        batch_handlers = self._batch_notification_handlers
        handlers = self._notification_handlers
        tap = self._tap
        touched = False  # last_frame_at is set once per read (and once per batch run)
        run: list[Message] = []
        run_raws: list[bytes] = []
        run_method = ""
        valid = 0
        try:
            for line in lines:
                if not line:
                    continue
                try:
                    message = loads(line)
                except decode_error:
                    message = _UNDECODABLE
                if type(message) is dict and message.get("jsonrpc") == "2.0":
                    method = message.get("method")
                    if type(method) is str and "id" not in message:
                        if method in batch_handlers:
                            if method != run_method and run:
                                valid += len(run)
                                await self._handle_run(run_method, run_raws, run)
                                run, run_raws = [], []
                            run_method = method
                            run.append(message)
                            run_raws.append(line)
                            continue
                        # Without a batch handler: inline (no coroutine of its own), the bulk
                        # of a turn for a client that handles notifications one by one.
                        if run:
                            valid += len(run)
                            await self._handle_run(run_method, run_raws, run)
                            run, run_raws = [], []
                        valid += 1
                        if not touched:
                            self.last_frame_at = self._loop.time()
                            touched = True
                        ref = None
                        if tap is not None:
                            if self._tap_nowait is not None:
                                ref = self._record_nowait(line, message)
                            if ref is None:
                                ref = await self._record(line, message)
                        handler = handlers.get(method)
                        if handler is not None:
                            await handler(message, ref)
                        elif method == "$/cancel_request":
                            self._cancel_inbound(message)
                        elif self._fallback is not None:
                            await self._fallback(message, ref)
                        continue
                if run:
                    valid += len(run)
                    await self._handle_run(run_method, run_raws, run)
                    run, run_raws = [], []
                if await self._handle_frame(line, message):
                    valid += 1
            if run:
                valid += len(run)
                await self._handle_run(run_method, run_raws, run)
        finally:
            self.frames_in += valid

    async def _handle_run(self, method: str, raws: list[bytes], messages: list[Message]) -> None:
        """Journal, then dispatch, consecutive notifications of ``method`` (which has a batch
        handler): all at once when the tap can (no coroutine and no reference object per
        message), else one by one, each recorded before it is dispatched."""
        self.last_frame_at = self._loop.time()
        handler = self._batch_notification_handlers[method]
        if self._tap is None:
            await self._dispatch_run(handler, messages, [None] * len(messages))
            return
        while self._tap_batch is not None and messages:
            try:
                refs = self._tap_batch(raws, messages)
            except Exception as exc:
                raise TapFailed(f"the durability tap failed on inbound frames: {exc}") from exc
            if refs is None:
                break
            taken = len(refs)
            if taken >= len(messages):
                await self._dispatch_run(handler, messages, refs)
                return
            # The tap took a leading part: the frame after it goes on its own, then the rest
            # is offered as a batch again.
            await self._dispatch_run(handler, messages[:taken], refs)
            await self._record_and_dispatch(handler, raws[taken], messages[taken])
            raws, messages = raws[taken + 1 :], messages[taken + 1 :]
        for raw, message in zip(raws, messages, strict=True):
            await self._record_and_dispatch(handler, raw, message)

    async def _record_and_dispatch(
        self, handler: BatchNotificationHandler, raw: bytes, message: Message
    ) -> None:
        """Journal one frame of a run, then dispatch it."""
        ref = self._record_nowait(raw, message) if self._tap_nowait is not None else None
        if ref is None:
            ref = await self._record(raw, message)
        await self._dispatch_run(handler, [message], (ref,))

    @staticmethod
    async def _dispatch_run(
        handler: BatchNotificationHandler, messages: list[Message], refs: Sequence[object]
    ) -> None:
        start = 0
        while start < len(messages):
            slow = handler(messages, refs, start)
            if slow is None:
                return
            index, awaitable = slow
            await awaitable
            start = index + 1

    async def _handle_frame(self, line: bytes, message: object) -> bool:
        """Handle one frame that is not a valid notification (those are handled by
        :meth:`_handle_lines` itself). True if it was a valid frame."""
        if message is _UNDECODABLE:
            await self._skip(line, "invalid_json")
            return False
        if type(message) is not dict or message.get("jsonrpc") != "2.0":
            await self._skip(
                line, "not_an_object" if type(message) is not dict else "not_jsonrpc_2"
            )
            return False
        self.last_frame_at = self._loop.time()
        return await self._handle_other(line, message)

    async def _handle_other(self, line: bytes, message: Message) -> bool:
        """Requests, responses, violations and non-envelopes. True if it was a valid frame."""
        tap = self._tap
        kind = jsonrpc.classify(message)
        if kind is None:
            await self._skip(line, "not_an_envelope")
            return False
        if isinstance(kind, Violation):
            ref = await self._record(line, message, violation=kind) if tap is not None else None
            self._violation(kind.kind, kind.detail)
            return True
        ref = await self._record(line, message) if tap is not None else None
        if kind is Kind.RESPONSE:
            self._resolve(message, ref)
        else:
            self._dispatch_request(message, ref)
        return True

    def _record_nowait(self, line: bytes, message: Message) -> object:
        assert self._tap_nowait is not None
        try:
            return self._tap_nowait(line, message)
        except Exception as exc:
            raise TapFailed(f"the durability tap failed on an inbound frame: {exc}") from exc

    async def _record(
        self, line: bytes, message: Message, violation: Violation | None = None
    ) -> object:
        assert self._tap is not None
        try:
            return await self._tap.record(TapFrame("inbound", line, message, None, violation))
        except Exception as exc:
            raise TapFailed(f"the durability tap failed on an inbound frame: {exc}") from exc

    async def _skip(self, line: bytes, reason: str) -> None:
        if line.isspace():
            return  # whitespace-only lines are separators, like blank ones
        self.skipped_frames += 1
        if self._tap is not None:
            marker = Skipped(reason, len(line))
            try:
                await self._tap.record(TapFrame("inbound", line, None, marker))
            except Exception as exc:
                raise TapFailed(f"the durability tap failed on a skipped frame: {exc}") from exc

    def _violation(self, kind: str, detail: str) -> None:
        violation = ProtocolViolation(kind, detail)
        self.violation_count += 1
        self.violations.append(violation)
        if len(self.violations) > MAX_KEPT_VIOLATIONS:
            del self.violations[0]
        if self._on_violation is not None:
            self._on_violation(violation)

    def _resolve(self, message: Message, ref: object) -> None:
        request_id = message["id"]
        pending = (
            self._pending.get(request_id)
            if isinstance(request_id, int) and not isinstance(request_id, bool)
            else None
        )
        if pending is None or pending.future.done():
            if isinstance(request_id, int) and self._abandoned.pop(request_id, None) is not None:
                self.late_responses += 1
                return
            self._violation("unknown_response_id", f"a response to id {request_id!r}, never sent")
            return
        pending.response_ref = ref
        self.last_response_ref = ref
        if pending.on_answer is not None:
            pending.on_answer()
        if "error" in message:
            error = message["error"]
            code = error["code"]
            cls = AuthenticationRequired if code == jsonrpc.AUTH_REQUIRED else AgentRequestError
            pending.future.set_exception(
                cls(pending.method, code, error["message"], error.get("data"))
            )
        else:
            pending.future.set_result(message["result"])

    def _dispatch_request(self, message: Message, ref: object) -> None:
        request_id: RequestId = message["id"]
        method: str = message["method"]
        if request_id in self._inbound:
            self._violation(
                "duplicate_request_id", f"agent reused pending request id {request_id!r}"
            )
            return
        request = InboundRequest(request_id, method, message.get("params"), message, ref)
        if len(self._inbound) >= MAX_CONCURRENT_INBOUND_REQUESTS:
            self._loop.create_task(
                self._answer_error(
                    request_id, jsonrpc.INTERNAL_ERROR, "too many concurrent requests"
                )
            )
            return
        task = self._loop.create_task(self._serve(request), name=f"baton-serve-{method}")
        self._inbound[request_id] = task

    async def _answer_error(self, request_id: RequestId, code: int, text: str) -> None:
        with contextlib.suppress(BatonError):
            await self._write(jsonrpc.error_response(request_id, code, text))

    async def _serve(self, request: InboundRequest) -> None:
        handler = self._request_handlers.get(request.method)
        reply: Message
        try:
            if handler is None:
                reply = jsonrpc.error_response(
                    request.id,
                    jsonrpc.METHOD_NOT_FOUND,
                    f"Method not found: {request.method} ({_capability_note(request.method)})",
                    {"method": request.method},
                )
            else:
                try:
                    result = await handler(request)
                    reply = jsonrpc.result_response(request.id, result)
                except RpcError as exc:
                    reply = jsonrpc.error_response(request.id, exc.code, exc.message, exc.data)
                except asyncio.CancelledError:
                    if self._closed.done():
                        raise
                    reply = jsonrpc.error_response(
                        request.id, jsonrpc.REQUEST_CANCELLED, "Request cancelled"
                    )
                except BatonError as exc:
                    reply = jsonrpc.error_response(request.id, jsonrpc.INTERNAL_ERROR, exc.code)
            with contextlib.suppress(BatonError):
                await self._write(reply)
        finally:
            self._inbound.pop(request.id, None)

    def _cancel_inbound(self, message: Message) -> None:
        params = message.get("params")
        target = params.get("requestId") if isinstance(params, dict) else None
        if not isinstance(target, int | str) or isinstance(target, bool):
            return
        task = self._inbound.get(target)
        if task is not None:
            task.cancel()

    def pending_inbound(self) -> list[RequestId]:
        """Ids of agent requests Baton has not answered yet."""
        return list(self._inbound)
