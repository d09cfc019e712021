"""The agent: reads JSON-RPC from stdin, answers ACP methods, runs prompt turns.

Requests other than session/prompt are answered inline, in arrival order. Each session/prompt
runs as its own task, so session/cancel, permission answers and other requests are read while a
turn streams or waits. A prompt sent while the session's previous prompt is still running is
queued behind it; session/cancel cancels the running prompt and every queued one.

The agent's own requests (session/request_permission, fs/*, terminal/create) carry ids from its
own counter: integers from 0, or UUID strings. Answers are matched to them by id; an answer to
an id the agent never used is logged and dropped.

At stdin EOF (unless ``--eof ignore``) the client can no longer answer, so every wait on it
ends: a pending permission or client request counts as cancelled (-32800), ``wait_for_cancel``
ends as if cancelled, and turns that would never answer (``ignore_cancel``, ``hang``,
``endless``) are dropped. Work that needs nothing from the client (``stream``, ``slow``, queued
prompts) runs to its end, so ``printf '...' | python -m baton.agents.scripted`` works as a
pipeline. The agent exits 0 once no turn is left.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from typing import Any, Final

import orjson

from baton.agents.scripted.context import ClientReply
from baton.agents.scripted.methods import CAPABILITY_OF_METHOD, DEFERRED, AcpMethods, RpcFailure
from baton.agents.scripted.options import AgentOptions, is_advertised
from baton.agents.scripted.script import Script
from baton.agents.scripted.session import Session, SessionShape, SessionStore
from baton.agents.scripted.streams import InputItem, InputPump, Log, OutputClosed, RawWriter
from baton.agents.scripted.turn import Turn
from baton.agents.scripted.v2 import V2, V2Dialect
from baton.wire.jsonrpc import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    REQUEST_CANCELLED,
    Message,
    RequestId,
    error_response,
    is_request_id,
    notification,
    request,
    result_response,
)

#: Exit code after stdin EOF, or after the client stopped reading stdout.
EXIT_OK: Final = 0


class ScriptedAgent:
    """The scripted ACP agent over one pair of byte streams."""

    def __init__(self, options: AgentOptions, out: RawWriter, err: RawWriter) -> None:
        self.options = options
        self.out = out
        self.err = err
        self.log = Log(err, options.verbose)
        self.shape = SessionShape(options)
        self.store = SessionStore(options.state_dir)
        self.hung = False
        #: Set at stdin EOF when the agent exits on EOF: waits that never end give up.
        self.abandoned = asyncio.Event()
        #: Each session's turns: the running one first, then queued prompts.
        self._turns: dict[str, list[Turn]] = {}
        self._prompt_ids: dict[RequestId, Turn] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._pending: dict[RequestId, tuple[asyncio.Future[ClientReply], Turn | None]] = {}
        self._next_request = 0
        self.methods = AcpMethods(self)
        self._methods = self.methods.table()
        #: The v2 dialect once initialize negotiated v2 (None: v1).
        self.dialect: V2Dialect | None = None

    # --- the main loop ---------------------------------------------------------------------

    async def serve(self, input_fd: int) -> int:
        """Read requests from ``input_fd`` until EOF (or until stdout closes); return the exit
        code."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[InputItem] = asyncio.Queue()
        output_gone = asyncio.Event()
        self.out.on_closed = output_gone.set
        pump = InputPump(input_fd, loop, queue, self.options.max_frame_bytes, self.log)
        pump.start()
        while True:
            get = asyncio.ensure_future(queue.get())
            gone = asyncio.ensure_future(output_gone.wait())
            await asyncio.wait({get, gone}, return_when=asyncio.FIRST_COMPLETED)
            gone.cancel()
            if not get.done():
                get.cancel()
                self.log.info("stdout closed; exiting")
                return EXIT_OK
            item = get.result()
            pump.taken()
            if item is None:
                break
            for line in item:
                await self.handle_line(line)
                if output_gone.is_set():
                    self.log.info("stdout closed; exiting")
                    return EXIT_OK
        return await self._at_eof(output_gone)

    async def _at_eof(self, output_gone: asyncio.Event) -> int:
        if not self.options.exit_on_eof:
            self.log.info("stdin closed; still running (--eof ignore)")
            await output_gone.wait()
            return EXIT_OK
        self.log.debug("stdin closed; finishing running turns, then exiting")
        self.abandoned.set()
        for future, _turn in list(self._pending.values()):
            if not future.done():
                future.set_result(
                    ClientReply(error={"code": REQUEST_CANCELLED, "message": "stdin closed"})
                )
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        return EXIT_OK

    # --- dispatch --------------------------------------------------------------------------

    async def handle_line(self, line: bytes) -> None:
        """Handle one inbound frame."""
        if self.hung or not line.strip():
            return
        try:
            message = orjson.loads(line)
        except orjson.JSONDecodeError:
            self._send_error(None, PARSE_ERROR, "Parse error")
            return
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            self._send_error(None, INVALID_REQUEST, "Invalid Request")
            return
        method = message.get("method")
        params = message.get("params")
        if isinstance(method, str):
            self.log.debug(f"<- {method}")
            if "id" not in message:
                self._notification(method, params)
            elif is_request_id(message["id"]):
                await self._request(message["id"], method, params)
            else:
                self._send_error(None, INVALID_REQUEST, "Invalid Request: bad id")
            return
        if "id" in message and ("result" in message or "error" in message):
            self._response(message)
            return
        self._send_error(None, INVALID_REQUEST, "Invalid Request")

    async def _request(self, request_id: RequestId, method: str, params: Any) -> None:
        baseline = False
        if method == "initialize":
            self._choose_dialect(params)
        if self.dialect is not None:
            if method == "session/resume" and isinstance(params, dict):
                self.dialect.note_resume(request_id, params.get("sessionId"))
            method, params, baseline = self.dialect.inbound(request_id, method, params)
        handler = self._methods.get(method)
        if handler is None:
            self._send_error(request_id, METHOD_NOT_FOUND, f"Method not found: {method}")
            return
        capability = CAPABILITY_OF_METHOD.get(method)
        if (
            capability is not None
            and not baseline
            and not self.options.serve_unadvertised
            and not is_advertised(self.options.capabilities, capability)
        ):
            self._send_error(
                request_id,
                METHOD_NOT_FOUND,
                f"Method not found: {method} (the agent does not advertise {capability})",
            )
            return
        if params is None:
            params = {}
        if not isinstance(params, dict):
            self._send_error(request_id, INVALID_PARAMS, "Invalid params: params must be an object")
            return
        try:
            result = await handler(request_id, params)
        except RpcFailure as failure:
            self._send_error(request_id, failure.code, failure.message, failure.data)
            return
        except OutputClosed:
            return
        if result is not DEFERRED:
            self._send(result_response(request_id, result))

    def _choose_dialect(self, params: Any) -> None:
        """Speak v2 when pinned to it, or under ``auto`` when the client offers 2 or more."""
        wanted = self.options.protocol
        offered = params.get("protocolVersion") if isinstance(params, dict) else None
        offers_v2 = isinstance(offered, int) and not isinstance(offered, bool) and offered >= V2
        if wanted == "2" or (wanted == "auto" and offers_v2):
            self.dialect = V2Dialect()
            self.out.translate = self.dialect.outbound
        else:
            self.dialect = None
            self.out.translate = None

    def _notification(self, method: str, params: Any) -> None:
        if not isinstance(params, dict):
            return
        if method == "session/cancel":
            session_id = params.get("sessionId")
            if isinstance(session_id, str):
                self.cancel_session(session_id)
        elif method == "$/cancel_request":
            target = params.get("requestId")
            turn = self._prompt_ids.get(target) if isinstance(target, int | str) else None
            if turn is not None:
                turn.cancel()

    def _response(self, message: Message) -> None:
        request_id = message["id"]
        entry = self._pending.pop(request_id, None) if is_request_id(request_id) else None
        if entry is None:
            self.log.info(f"dropped an answer to id {request_id!r}, which the agent never used")
            return
        future, turn = entry
        if turn is not None:
            turn.pending.discard(request_id)
        if self.dialect is not None:
            for frame in self.dialect.answered(request_id):
                with contextlib.suppress(OutputClosed):
                    self.out.send_raw(frame)
        error = message.get("error")
        reply = (
            ClientReply(error=error if isinstance(error, dict) else {"message": str(error)})
            if "error" in message
            else ClientReply(result=message.get("result"))
        )
        if not future.done():
            future.set_result(reply)

    def _send(self, message: Message) -> None:
        with contextlib.suppress(OutputClosed):
            self.out.send(message)

    def _send_error(
        self, request_id: RequestId | None, code: int, text: str, data: Any = None
    ) -> None:
        self._send(error_response(request_id, code, text, data))

    # --- agent-to-client requests ----------------------------------------------------------

    def next_request_id(self) -> RequestId:
        """The id for the agent's next request: an integer from 0, or a UUID string."""
        if self.options.request_ids == "uuid":
            return str(uuid.uuid4())
        request_id = self._next_request
        self._next_request += 1
        return request_id

    def send_client_request(
        self, method: str, params: Message, turn: Turn | None
    ) -> tuple[RequestId, asyncio.Future[ClientReply]]:
        """Send a request to the client; the future resolves with its answer."""
        request_id = self.next_request_id()
        future: asyncio.Future[ClientReply] = asyncio.get_running_loop().create_future()
        if self.abandoned.is_set():
            future.set_result(
                ClientReply(error={"code": REQUEST_CANCELLED, "message": "stdin closed"})
            )
            return request_id, future
        self._pending[request_id] = (future, turn)
        if turn is not None:
            turn.pending.add(request_id)
        self.out.send(request(request_id, method, params))
        return request_id, future

    def cancel_client_requests(self, request_ids: set[RequestId]) -> None:
        """Send ``$/cancel_request`` for each of these pending requests."""
        for request_id in sorted(request_ids, key=str):
            self._send(notification("$/cancel_request", {"requestId": request_id}))

    # --- turns -----------------------------------------------------------------------------

    def cancel_session(self, session_id: str) -> None:
        """Cancel the session's running turn and every queued one."""
        for turn in self._turns.get(session_id, ()):
            turn.cancel()

    def steer_running_turn(self, session_id: str, text: str) -> bool:
        """Report ``text`` in the session's running turn (``steered: TEXT``); False when no
        turn of the session is running."""
        turns = self._turns.get(session_id)
        if not turns:
            return False
        turns[0].emit(
            {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": f"steered: {text}\n"},
            }
        )
        return True

    def is_busy(self, session_id: str) -> bool:
        """True while the session has a prompt running or queued."""
        return session_id in self._turns

    def start_turn(
        self,
        session: Session,
        request_id: RequestId,
        text: str,
        script: Script,
        *,
        signed_out: bool = False,
    ) -> None:
        """Run a prompt as its own task, queued behind the session's earlier prompts
        (``signed_out``: the turn fails -32000 once started, ``--auth-required turn``)."""
        queue = self._turns.setdefault(session.session_id, [])
        turn = Turn(self, session, request_id, text, script, after=queue[-1] if queue else None)
        turn.signed_out = signed_out
        queue.append(turn)
        self._prompt_ids[request_id] = turn
        if self.dialect is not None:
            for frame in self.dialect.prompt_started(request_id, session.session_id, text):
                with contextlib.suppress(OutputClosed):
                    self.out.send_raw(frame)
        task = asyncio.get_running_loop().create_task(turn.run(), name=f"turn-{request_id!r}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def turn_finished(self, turn: Turn) -> None:
        """A turn ended (answered, failed or silenced)."""
        turns = self._turns.get(turn.session.session_id, [])
        if turn in turns:
            turns.remove(turn)
        if not turns:
            self._turns.pop(turn.session.session_id, None)
        self._prompt_ids.pop(turn.request_id, None)
        self.persist(turn.session)

    def persist(self, session: Session) -> None:
        """Save ``session`` to the state directory (a failure is logged, the turn goes on)."""
        try:
            self.store.save(session)
        except OSError as exc:
            self.log.info(f"could not save session {session.session_id}: {exc}")

    def hang(self) -> None:
        """Freeze: drop all output and ignore all input from now on."""
        self.hung = True
        self.out.freeze()
