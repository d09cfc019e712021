"""The service's table of pending elicitations on its own: bounded, cancellation-safe, 404 for
an id never seen and 409 for one closed, and only valid form answers accepted."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from baton.errors import ApiRequestInvalid, ElicitationAnswerInvalid
from baton.runtime.permissions.elicitations import ElicitationPrompt
from baton.service import eliciting
from baton.service.eliciting import (
    ApiElicitor,
    ElicitationNotFound,
    ElicitationNotPending,
    PendingElicitation,
)
from baton.wire.elicitation import parse_elicitation_request

REQUEST = parse_elicitation_request(
    {
        "sessionId": "s",
        "mode": "form",
        "message": "token ghp_" + "A1b2C3d4E5" * 3 + "F6g7H8 please",
        "requestedSchema": {
            "properties": {"n": {"type": "integer", "maximum": 3, "description": "count"}},
            "required": ["n"],
        },
    }
)
#: The question as the run's turn asks it: the request and the run id it carries.
FORM = ElicitationPrompt(REQUEST, "run-1")


def elicitor(wait: float = 30.0) -> tuple[ApiElicitor, list[tuple[str, str]]]:
    said: list[tuple[str, str]] = []

    def announce(pending: PendingElicitation, what: str) -> None:
        said.append((pending.id, what))

    return ApiElicitor(announce=announce, wait_seconds=wait), said


async def opened(table: ApiElicitor) -> str:
    for _ in range(100):
        if table.list():
            break
        await asyncio.sleep(0)
    [only] = table.pending
    return only


async def test_an_answer_closes_the_question_and_a_late_one_is_409() -> None:
    table, said = elicitor()
    task = asyncio.ensure_future(table.ask(FORM))
    question = await opened(table)
    view = table.pending[question].to_json()
    assert view["runId"] == "run-1" and view["fields"][0]["description"] == "count"
    assert "A1b2C3d4E5" not in view["message"]  # redacted
    with pytest.raises(ElicitationAnswerInvalid):
        table.answer(question, "accept", {"n": 4})
    with pytest.raises(ApiRequestInvalid):
        table.answer(question, "decline", {"n": 1})
    assert question in table.pending  # still open after the refusals
    table.answer(question, "accept", {"n": 3.0})
    reply = await task
    assert reply.action == "accept" and reply.content == {"n": 3}
    assert said == [(question, "opened"), (question, "closed")]
    with pytest.raises(ElicitationNotPending):
        table.answer(question, "decline", None)
    with pytest.raises(ElicitationNotFound):
        table.answer("elic-unknown", "decline", None)


async def test_a_cancelled_wait_closes_the_question() -> None:
    table, said = elicitor()
    task = asyncio.ensure_future(table.ask(FORM))
    question = await opened(table)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert table.pending == {} and said[-1] == (question, "closed")
    with pytest.raises(ElicitationNotPending):
        table.answer(question, "accept", {"n": 1})


async def test_the_wait_and_the_bound_decline_as_baton(monkeypatch: Any) -> None:
    table, _said = elicitor(wait=0.05)
    reply = await table.ask(FORM)
    assert (reply.action, reply.reason_code) == ("decline", "no_user")
    monkeypatch.setattr(eliciting, "MAX_PENDING_ELICITATIONS", 1)
    table, _said = elicitor()
    first = asyncio.ensure_future(table.ask(FORM))
    await opened(table)
    second = await table.ask(FORM)
    assert (second.action, second.reason_code) == ("decline", "no_user")
    assert len(table.pending) == 1
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
