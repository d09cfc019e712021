"""Permission requests held for an answer through the API (``--policy ask`` in the service).

:class:`ApiAsker` is the runtime's :class:`~baton.runtime.permissions.ask.Asker`: each
question becomes a :class:`PendingPermission` that `GET /api/v1/permissions` lists (the
correlated tool call and the exact options Baton offers) until someone answers it with one
offered ``optionId`` or cancel. The runtime keeps the turn budget as in the CLI (a wait that
outlives it is answered cancelled, "budget elapsed"); a turn without a budget waits at most
the service's permission wait, then the answer is cancelled as "no user available", exactly
the CLI's answer where nobody can be asked. An answer to a request that is no longer pending
is refused (409) and changes nothing.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from baton.durable.timestamps import format_timestamp
from baton.errors import (
    PermissionNotFound,
    PermissionNotPending,
    PermissionOptionNotOffered,
)
from baton.redaction import redact_json
from baton.runtime.permissions.ask import NO_USER, NO_USER_REASON, AskAnswer, AskPrompt
from baton.service.limits import DEFAULT_PERMISSION_WAIT_SECONDS, MAX_PENDING_PERMISSIONS
from baton.service.pending_questions import PendingQuestions


@dataclass
class PendingPermission:
    """One question waiting for an answer."""

    id: str
    run_id: str | None
    prompt: AskPrompt
    asked_at: str
    answer: asyncio.Future[AskAnswer] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )

    def to_json(self) -> dict[str, Any]:
        """The API's view: ids, the correlated tool call (redacted), the offered options in
        the agent's order, and why Baton asks."""
        request = self.prompt.request
        return {
            "id": self.id,
            "runId": self.run_id,
            "providerSessionId": request.session_id,
            "toolCallId": request.tool_call_id,
            "toolCall": redact_json(dict(self.prompt.tool_call), None),
            "options": [
                {"optionId": o.option_id, "name": o.name, "kind": o.kind}
                for o in self.prompt.offered
            ],
            "reason": self.prompt.reason,
            # Baton's own check of the tool call: allow options may not be chosen when false.
            "local": {
                "permitsAllow": self.prompt.local.permits_allow,
                "reasonCode": self.prompt.local.reason_code,
                "detail": self.prompt.local.detail,
            },
            "askedAt": self.asked_at,
        }


class ApiAsker:
    """The asker of a service's runtime: questions wait for an answer through the API."""

    def __init__(
        self,
        *,
        announce: Callable[[PendingPermission, str], None],
        wait_seconds: float = DEFAULT_PERMISSION_WAIT_SECONDS,
        nobody_answers: Callable[[str | None], bool] = lambda _run_id: False,
    ) -> None:
        """``announce`` is told of each request when it opens (``"opened"``) and closes
        (``"closed"``); ``nobody_answers(run_id)`` True answers a run's request at once,
        cancelled "no user available" (:mod:`baton.service.answerers`)."""
        self.wait_seconds = wait_seconds
        self.nobody_answers = nobody_answers
        self.questions: PendingQuestions[PendingPermission, AskAnswer] = PendingQuestions(announce)

    async def ask(self, prompt: AskPrompt) -> AskAnswer:
        """Hold the question until an answer, the service's wait, or cancellation (the turn
        budget, the end of the turn); cancellation-safe: the request stops being pending."""
        if self.nobody_answers(prompt.run_id):
            return AskAnswer.default_cancelled(NO_USER, NO_USER_REASON)
        if len(self.questions) >= MAX_PENDING_PERMISSIONS:
            return AskAnswer.default_cancelled(
                NO_USER, f"{NO_USER_REASON} ({MAX_PENDING_PERMISSIONS} requests already wait)"
            )
        pending = PendingPermission(
            id="perm-" + secrets.token_hex(8),
            run_id=prompt.run_id,
            prompt=prompt,
            asked_at=format_timestamp(datetime.now(UTC)),
        )
        return await self.questions.hold(
            pending,
            self.wait_seconds,
            lambda: AskAnswer.default_cancelled(NO_USER, NO_USER_REASON),
        )

    @property
    def pending(self) -> dict[str, PendingPermission]:
        """The open questions by id (read-only use: the table owns them)."""
        return self.questions.open

    def list(self, run_id: str | None = None) -> list[PendingPermission]:
        """The pending requests (of one run), oldest first."""
        return self.questions.list(run_id)

    def answer(self, permission_id: str, option_id: str | None) -> PendingPermission:
        """Answer a pending request with one offered ``option_id``, or cancel (None)."""
        pending = self.questions.find(
            permission_id,
            not_pending=lambda i: PermissionNotPending(
                f"permission request {i} is no longer pending"
            ),
            not_found=lambda i: PermissionNotFound(f"no permission request {i!r}"),
        )
        if option_id is None:
            pending.answer.set_result(AskAnswer.user_cancelled("cancelled through the API"))
            return pending
        offered = [o.option_id for o in pending.prompt.offered]
        if option_id not in offered:
            raise PermissionOptionNotOffered(
                f"{option_id!r} is not an option of request {permission_id}; offered: "
                + ", ".join(offered)
            )
        pending.answer.set_result(AskAnswer.selected(option_id, "chosen through the API"))
        return pending
