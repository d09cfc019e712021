"""Answering elicitation/create: headless declines with a reason, only an elicitor accepts,
form answers re-checked, unsupported forms declined, cancelling turns answer cancel."""

from __future__ import annotations

from typing import Any

import pytest

from acp_schemas import validate_stable
from baton.runtime.permissions import elicitations as el
from baton.runtime.permissions.elicitations import ElicitationReply, settle_elicitation
from baton.wire.capabilities import ElicitationOffer
from baton.wire.elicitation import ElicitationRequest

FORM: dict[str, Any] = {
    "sessionId": "s",
    "mode": "form",
    "message": "Token?",
    "requestedSchema": {
        "properties": {"name": {"type": "string"}, "count": {"type": "integer", "minimum": 1}},
        "required": ["name"],
    },
}
URL: dict[str, Any] = {
    "sessionId": "s",
    "mode": "url",
    "message": "Sign in",
    "url": "https://127.0.0.1/x",
    "elicitationId": "e1",
}


class FakeElicitor:
    def __init__(self, reply: ElicitationReply, offer: ElicitationOffer | None = None) -> None:
        self.reply = reply
        self._offer = offer or ElicitationOffer(form=True, url=True)
        self.asked: list[ElicitationRequest] = []

    @property
    def offer(self) -> ElicitationOffer:
        return self._offer

    async def ask(self, prompt: el.ElicitationPrompt) -> ElicitationReply:
        self.asked.append(prompt.request)
        return self.reply


async def test_headless_declines_with_a_reason() -> None:
    for params in (FORM, URL):
        outcome = await settle_elicitation(params, None)
        assert outcome.answer == {"action": "decline"}
        assert outcome.record["reasonCode"] == el.MODE_NOT_OFFERED
        assert outcome.record["chosenBy"] == "baton"
        validate_stable("CreateElicitationResponse", outcome.answer)


async def test_a_mode_not_offered_is_declined_without_asking() -> None:
    elicitor = FakeElicitor(ElicitationReply("accept"), ElicitationOffer(form=True))
    outcome = await settle_elicitation(URL, elicitor)
    assert outcome.answer == {"action": "decline"} and not elicitor.asked
    assert outcome.record["reasonCode"] == el.MODE_NOT_OFFERED


async def test_accept_form_with_checked_content() -> None:
    elicitor = FakeElicitor(ElicitationReply("accept", {"name": "web", "count": 2.0}))
    outcome = await settle_elicitation(FORM, elicitor)
    assert outcome.answer == {"action": "accept", "content": {"name": "web", "count": 2}}
    assert outcome.record["chosenBy"] == "user" and outcome.record["content"]["name"] == "web"
    validate_stable("CreateElicitationResponse", outcome.answer)


async def test_an_invalid_form_answer_is_declined() -> None:
    elicitor = FakeElicitor(ElicitationReply("accept", {"count": 0}))
    outcome = await settle_elicitation(FORM, elicitor)
    assert outcome.answer == {"action": "decline"}
    assert outcome.record["reasonCode"] == el.ANSWER_INVALID


async def test_url_accept_carries_no_content() -> None:
    outcome = await settle_elicitation(URL, FakeElicitor(ElicitationReply("accept", {"x": 1})))
    assert outcome.answer == {"action": "accept"}


@pytest.mark.parametrize(("action", "answer"), [("decline", "decline"), ("cancel", "cancel")])
async def test_person_declines_or_dismisses(action: str, answer: str) -> None:
    outcome = await settle_elicitation(FORM, FakeElicitor(ElicitationReply(action)))
    assert outcome.answer == {"action": answer} and outcome.record["chosenBy"] == "user"


async def test_unsupported_fields_and_malformed_requests() -> None:
    odd = {**FORM, "requestedSchema": {"properties": {"nested": {"type": "object"}}}}
    elicitor = FakeElicitor(ElicitationReply("accept", {}))
    outcome = await settle_elicitation(odd, elicitor)
    assert outcome.record["reasonCode"] == el.FIELDS_UNSUPPORTED and not elicitor.asked
    broken = await settle_elicitation({"mode": "form"}, elicitor)
    assert broken.answer == {"action": "decline"}
    assert broken.record["reasonCode"] == el.MALFORMED_REQUEST and broken.record["request"] is None


async def test_a_cancelling_turn_answers_cancel() -> None:
    elicitor = FakeElicitor(ElicitationReply("accept", {"name": "x"}))
    outcome = await settle_elicitation(FORM, elicitor, cancelling=True)
    assert outcome.answer == {"action": "cancel"} and not elicitor.asked


async def test_an_advertised_mode_with_nobody_for_the_run_is_no_answerer() -> None:
    both = ElicitationOffer(form=True, url=True)
    outcome = await settle_elicitation(FORM, None, advertised=both)
    assert outcome.answer == {"action": "decline"}
    assert outcome.record["reasonCode"] == el.NO_ANSWERER
    assert outcome.record["chosenBy"] == "baton"


async def test_a_mode_the_lane_did_not_advertise_is_never_asked() -> None:
    elicitor = FakeElicitor(ElicitationReply("accept", {"name": "x"}))
    outcome = await settle_elicitation(FORM, elicitor, advertised=ElicitationOffer())
    assert outcome.record["reasonCode"] == el.MODE_NOT_OFFERED and not elicitor.asked


async def test_an_elicitors_own_answer_is_recorded_as_batons() -> None:
    reply = ElicitationReply.by_baton("decline", "no_user", "no user available")
    outcome = await settle_elicitation(FORM, FakeElicitor(reply))
    assert outcome.answer == {"action": "decline"}
    assert outcome.record["chosenBy"] == "baton" and outcome.record["reasonCode"] == "no_user"
    with pytest.raises(ValueError):
        ElicitationReply.by_baton("accept", "no_user", "never")


def test_a_withdrawn_question_is_cancel_turn_cancelled() -> None:
    outcome = el.withdraw_elicitation(FORM)
    assert outcome.answer == {"action": "cancel"}
    assert outcome.record["reasonCode"] == el.TURN_CANCELLED
    assert outcome.record["request"]["message"] == "Token?"
    validate_stable("CreateElicitationResponse", outcome.answer)
