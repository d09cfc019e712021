"""The questions a turn has open with a person, and the run status they imply.

A permission request the policy hands to a person, or an elicitation put to one, is a
question: while at least one is open the run is AWAITING_APPROVAL (the run-status table's
edge from RUNNING), and RUNNING again once the last is answered, withdrawn or timed out. Every
surface reads the same status and count from the store (``baton runs``, the API, the
inspector). An asker that answers without asking anyone (:class:`NoUserAsker`, no terminal)
opens no question.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable

from baton.errors import BatonError
from baton.runtime.permissions.ask import AskAnswer, Asker, AskPrompt, NoUserAsker
from baton.runtime.permissions.elicitations import ElicitationReply, Elicitor
from baton.wire.capabilities import ElicitationOffer
from baton.wire.elicitation import ElicitationRequest

#: Writes a run's count of open questions (the recorder's ``pending_questions``).
CountWriter = Callable[[str, int], Awaitable[None]]


class OpenQuestions:
    """The count of one run's open questions, written through on every change."""

    def __init__(self, run_id: str, write: CountWriter) -> None:
        self.run_id = run_id
        self._write = write
        self.count = 0

    async def _publish(self) -> None:
        # A status shown is not worth failing the question over (the store is gone or the run
        # moved on); the run's final write clears the count.
        with contextlib.suppress(BatonError):
            await self._write(self.run_id, self.count)

    async def opened(self) -> None:
        """One more question waits for a person. Cancellation: the count is kept; the write
        may be cut off (the next one sets the value again)."""
        self.count += 1
        await self._publish()

    async def closed(self) -> None:
        """A question was answered, withdrawn or timed out. Cancellation: as :meth:`opened`."""
        self.count -= 1
        await self._publish()

    def asker(self, inner: Asker) -> Asker:
        """``inner``, counting each question it puts to a person."""
        if isinstance(inner, NoUserAsker):
            return inner
        return _CountingAsker(self, inner)

    def elicitor(self, inner: Elicitor | None) -> Elicitor | None:
        """``inner``, counting each elicitation it asks (None stays None: nobody is asked)."""
        return None if inner is None else _CountingElicitor(self, inner)


class _CountingAsker:
    def __init__(self, questions: OpenQuestions, inner: Asker) -> None:
        self._questions = questions
        self._inner = inner

    async def ask(self, prompt: AskPrompt) -> AskAnswer:
        """Ask through the inner asker; cancellation: as the inner asker's, and the question
        is counted closed either way."""
        await self._questions.opened()
        try:
            return await self._inner.ask(prompt)
        finally:
            await self._questions.closed()


class _CountingElicitor:
    def __init__(self, questions: OpenQuestions, inner: Elicitor) -> None:
        self._questions = questions
        self._inner = inner

    @property
    def offer(self) -> ElicitationOffer:
        """The inner elicitor's offer."""
        return self._inner.offer

    async def ask(self, request: ElicitationRequest) -> ElicitationReply:
        """Ask through the inner elicitor; cancellation: as the inner elicitor's, and the
        question is counted closed either way."""
        await self._questions.opened()
        try:
            return await self._inner.ask(request)
        finally:
            await self._questions.closed()
