"""One permission request, from raw params to the answer and its record.

:func:`settle` runs the whole decision for a ``session/request_permission`` whose session the
caller has already checked (known session, Baton-owned active prompt, current generation):
credential-looking identifiers, parsing, correlation, the local policy, the permission policy,
and, when the policy asks, the asker within the turn budget. It sends nothing and writes
nothing: the caller writes :attr:`Resolution.record` durably, flushes the journal, and only
then sends :attr:`Resolution.outcome`. Requests the caller refuses itself get
:func:`refuse`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from baton.errors import InternalError, InvalidPermissionRequest
from baton.runtime.permissions.ask import (
    Asker,
    AskPrompt,
    ask_within,
    ask_within_budget,
)
from baton.runtime.permissions.correlation import ToolCallTracker
from baton.runtime.permissions.local_policy import LocalContext, evaluate
from baton.runtime.permissions.policies import AutoSelect, PolicyName, decide
from baton.runtime.permissions.records import (
    CREDENTIAL_IDENTIFIER,
    INVALID_REQUEST,
    POLICY_SELECTED,
    UNKNOWN_SESSION,
    ChosenBy,
    InteractionRecord,
    credential_identifiers,
    decision_record,
    refusal_record,
)
from baton.wire.budget import BudgetClock
from baton.wire.jsonrpc import RequestId
from baton.wire.permission import parse_permission_request

if TYPE_CHECKING:
    from baton.wire.acp_types import RequestPermissionResponse

#: Options one request may offer. Agents offer two to four; a request with more is refused
#: (``invalid_request``) before anything reads them, so a flood of options cannot make the
#: credential check, the filtering or the record grow without bound.
MAX_PERMISSION_OPTIONS: Final = 64


@dataclass(frozen=True, slots=True)
class PermissionSettings:
    """A run's permission settings: its policy, whether the profile allows remembered options,
    and what the local policy checks against."""

    policy: PolicyName
    allow_remembered: bool
    context: LocalContext


@dataclass(frozen=True, slots=True)
class Resolution:
    """The decision on one request: the record to write first, then the outcome to send."""

    record: InteractionRecord

    @property
    def outcome(self) -> RequestPermissionResponse:
        """The RequestPermissionResponse result to send."""
        return self.record.outcome()


def refuse(
    request_id: RequestId | None,
    params: object,
    *,
    reason_code: str,
    reason: str,
    policy: PolicyName | None = None,
) -> Resolution:
    """Answer cancelled without a policy (unknown session, no active prompt, stale generation,
    a cancelled turn...); ``reason_code`` is one of the record codes."""
    return Resolution(
        refusal_record(request_id, params, reason_code=reason_code, reason=reason, policy=policy)
    )


async def settle(
    request_id: RequestId | None,
    params: object,
    *,
    tracker: ToolCallTracker,
    settings: PermissionSettings,
    asker: Asker,
    clock: BudgetClock | None,
    now: Callable[[], float] | None = None,
) -> Resolution:
    """Decide one request. ``clock`` is the running turn budget (``None``: unbounded) and
    ``now`` reads its clock (the event loop's by default). Cancellation propagates: a caller
    that cancels a pending decision (session/cancel) answers it with :func:`refuse`."""
    policy = settings.policy
    options = params.get("options") if isinstance(params, Mapping) else None
    if isinstance(options, list) and len(options) > MAX_PERMISSION_OPTIONS:
        return refuse(
            request_id,
            params,
            reason_code=INVALID_REQUEST,
            reason=f"{len(options)} options offered; at most {MAX_PERMISSION_OPTIONS} are read",
            policy=policy,
        )
    suspicious = credential_identifiers(request_id, params)
    if suspicious:
        return refuse(
            request_id,
            params,
            reason_code=CREDENTIAL_IDENTIFIER,
            reason=f"identifiers that look like credentials: {', '.join(suspicious)}",
            policy=policy,
        )
    try:
        request = parse_permission_request(params)
    except InvalidPermissionRequest as exc:
        return refuse(
            request_id, params, reason_code=INVALID_REQUEST, reason=exc.message, policy=policy
        )
    if request.session_id != tracker.session_id:
        return refuse(
            request_id,
            params,
            reason_code=UNKNOWN_SESSION,
            reason=f"the request names session {request.session_id!r}, not this one",
            policy=policy,
        )
    correlated = tracker.correlate(request)
    # Off the event loop: path checks touch the file system and a long command takes a while
    # to read, and the stream of other sessions must keep flowing meanwhile.
    local = await asyncio.to_thread(evaluate, correlated, settings.context)
    decision = decide(
        policy, request, correlated, local, allow_remembered=settings.allow_remembered
    )
    offered_ids = {option.option_id for option in decision.offered}
    choice: str | None
    chosen_by: ChosenBy
    if isinstance(decision, AutoSelect):
        choice, chosen_by = decision.option.option_id, "policy"
        code, reason = POLICY_SELECTED, decision.reason
    else:
        prompt = AskPrompt(request, correlated, decision.offered, local, decision.reason)
        if clock is None:
            answer = await ask_within(asker, prompt, None)
        else:
            clock_now = now if now is not None else asyncio.get_running_loop().time
            answer = await ask_within_budget(asker, prompt, clock, clock_now)
        choice, chosen_by = answer.option_id, answer.answered_by
        code, reason = answer.code, answer.reason
    if choice is not None and choice not in offered_ids:
        raise InternalError(f"option {choice!r} was chosen but never offered")
    return Resolution(
        decision_record(
            request_id,
            request,
            policy=policy,
            correlated_tool_call=correlated,
            dropped=decision.dropped,
            local=local,
            choice=choice,
            chosen_by=chosen_by,
            reason_code=code,
            reason=reason,
        )
    )
