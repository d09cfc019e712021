"""The questions of a turn run by `baton serve`, answered where the person who started it is
(issue 30, item 1).

`baton run --session NAME` through the service follows the run's event stream; the service
announces each question on it (``permission_request``/``permission_closed``,
``elicitation_request``/``elicitation_closed``). :class:`RemoteQuestions` puts each one to this
CLI's terminal with the same prompts as an in-process run (:class:`~baton.cli.permission_prompt.
TtyAsker`, :class:`~baton.cli.elicitation_prompt.TtyElicitor`) and sends the answer through
the API. The inspector and the API can answer the same question: the first answer wins; when
someone else answered first the terminal's prompt is withdrawn and says so, and an answer typed
too late is told it was no longer pending.

Without a terminal the CLI cannot answer: it says what is asked, the question's id and the
inspector's URL, while the question waits for someone else (the service answers it at once,
"no user available", when nobody else follows the run: :mod:`baton.service.answerers`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import quote

from baton.cli.elicitation_prompt import TtyElicitor
from baton.cli.permission_prompt import ANSWERED_ELSEWHERE, TtyAsker, describe
from baton.cli.service_link import ServiceClient
from baton.cli.terminal import WAITING_LABEL, Screen, visible
from baton.connection.core import AGENT_CANCELLED_REQUEST
from baton.errors import BatonError, ServiceRefused
from baton.runtime.permissions.ask import AskAnswer, Asker, AskPrompt
from baton.runtime.permissions.elicitations import ElicitationPrompt, ElicitationReply, Elicitor
from baton.runtime.permissions.local_policy import LocalDecision
from baton.wire.elicitation import Choice, ElicitationRequest, FormField
from baton.wire.permission import PermissionOption, PermissionRequest

#: The spinner's words while a person is asked (at this terminal or elsewhere).
ANSWER_LABEL: Final = "waiting for your answer"
#: The spinner's words while a question waits for someone elsewhere (no terminal here).
ELSEWHERE_LABEL: Final = "waiting for your answer (in the inspector or through the API)"
#: HTTP status of an answer to a question that is no longer pending.
NOT_PENDING_STATUS: Final = 409

QUESTION_EVENTS: Final = frozenset(
    {"permission_request", "permission_closed", "elicitation_request", "elicitation_closed"}
)


def prompt_from_view(view: Mapping[str, Any], run_id: str) -> AskPrompt:
    """The :class:`AskPrompt` a ``permission_request`` event's view describes (the service's
    redacted tool call and the options it offers, in the agent's order)."""
    options = tuple(
        PermissionOption(str(o.get("optionId")), str(o.get("name")), str(o.get("kind")))
        for o in view.get("options") or []
        if isinstance(o, dict)
    )
    tool_call = view.get("toolCall")
    tool_call = dict(tool_call) if isinstance(tool_call, dict) else {}
    local = view.get("local") if isinstance(view.get("local"), dict) else {}
    assert isinstance(local, dict)
    request = PermissionRequest(
        str(view.get("providerSessionId") or ""),
        str(view.get("toolCallId") or ""),
        tool_call,
        options,
    )
    decision = LocalDecision(
        bool(local.get("permitsAllow", True)),
        str(local.get("reasonCode") or ""),
        str(local.get("detail") or ""),
    )
    return AskPrompt(request, tool_call, options, decision, str(view.get("reason") or ""), run_id)


def _field_from_view(view: Mapping[str, Any]) -> FormField:
    choices = tuple(
        Choice(str(c.get("value")), str(c.get("title") or c.get("value")))
        for c in view.get("choices") or []
        if isinstance(c, dict)
    )
    return FormField(
        name=str(view.get("name")),
        type=view.get("type"),  # type: ignore[arg-type]  # the service's own field types
        title=view.get("title"),
        description=view.get("description"),
        required=bool(view.get("required")),
        choices=choices,
        min_length=view.get("minLength"),
        max_length=view.get("maxLength"),
        format=view.get("format"),
        minimum=view.get("minimum"),
        maximum=view.get("maximum"),
        min_items=view.get("minItems"),
        max_items=view.get("maxItems"),
    )


def elicitation_from_view(view: Mapping[str, Any], run_id: str) -> ElicitationPrompt:
    """The :class:`ElicitationPrompt` an ``elicitation_request`` event's view describes."""
    fields = tuple(_field_from_view(f) for f in view.get("fields") or [] if isinstance(f, dict))
    request = ElicitationRequest(
        mode=str(view.get("mode")),
        message=str(view.get("message") or ""),
        session_id=view.get("providerSessionId"),
        tool_call_id=view.get("toolCallId"),
        fields=fields,
        url=view.get("url"),
        elicitation_id=view.get("elicitationId"),
    )
    return ElicitationPrompt(request, run_id)


class RemoteQuestions:
    """The open questions of one run followed through the service, and their prompts."""

    def __init__(
        self,
        client: ServiceClient,
        screen: Screen,
        asker: Asker,
        elicitor: Elicitor | None,
    ) -> None:
        self.client = client
        self.screen = screen
        self.asker = asker if isinstance(asker, TtyAsker) else None
        self.elicitor = elicitor if isinstance(elicitor, TtyElicitor) else None
        #: The prompt on this terminal of each open question, by id (None: shown, not asked).
        self.open: dict[str, asyncio.Task[None] | None] = {}

    @property
    def answers_here(self) -> bool:
        """Whether this CLI can answer questions (it has a terminal)."""
        return self.asker is not None

    def inspector_url(self, run_id: str) -> str:
        """Where the run's page is in the inspector (`baton inspect` prints a login link)."""
        return f"http://{self.client.netloc}/#/runs/{quote(run_id, safe='')}"

    def handle(self, kind: str, run_id: str, data: Mapping[str, Any]) -> None:
        """One question event of the run (call on the event loop)."""
        question_id = str(data.get("id"))
        if kind.endswith("_closed"):
            self._closed(question_id, bool(data.get("withdrawnByAgent")))
            return
        if kind == "permission_request":
            permission = prompt_from_view(data, run_id)
            if self.asker is not None:
                self._also_there(question_id, run_id)
                self._ask(question_id, self._permission(question_id, permission))
                return
            what = describe(permission)[0].removesuffix(":")
        else:
            elicitation = elicitation_from_view(data, run_id)
            if self.elicitor is not None:
                self._also_there(question_id, run_id)
                self._ask(question_id, self._elicitation(question_id, elicitation))
                return
            what = f"the agent asks: {visible(elicitation.request.message, 200)}"
        self.open[question_id] = None
        self.screen.set_status(ELSEWHERE_LABEL)
        self.screen.note(
            f"baton: {what} (question {question_id} of run {run_id}); nobody can answer at "
            f"this terminal: answer it in the inspector, {self.inspector_url(run_id)} "
            "(`baton inspect` prints a login link), or through the API"
        )

    def _also_there(self, question_id: str, run_id: str) -> None:
        self.screen.note(
            self.screen.style(
                f"(question {question_id}: answer here, or in the inspector, "
                f"{self.inspector_url(run_id)}; the first answer counts)",
                "dim",
            )
        )

    def _ask(self, question_id: str, work: Any) -> None:
        self.open[question_id] = asyncio.ensure_future(work)
        self.screen.set_status(ANSWER_LABEL)

    def _closed(self, question_id: str, withdrawn: bool) -> None:
        if question_id not in self.open:
            return
        task = self.open.pop(question_id)
        if task is not None and not task.done():
            task.cancel(AGENT_CANCELLED_REQUEST if withdrawn else ANSWERED_ELSEWHERE)
        elif task is None:
            self.screen.note(f"baton: question {question_id} is closed")
        if not self.open:
            self.screen.set_status(WAITING_LABEL)

    async def _permission(self, question_id: str, prompt: AskPrompt) -> None:
        assert self.asker is not None
        with contextlib.suppress(asyncio.CancelledError):
            answer: AskAnswer = await self.asker.ask(prompt)
            body: dict[str, Any] = (
                {"cancel": True} if answer.option_id is None else {"optionId": answer.option_id}
            )
            await self._send(f"/api/v1/permissions/{quote(question_id, safe='')}/answer", body)

    async def _elicitation(self, question_id: str, prompt: ElicitationPrompt) -> None:
        assert self.elicitor is not None
        with contextlib.suppress(asyncio.CancelledError):
            reply: ElicitationReply = await self.elicitor.ask(prompt)
            body: dict[str, Any] = {"action": reply.action}
            if reply.action == "accept" and reply.content is not None:
                body["content"] = dict(reply.content)
            await self._send(f"/api/v1/elicitations/{quote(question_id, safe='')}/answer", body)

    async def _send(self, path: str, body: dict[str, Any]) -> None:
        try:
            await asyncio.to_thread(self.client.request, "POST", path, body)
        except ServiceRefused as exc:
            if exc.status == NOT_PENDING_STATUS:
                self.screen.note("baton: answered elsewhere first (that answer stands)")
            else:
                self.screen.note(f"baton: the answer was refused: {exc.code}: {exc.message}")
        except BatonError as exc:
            self.screen.note(f"baton: the answer could not be sent: {exc.message}")

    async def close(self) -> None:
        """The run ended: withdraw any prompt still on screen. Cancellation-safe."""
        tasks = [task for task in self.open.values() if task is not None and not task.done()]
        self.open.clear()
        for task in tasks:
            task.cancel(ANSWERED_ELSEWHERE)
        if tasks:
            await asyncio.wait(tasks)
