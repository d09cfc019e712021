"""Answering the agent's ``elicitation/create`` during a run.

Baton advertises elicitation only when someone can answer (an :class:`Elicitor`: a person at a
TTY under the ``ask`` policy, or the service's API); the lane then serves the request and hands
it to the session's active run. :func:`settle_elicitation` decides the answer:

- a malformed request, a mode Baton did not offer (always the case headless: nothing was
  offered), a form with a field Baton cannot present, or no active run: ``decline``, with a
  recorded reason and ``chosenBy: baton``;
- a turn being cancelled: ``cancel``; a question still open when its turn is interrupted
  (cancel, interrupt, the turn budget) is withdrawn the same way (:func:`withdraw_elicitation`);
- a run nobody answers for (a lane that advertised elicitation for another run, e.g. the
  service's ``ask`` runs beside an unattended one): ``decline`` (``no_answerer``);
- otherwise the elicitor asks; a form answer is checked against the request's schema subset
  once more (an invalid one becomes ``decline``). Nothing is ever accepted automatically: only
  an :class:`Elicitor` (a person or an API caller) can say ``accept``.

Every request and answer is journaled by the connection's tap (as every frame is); the record
this module returns (``request``, ``action``, ``reasonCode``, ``reason``, ``chosenBy``,
``content``) goes into the run's events and items, redacted like any run event: credential-named
fields and credential-looking values are masked.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Protocol

from baton.errors import ElicitationAnswerInvalid, InvalidElicitationRequest
from baton.wire.capabilities import ElicitationOffer
from baton.wire.elicitation import (
    FORM,
    URL,
    ElicitationRequest,
    accept_answer,
    cancel_answer,
    decline_answer,
    parse_elicitation_request,
    validate_form_answer,
)

#: Reason codes of an answer Baton chose itself (``chosenBy: baton``).
MALFORMED_REQUEST: Final = "malformed_request"
MODE_NOT_OFFERED: Final = "mode_not_offered"
FIELDS_UNSUPPORTED: Final = "fields_unsupported"
NO_ACTIVE_PROMPT: Final = "no_active_prompt"
TURN_CANCELLED: Final = "turn_cancelled"
#: The agent withdrew its own question (``$/cancel_request``) before it was answered.
AGENT_CANCELLED: Final = "agent_cancelled"
ANSWER_INVALID: Final = "answer_invalid"
NO_ANSWERER: Final = "no_answerer"
#: The reason code of an answer a person (or an API caller) gave.
ANSWERED: Final = "answered"


@dataclass(frozen=True, slots=True)
class ElicitationReply:
    """What an elicitor's person said: ``accept`` (with ``content`` for a form), ``decline``
    or ``cancel``. An elicitor that answers without a person (nobody answered within its
    wait) sets ``reason_code`` and ``reason``: the record then says Baton chose, and why; such
    a reply can never accept."""

    action: str
    content: Mapping[str, Any] | None = None
    reason_code: str | None = None
    reason: str | None = None

    @classmethod
    def by_baton(cls, action: str, reason_code: str, reason: str) -> ElicitationReply:
        """A ``decline`` or ``cancel`` Baton chose (never ``accept``)."""
        if action not in ("decline", "cancel"):
            raise ValueError(f"Baton never answers {action!r} on its own")
        return cls(action, None, reason_code, reason)


@dataclass(frozen=True, slots=True)
class ElicitationPrompt:
    """What an elicitor is asked: the agent's request, and the run whose turn asks (None
    only outside a run, as in tests)."""

    request: ElicitationRequest
    run_id: str | None = None


class Elicitor(Protocol):
    """Someone who can answer elicitations: which modes they offer, and how they ask."""

    @property
    def offer(self) -> ElicitationOffer:
        """The modes advertised in ``initialize`` for lanes of this runtime."""
        ...

    async def ask(self, prompt: ElicitationPrompt) -> ElicitationReply:
        """Ask and wait for the answer. Cancellation: the waiting is abandoned (the caller then
        answers ``cancel``)."""
        ...


@dataclass(frozen=True, slots=True)
class ElicitationOutcome:
    """The answer to send and the record to keep."""

    answer: dict[str, Any]
    record: dict[str, Any]


def _outcome(
    answer: dict[str, Any],
    request: ElicitationRequest | None,
    reason_code: str,
    reason: str,
    chosen_by: str,
) -> ElicitationOutcome:
    record: dict[str, Any] = {
        "request": request.to_json() if request is not None else None,
        "action": answer["action"],
        "reasonCode": reason_code,
        "reason": reason,
        "chosenBy": chosen_by,
    }
    if "content" in answer:
        record["content"] = dict(answer["content"])
    return ElicitationOutcome(answer, record)


def withdraw_elicitation(params: object, *, by_agent: bool = False) -> ElicitationOutcome:
    """``cancel`` for a question still open when its turn was interrupted (a cancel, an
    interrupt, the turn budget, a lost lane): nobody answered, the turn stopped asking. With
    ``by_agent`` the agent itself withdrew it (``$/cancel_request``, answered -32800): the
    record says so (``agent_cancelled``, chosen by the agent)."""
    try:
        request: ElicitationRequest | None = parse_elicitation_request(params)
    except InvalidElicitationRequest:
        request = None
    if by_agent:
        return _outcome(
            cancel_answer(),
            request,
            AGENT_CANCELLED,
            "the agent cancelled its question while it was open",
            "agent",
        )
    return _outcome(
        cancel_answer(),
        request,
        TURN_CANCELLED,
        "the turn was cancelled while the question was open",
        "baton",
    )


def refuse_elicitation(params: object, reason_code: str, reason: str) -> ElicitationOutcome:
    """Decline without asking (no active run, a stale generation); the request is parsed for
    the record when it can be."""
    try:
        request: ElicitationRequest | None = parse_elicitation_request(params)
    except InvalidElicitationRequest:
        request = None
    return _outcome(decline_answer(), request, reason_code, reason, "baton")


async def settle_elicitation(
    params: object,
    elicitor: Elicitor | None,
    *,
    cancelling: bool = False,
    advertised: ElicitationOffer | None = None,
    run_id: str | None = None,
) -> ElicitationOutcome:
    """Decide the answer to one ``elicitation/create`` (see the module docstring).

    ``elicitor`` answers for the run (None: nobody does); ``advertised`` is what the agent's
    connection was offered at ``initialize`` (default: the elicitor's offer). A mode not
    advertised is ``mode_not_offered``; an advertised one with nobody to answer for this run is
    ``no_answerer``. ``run_id``: the asking run's, carried by the question. Cancellation: the elicitor's wait is cancelled with the caller (the caller
    answers :func:`withdraw_elicitation`)."""
    try:
        request = parse_elicitation_request(params)
    except InvalidElicitationRequest as exc:
        return _outcome(decline_answer(), None, MALFORMED_REQUEST, exc.message, "baton")
    if advertised is None:
        advertised = elicitor.offer if elicitor is not None else ElicitationOffer()
    offered = (request.mode == FORM and advertised.form) or (request.mode == URL and advertised.url)
    if offered and elicitor is None:
        return _outcome(
            decline_answer(),
            request,
            NO_ANSWERER,
            "nobody here answers elicitations for this run (its policy is not one Baton asks under)",
            "baton",
        )
    answerable = elicitor is not None and (
        (request.mode == FORM and elicitor.offer.form)
        or (request.mode == URL and elicitor.offer.url)
    )
    if elicitor is None or not offered or not answerable:
        return _outcome(
            decline_answer(),
            request,
            MODE_NOT_OFFERED,
            f"Baton did not offer {request.mode!r} elicitation (nobody here can answer it)",
            "baton",
        )
    if request.unsupported_fields:
        return _outcome(
            decline_answer(),
            request,
            FIELDS_UNSUPPORTED,
            "the form has fields Baton cannot present: " + ", ".join(request.unsupported_fields),
            "baton",
        )
    if cancelling:
        return _outcome(
            cancel_answer(), request, TURN_CANCELLED, "the turn is being cancelled", "baton"
        )
    reply = await elicitor.ask(ElicitationPrompt(request, run_id))
    if reply.reason_code is not None:
        answer = cancel_answer() if reply.action == "cancel" else decline_answer()
        return _outcome(answer, request, reply.reason_code, reply.reason or "", "baton")
    if reply.action == "accept":
        if request.mode == URL:
            return _outcome(accept_answer(), request, ANSWERED, "the user accepted", "user")
        try:
            content = validate_form_answer(request, reply.content or {})
        except ElicitationAnswerInvalid as exc:
            return _outcome(decline_answer(), request, ANSWER_INVALID, exc.message, "baton")
        return _outcome(accept_answer(content), request, ANSWERED, "the user accepted", "user")
    if reply.action == "cancel":
        return _outcome(cancel_answer(), request, ANSWERED, "the user dismissed it", "user")
    return _outcome(decline_answer(), request, ANSWERED, "the user declined", "user")
