"""Elicitations held for an answer through the API (runs under ``ask`` in the service).

:class:`ApiElicitor` is the runtime's :class:`~baton.runtime.permissions.elicitations.Elicitor`
for the service: each ``elicitation/create`` of a run under ``ask`` becomes a
:class:`PendingElicitation` that `GET /api/v1/elicitations` lists (the run, the mode, the
message, the form's fields or the URL, all redacted) until someone answers it with ``accept``
(with the form's content), ``decline`` or ``cancel``. A form answer that breaks the request's
schema subset is refused (422 ``ELICITATION_ANSWER_INVALID``) and leaves the question pending,
so the person can correct it. Nothing is accepted on anyone's behalf: a question nobody answers
within the service's wait is declined as "no user available" (``no_user``, chosen by Baton);
one whose turn is interrupted is withdrawn (the turn answers ``cancel``, ``turn_cancelled``).
An answer to a question that is no longer pending is refused (409) and changes nothing; an id
never seen is 404.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

from baton.durable.timestamps import format_timestamp
from baton.errors import ApiRequestInvalid, ElicitationNotFound, ElicitationNotPending
from baton.redaction import redact_json, redact_text
from baton.runtime.permissions.ask import NO_USER, NO_USER_REASON
from baton.runtime.permissions.elicitations import ElicitationPrompt, ElicitationReply
from baton.service.limits import DEFAULT_ELICITATION_WAIT_SECONDS, MAX_PENDING_ELICITATIONS
from baton.service.pending_questions import PendingQuestions
from baton.wire.capabilities import ElicitationOffer
from baton.wire.elicitation import FORM, URL, ElicitationRequest, FormField, validate_form_answer

#: The answers a person can give.
ACTIONS: Final = ("accept", "decline", "cancel")


def require_action(action: str) -> None:
    """Refuse an answer's ``action`` that is not one of :data:`ACTIONS` (API_REQUEST_INVALID)."""
    if action not in ACTIONS:
        raise ApiRequestInvalid(f"action must be one of {', '.join(ACTIONS)}")


def _field_view(form_field: FormField) -> dict[str, Any]:
    """One field as the API shows it: what a form needs to be built (bounded by the parser)."""
    view: dict[str, Any] = {
        "name": form_field.name,
        "type": form_field.type,
        "title": form_field.title,
        "description": form_field.description,
        "required": form_field.required,
    }
    if form_field.choices:
        view["choices"] = [{"value": c.value, "title": c.title} for c in form_field.choices]
    for key, value in (
        ("minLength", form_field.min_length),
        ("maxLength", form_field.max_length),
        ("format", form_field.format),
        ("minimum", form_field.minimum),
        ("maximum", form_field.maximum),
        ("minItems", form_field.min_items),
        ("maxItems", form_field.max_items),
    ):
        if value is not None:
            view[key] = value
    return view


@dataclass
class PendingElicitation:
    """One question waiting for an answer."""

    id: str
    run_id: str | None
    request: ElicitationRequest
    asked_at: str
    answer: asyncio.Future[ElicitationReply] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )

    def to_json(self) -> dict[str, Any]:
        """The API's view: ids, the mode, the message, and the form's fields (a redacted view
        of the requested schema's subset Baton checks) or the URL; redacted like run events."""
        request = self.request
        view: dict[str, Any] = {
            "id": self.id,
            "runId": self.run_id,
            "providerSessionId": request.session_id,
            "toolCallId": request.tool_call_id,
            "mode": request.mode,
            "message": redact_text(request.message),
            "askedAt": self.asked_at,
        }
        if request.mode == FORM:
            view["fields"] = redact_json([_field_view(f) for f in request.fields], None)
        if request.mode == URL:
            # Shown as sent: the person must open exactly this URL (as at the terminal).
            view["url"] = request.url
            view["elicitationId"] = request.elicitation_id
        return view


class ApiElicitor:
    """The elicitor of a service's runtime: questions wait for an answer through the API."""

    def __init__(
        self,
        *,
        announce: Callable[[PendingElicitation, str], None],
        wait_seconds: float = DEFAULT_ELICITATION_WAIT_SECONDS,
        nobody_answers: Callable[[str | None], bool] = lambda _run_id: False,
    ) -> None:
        """``announce`` is told of each question when it opens (``"opened"``) and closes
        (``"closed"``); ``nobody_answers(run_id)`` True declines a run's question at once, "no
        user available" (:mod:`baton.service.answerers`)."""
        self.wait_seconds = wait_seconds
        self.nobody_answers = nobody_answers
        self.questions: PendingQuestions[PendingElicitation, ElicitationReply] = PendingQuestions(
            announce
        )

    @property
    def offer(self) -> ElicitationOffer:
        """Form and URL: the API (and the inspector's page) can answer both."""
        return ElicitationOffer(form=True, url=True)

    async def ask(self, prompt: ElicitationPrompt) -> ElicitationReply:
        """Hold the question until an answer, the service's wait (then declined, ``no_user``),
        or cancellation (the turn was interrupted). Cancellation-safe: the question stops being
        pending and its close is announced."""
        if self.nobody_answers(prompt.run_id):
            return ElicitationReply.by_baton("decline", NO_USER, NO_USER_REASON)
        if len(self.questions) >= MAX_PENDING_ELICITATIONS:
            return ElicitationReply.by_baton(
                "decline",
                NO_USER,
                f"{NO_USER_REASON} ({MAX_PENDING_ELICITATIONS} elicitations already wait)",
            )
        pending = PendingElicitation(
            id="elic-" + secrets.token_hex(8),
            run_id=prompt.run_id,
            request=prompt.request,
            asked_at=format_timestamp(datetime.now(UTC)),
        )
        return await self.questions.hold(
            pending,
            self.wait_seconds,
            lambda: ElicitationReply.by_baton(
                "decline",
                NO_USER,
                f"{NO_USER_REASON} (nobody answered within {self.wait_seconds:g}s)",
            ),
        )

    @property
    def pending(self) -> dict[str, PendingElicitation]:
        """The open questions by id (read-only use: the table owns them)."""
        return self.questions.open

    def list(self, run_id: str | None = None) -> list[PendingElicitation]:
        """The pending questions (of one run), oldest first."""
        return self.questions.list(run_id)

    def answer(
        self, elicitation_id: str, action: str, content: Mapping[str, Any] | None
    ) -> PendingElicitation:
        """Answer a pending question. ``accept`` of a form needs ``content`` valid against the
        form (else :class:`~baton.errors.ElicitationAnswerInvalid`, and the question stays
        pending); ``decline`` and ``cancel`` take no content."""
        pending = self.questions.find(
            elicitation_id,
            not_pending=lambda i: ElicitationNotPending(f"elicitation {i} is no longer pending"),
            not_found=lambda i: ElicitationNotFound(f"no elicitation {i!r}"),
        )
        require_action(action)
        if content is not None and not (action == "accept" and pending.request.mode == FORM):
            raise ApiRequestInvalid("content goes only with accept, and only for a form")
        if action == "accept" and pending.request.mode == FORM:
            checked = validate_form_answer(pending.request, content or {})
            pending.answer.set_result(ElicitationReply("accept", checked))
            return pending
        pending.answer.set_result(ElicitationReply(action))
        return pending
