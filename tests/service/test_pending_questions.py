"""The service's shared table of questions waiting for a person (permissions, elicitations)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import pytest

from baton.service.pending_questions import REMEMBERED_CLOSED_IDS, PendingQuestions


@dataclass
class Ask:
    id: str
    run_id: str | None
    answer: asyncio.Future[str] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class Gone(Exception):
    pass


class Unknown(Exception):
    pass


def find(table: PendingQuestions[Ask, str], question_id: str) -> Ask:
    return table.find(question_id, not_pending=Gone, not_found=Unknown)


async def test_an_answer_is_returned_and_the_question_closes() -> None:
    said: list[tuple[str, str]] = []
    table: PendingQuestions[Ask, str] = PendingQuestions(lambda q, what: said.append((q.id, what)))
    question = Ask("q1", "run-1")
    held = asyncio.ensure_future(table.hold(question, 30.0, lambda: "timeout"))
    await asyncio.sleep(0)
    assert table.list("run-1") == [question] and table.list("run-2") == []
    find(table, "q1").answer.set_result("yes")
    with pytest.raises(Gone):  # answered, not yet removed: no second answer
        find(table, "q1")
    assert await held == "yes"
    assert len(table) == 0 and said == [("q1", "opened"), ("q1", "closed")]
    with pytest.raises(Gone):
        find(table, "q1")
    with pytest.raises(Unknown):
        find(table, "never")


async def test_the_wait_bound_gives_the_callers_reply() -> None:
    table: PendingQuestions[Ask, str] = PendingQuestions(lambda q, what: None)
    question = Ask("q2", None)
    assert await table.hold(question, 0.01, lambda: "nobody") == "nobody"
    assert question.answer.cancelled() and len(table) == 0


async def test_cancellation_closes_the_question_and_refuses_a_late_answer() -> None:
    said: list[str] = []
    table: PendingQuestions[Ask, str] = PendingQuestions(lambda q, what: said.append(what))
    held = asyncio.ensure_future(table.hold(Ask("q3", None), 30.0, lambda: "timeout"))
    await asyncio.sleep(0)
    held.cancel()
    with pytest.raises(asyncio.CancelledError):
        await held
    assert said == ["opened", "closed"] and len(table) == 0
    with pytest.raises(Gone):
        find(table, "q3")


async def test_closed_ids_are_remembered_up_to_the_bound() -> None:
    table: PendingQuestions[Ask, str] = PendingQuestions(lambda q, what: None)
    for index in range(REMEMBERED_CLOSED_IDS + 1):
        await table.hold(Ask(f"q{index}", None), 0, lambda: "x")
    with pytest.raises(Unknown):  # the oldest was forgotten
        find(table, "q0")
    with pytest.raises(Gone):
        find(table, f"q{REMEMBERED_CLOSED_IDS}")
