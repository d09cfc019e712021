"""What a command handler sees of its turn: the :class:`TurnContext` protocol and its results.

Command handlers (:mod:`~baton.agents.scripted.output`, :mod:`~baton.agents.scripted.control`,
:mod:`~baton.agents.scripted.tools`, :mod:`~baton.agents.scripted.faults`) are
``async def handler(turn: TurnContext, command: Command) -> Flow``.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from baton.agents.scripted.frames import StreamBlob
from baton.agents.scripted.options import AgentOptions
from baton.agents.scripted.script import Command
from baton.agents.scripted.session import HistoryEntry, Session, SessionShape, SessionStore
from baton.agents.scripted.streams import Log, RawWriter
from baton.wire.jsonrpc import Message, RequestId


class Flow(enum.Enum):
    """What the turn does after a command."""

    #: Run the next command (or end the turn with its stop reason if this was the last).
    NEXT = "next"
    #: End the turn now with the turn's ``stop_reason``.
    END = "end"
    #: End the turn and never answer the prompt.
    SILENT = "silent"


class CommandFailed(Exception):
    """A command cannot run as asked; the prompt is answered -32602 with this message."""


@dataclass(frozen=True, slots=True)
class ClientReply:
    """The client's answer to one of the agent's requests: a result or an error object."""

    result: Any = None
    error: Message | None = None

    @property
    def ok(self) -> bool:
        """True for a result."""
        return self.error is None

    @property
    def error_code(self) -> int | None:
        """The error's code, if the answer is an error."""
        if self.error is None:
            return None
        code = self.error.get("code")
        return code if isinstance(code, int) else None


class TurnContext(Protocol):
    """One running prompt turn, as its commands use it."""

    session: Session
    options: AgentOptions
    #: The agent's session shapes (its model catalog) and sessions.
    shape: SessionShape
    store: SessionStore
    out: RawWriter
    err: RawWriter
    log: Log
    #: Set by session/cancel, session/close or ``$/cancel_request`` for the prompt.
    cancelled: asyncio.Event
    #: Set at stdin EOF when the agent exits on EOF: waits that never end must give up.
    abandoned: asyncio.Event
    #: The stopReason the turn answers with.
    stop_reason: str
    #: Updates to send after the prompt response (``late_update``).
    late_updates: list[Message]

    @property
    def client_capabilities(self) -> Message:
        """The ``clientCapabilities`` the client offered in its initialize."""
        ...

    def emit(self, update: Message, *, record: bool = True) -> None:
        """Send a session/update for this session (and record it in history)."""
        ...

    def record(self, entry: HistoryEntry) -> None:
        """Record something already written (a stream) in history."""
        ...

    def stream_blob(self) -> StreamBlob:
        """The pre-serialized stream lines of this session."""
        ...

    def send_request(
        self, method: str, params: Message
    ) -> tuple[RequestId, asyncio.Future[ClientReply]]:
        """Send an agent-to-client request now; the future resolves with the client's answer."""
        ...

    async def request(self, method: str, params: Message) -> ClientReply:
        """Send an agent-to-client request and wait for the answer."""
        ...

    async def wait_cancelled(self, timeout: float | None, *, or_abandoned: bool = False) -> bool:
        """Wait up to ``timeout`` seconds (None: forever) for a cancel (or, with
        ``or_abandoned``, for stdin EOF); True if one came."""
        ...

    def hang(self) -> None:
        """Freeze the whole agent: drop all output and ignore all input from now on."""
        ...


Handler = Callable[[TurnContext, Command], Awaitable[Flow]]
