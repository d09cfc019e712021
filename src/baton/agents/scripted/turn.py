"""One prompt turn: runs the prompt's commands in order and answers the prompt.

A turn queued behind an earlier prompt of the same session starts when that one has ended.

Between commands the turn checks for a cancel; once cancelled it runs nothing more and answers
``stopReason: cancelled`` (a cancel always wins over the reason a command chose). A command may
end the turn early (:attr:`Flow.END`) or leave the prompt unanswered for good
(:attr:`Flow.SILENT`). A command that cannot run as asked answers the prompt with -32602.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from baton.agents.scripted import (
    control,
    extensions,
    faults,
    frames,
    live_commands,
    output,
    tools,
    withdraw,
)
from baton.agents.scripted.context import ClientReply, CommandFailed, Flow, Handler
from baton.agents.scripted.frames import StreamBlob
from baton.agents.scripted.script import Script
from baton.agents.scripted.session import HistoryEntry, Session, StreamRecord
from baton.agents.scripted.streams import OutputClosed
from baton.wire.jsonrpc import (
    AUTH_REQUIRED,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    Message,
    RequestId,
    error_response,
    result_response,
)

if TYPE_CHECKING:
    from baton.agents.scripted.agent import ScriptedAgent

#: Every command's handler, by command name.
HANDLERS: Final[Mapping[str, Handler]] = {
    **output.HANDLERS,
    **tools.HANDLERS,
    **control.HANDLERS,
    **faults.HANDLERS,
    **live_commands.HANDLERS,
    **extensions.HANDLERS,
    **withdraw.HANDLERS,
}


class Turn:
    """A running session/prompt. Implements :class:`~baton.agents.scripted.context.TurnContext`."""

    def __init__(
        self,
        agent: ScriptedAgent,
        session: Session,
        request_id: RequestId,
        prompt_text: str,
        script: Script,
        after: Turn | None = None,
    ) -> None:
        self._agent = agent
        self.session = session
        self.request_id = request_id
        self.prompt_text = prompt_text
        self.script = script
        self.options = agent.options
        self.shape = agent.shape
        self.store = agent.store
        self.out = agent.out
        self.err = agent.err
        self.log = agent.log
        self.cancelled = asyncio.Event()
        self.abandoned = agent.abandoned
        self.stop_reason = "end_turn"
        #: ``--auth-required turn`` before authenticate: the turn fails -32000 once started
        #: (v2: after its acknowledgement, as idle with the error stop reason).
        self.signed_out = False
        self.late_updates: list[Message] = []
        #: Ids of this turn's agent-to-client requests still waiting for an answer.
        self.pending: set[RequestId] = set()
        #: session/update notifications sent by this turn (streamed chunks included).
        self.updates = 0
        self._blob: StreamBlob | None = None
        self._after = after
        #: Set when the turn has ended, however it ended.
        self.finished = asyncio.Event()

    # --- TurnContext -----------------------------------------------------------------------

    def emit(self, update: Message, *, record: bool = True) -> None:
        """Send a session/update for this session and record it in history."""
        self.out.send(frames.session_update(self.session.session_id, update))
        self.updates += 1
        if record:
            self.session.record(update)

    def record(self, entry: HistoryEntry) -> None:
        """Record an entry already written (a stream) in history."""
        if isinstance(entry, StreamRecord):
            self.updates += entry.count
        self.session.record(entry)

    def stream_blob(self) -> StreamBlob:
        """The pre-serialized stream lines of this session."""
        if self._blob is None:
            dialect = self._agent.dialect
            session_id = self.session.session_id
            message_id = dialect.agent_message_id(session_id) if dialect is not None else None
            self._blob = StreamBlob(session_id, message_id)
        return self._blob

    def send_request(
        self, method: str, params: Message
    ) -> tuple[RequestId, asyncio.Future[ClientReply]]:
        """Send an agent-to-client request now; the future resolves with the answer."""
        return self._agent.send_client_request(method, params, self)

    async def request(self, method: str, params: Message) -> ClientReply:
        """Send an agent-to-client request and wait for its answer."""
        _request_id, future = self.send_request(method, params)
        return await future

    async def wait_cancelled(self, timeout: float | None, *, or_abandoned: bool = False) -> bool:
        """Wait up to ``timeout`` seconds (None: forever) for a cancel (or, with
        ``or_abandoned``, for stdin EOF); True if one came."""
        events = [self.cancelled, self.abandoned] if or_abandoned else [self.cancelled]
        if any(event.is_set() for event in events):
            return True
        waits = [asyncio.ensure_future(event.wait()) for event in events]
        try:
            done, _pending = await asyncio.wait(
                waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            for wait in waits:
                wait.cancel()
        return bool(done)

    def hang(self) -> None:
        """Freeze the whole agent."""
        self._agent.hang()

    @property
    def client_capabilities(self) -> Message:
        """The ``clientCapabilities`` the client offered in its initialize."""
        return self._agent.methods.client_capabilities

    # --- running ---------------------------------------------------------------------------

    def cancel(self) -> None:
        """session/cancel (or session/close) for this turn."""
        if self.cancelled.is_set():
            return
        self.cancelled.set()
        if self.options.cancel_requests:
            self._agent.cancel_client_requests(self.pending)

    async def run(self) -> None:
        """Run the commands and answer the prompt (unless a command silenced the turn)."""
        try:
            if self._after is not None:
                await self._after.finished.wait()
            if self.signed_out:
                self._answer_error(AUTH_REQUIRED, "Authentication required")
                return
            result = await self._execute()
            if result is not None:
                # Saved before the answer: a client that stops the agent as soon as it has
                # the answer finds the turn (its title, its history) in the next process.
                self._agent.persist(self.session)
                self.out.send(result_response(self.request_id, result))
                for update in self.late_updates:
                    self.emit(update)
        except CommandFailed as exc:
            self._answer_error(INVALID_PARAMS, str(exc))
        except OutputClosed:
            pass
        except Exception as exc:  # a bug in the agent: answer rather than leave the turn hanging
            self.log.info(f"turn {self.request_id!r} failed: {type(exc).__name__}: {exc}")
            self._answer_error(INTERNAL_ERROR, f"scripted agent error: {type(exc).__name__}")
        finally:
            self.finished.set()
            self._agent.turn_finished(self)

    def _answer_error(self, code: int, text: str) -> None:
        with contextlib.suppress(OutputClosed):
            self.out.send(error_response(self.request_id, code, text))

    async def _execute(self) -> dict[str, Any] | None:
        self.session.record(frames.user_chunk(self.prompt_text))
        if self.script.echo_text is not None and not self.cancelled.is_set():
            self.emit(frames.message_chunk(self.script.echo_text))
        for command in self.script.commands:
            if self.cancelled.is_set():
                break
            self.log.debug(f"turn {self.request_id!r}: {command.name}")
            flow = await HANDLERS[command.name](self, command)
            if flow is Flow.SILENT:
                return None
            if flow is Flow.END:
                break
        if self.cancelled.is_set():
            self.stop_reason = "cancelled"
        result: dict[str, Any] = {"stopReason": self.stop_reason}
        if self.options.prompt_usage:
            output_tokens = self.updates
            input_tokens = len(self.prompt_text)
            result["usage"] = {
                "inputTokens": input_tokens,
                "outputTokens": output_tokens,
                "cachedReadTokens": 0,
                "cachedWriteTokens": 0,
                "totalTokens": input_tokens + output_tokens,
            }
        return result
