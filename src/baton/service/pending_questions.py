"""The service's table of questions that wait for a person: permission requests and the
agents' elicitations (``asking.py``, ``eliciting.py``).

A question is held from the moment the runtime asks until one of: an answer through the API,
the service's wait bound (the caller's ``on_timeout`` reply), or cancellation (the turn was
interrupted or its budget ended). Closed ids are remembered (a bounded number), so a late
answer is told "no longer pending" (409) rather than "never existed" (404). Each opening and
closing is announced to the run's event feed.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Final, Generic, Protocol, TypeVar

from baton.connection.core import cancelled_by_agent

#: Ids of answered (or expired, or withdrawn) questions remembered, so a late answer is told
#: "no longer pending" (409) rather than "never existed" (404). Bounds the memory a stream of
#: questions can hold after they close.
REMEMBERED_CLOSED_IDS: Final = 4096

#: How a question's closing is announced: ``"closed"``, or ``"withdrawn"`` when the agent
#: cancelled its own request (``$/cancel_request``) while the question was open.
CLOSED: Final = "closed"
WITHDRAWN: Final = "withdrawn"

ReplyT = TypeVar("ReplyT")


class Question(Protocol[ReplyT]):
    """What the table needs of a question: its id, the run asking, and the future its answer
    is set on."""

    @property
    def id(self) -> str: ...

    @property
    def run_id(self) -> str | None: ...

    @property
    def answer(self) -> asyncio.Future[ReplyT]: ...


QuestionT = TypeVar("QuestionT", bound=Question)  # type: ignore[type-arg]


class PendingQuestions(Generic[QuestionT, ReplyT]):
    """The open questions of one kind, oldest first, and the ids of recently closed ones."""

    def __init__(self, announce: Callable[[QuestionT, str], None]) -> None:
        """``announce`` is told of each question when it opens (``"opened"``) and closes
        (``"closed"``)."""
        self.announce = announce
        self.open: dict[str, QuestionT] = {}
        self._closed: deque[str] = deque(maxlen=REMEMBERED_CLOSED_IDS)

    def __len__(self) -> int:
        return len(self.open)

    async def hold(
        self, question: QuestionT, wait_seconds: float, on_timeout: Callable[[], ReplyT]
    ) -> ReplyT:
        """Keep ``question`` open until its answer, or ``wait_seconds`` (then
        ``on_timeout()``'s reply). Cancellation-safe: however it ends, the question leaves the
        table, its id is remembered as closed, a late answer can no longer be set, and the
        close is announced (:data:`WITHDRAWN` when the agent cancelled the request)."""
        self.open[question.id] = question
        self.announce(question, "opened")
        closing = CLOSED
        try:
            reply: ReplyT = await asyncio.wait_for(asyncio.shield(question.answer), wait_seconds)
            return reply
        except TimeoutError:
            return on_timeout()
        except asyncio.CancelledError as exc:
            if cancelled_by_agent(exc):
                closing = WITHDRAWN
            raise
        finally:
            del self.open[question.id]
            self._closed.append(question.id)
            if not question.answer.done():
                question.answer.cancel()
            self.announce(question, closing)

    def list(self, run_id: str | None = None) -> list[QuestionT]:
        """The open questions (of one run), oldest first."""
        return [q for q in self.open.values() if run_id is None or q.run_id == run_id]

    def find(
        self,
        question_id: str,
        *,
        not_pending: Callable[[str], Exception],
        not_found: Callable[[str], Exception],
    ) -> QuestionT:
        """The open question ``question_id`` that has no answer yet; else raise
        ``not_pending(id)`` for a question that closed (or was just answered) and
        ``not_found(id)`` for an id this table never held (or forgot)."""
        question = self.open.get(question_id)
        if question is not None and not question.answer.done():
            return question
        if question is not None or question_id in self._closed:
            raise not_pending(question_id)
        raise not_found(question_id)
