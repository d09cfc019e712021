"""One conversation's handle for library users: :class:`Session`, every method the same
machinery as :class:`~baton.runtime.conversations.service.Conversations` (and so the CLI's
and the service's)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

from baton.runtime.conversations.history import HistoryTurn
from baton.runtime.conversations.session_run import SessionRun
from baton.runtime.turns.controls import ControlSet
from baton.runtime.turns.events import RunEvent
from baton.store import Conversation

if TYPE_CHECKING:
    from baton.runtime.conversations.requests import PromptOptions, SteerResult
    from baton.runtime.conversations.service import Conversations
    from baton.runtime.result import RunResult

__all__ = ["Session"]


class Session:
    """One conversation's handle (see :class:`Conversations`); every method is the same
    machinery as the CLI's."""

    def __init__(self, conversations: Conversations, name: str) -> None:
        self.conversations = conversations
        self.name = name

    async def record(self) -> Conversation:
        """The conversation's record, reconciled."""
        return await self.conversations.get(self.name)

    async def prompt(
        self,
        text: str,
        options: PromptOptions | None = None,
        *,
        on_event: Callable[[RunEvent], None] | None = None,
    ) -> RunResult:
        """The next turn (see :meth:`Conversations.prompt`, cancellation included)."""
        return await self.conversations.prompt(self.name, text, options, on_event=on_event)

    async def start(
        self,
        text: str,
        options: PromptOptions | None = None,
        *,
        on_event: Callable[[RunEvent], None] | None = None,
    ) -> SessionRun:
        """Start the next turn; its handle once its run exists (see
        :meth:`Conversations.start`, cancellation included)."""
        return await self.conversations.start(self.name, text, options, on_event=on_event)

    def events(self, text: str, options: PromptOptions | None = None) -> AsyncIterator[RunEvent]:
        """The next turn's events (see :meth:`Conversations.events`)."""
        return self.conversations.events(self.name, text, options)

    def cancel(self) -> bool:
        """Interrupt the running turn in this process (see :meth:`Conversations.cancel`)."""
        return self.conversations.cancel(self.name)

    async def steer(self, text: str) -> SteerResult:
        """Add ``text`` to the running turn (see :meth:`Conversations.steer`)."""
        return await self.conversations.steer(self.name, text)

    def controls(self) -> ControlSet:
        """The attached provider session's safe controls."""
        return self.conversations.controls(self.name)

    async def apply_control(
        self, control_id: object, value: object, revision: object
    ) -> ControlSet:
        """Change one control (see :meth:`Runtime.apply_control`, cancellation included)."""
        return await self.conversations.apply_control(self.name, control_id, value, revision)

    async def history(self, limit: int | None = None) -> list[HistoryTurn]:
        """The conversation's turns, oldest first."""
        return await self.conversations.history(self.name, limit)

    async def fork(self, new_name: str, *, at_turn: int | None = None) -> Session:
        """Fork this conversation as ``new_name`` (see :meth:`Conversations.fork`); the
        fork's handle."""
        record = await self.conversations.fork(self.name, new_name, at_turn=at_turn)
        return Session(self.conversations, record.name)

    async def close(self) -> Conversation:
        """Close the conversation (see :meth:`Conversations.close`, cancellation included)."""
        return await self.conversations.close(self.name)
