"""The interaction record: what Baton keeps about every permission decision.

One record per answered request, written (and its journal entries flushed) before the answer
is sent: the request, the correlated tool call, every option the agent sent with whether Baton
offered it, the local decision, the answer and who chose it (``user``, ``policy`` or
``default``). :meth:`InteractionRecord.to_json` gives plain JSON types.

Requests Baton refuses before any policy runs (unknown session, no Baton-owned active prompt,
stale generation, identifiers that look like credentials, an invalid request) are answered
cancelled and recorded too (:func:`refusal_record`). Identifiers that look like credentials are
never recorded as sent: :func:`redacted_identifier` replaces them, and the whole JSON form goes
through the journal's structural redaction (a token in a command is not kept either).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal

from baton.redaction import REDACTED, SecretValues, redact_json, redact_text
from baton.runtime.permissions.local_policy import LocalDecision
from baton.runtime.permissions.policies import DroppedOption
from baton.wire.jsonrpc import RequestId
from baton.wire.permission import (
    PermissionOption,
    PermissionRequest,
    cancelled_outcome,
    selected_outcome,
)
from baton.wire.toolcalls import tool_name

if TYPE_CHECKING:
    from baton.wire.acp_types import RequestPermissionResponse

#: Version of the record's JSON shape; bumped when a field changes meaning.
RECORD_VERSION: Final = 1

ChosenBy = Literal["user", "policy", "default"]

# Stable reason codes of records the policy never saw (the ask codes are in ``ask``).
UNKNOWN_SESSION: Final = "unknown_session"
NO_ACTIVE_PROMPT: Final = "no_active_prompt"
STALE_GENERATION: Final = "stale_generation"
CREDENTIAL_IDENTIFIER: Final = "credential_identifier"
INVALID_REQUEST: Final = "invalid_request"
TURN_CANCELLED: Final = "turn_cancelled"
#: The reason code of an automatic selection.
POLICY_SELECTED: Final = "policy_selected"

#: Containers nested deeper than this in agent data (a tool call) are not copied into a
#: record: the subtree becomes :data:`TRUNCATED`. Below the journal redaction's own bound (64),
#: and it keeps every walk over a record shallow (no RecursionError on 500 levels).
MAX_RECORD_DEPTH: Final = 32
#: Keys of one mapping, or items of one list, kept in a record; the rest is counted in a
#: :data:`TRUNCATED` entry. It bounds the memory and time one request's record costs.
MAX_RECORD_ITEMS: Final = 256
#: Characters of one string (or key) kept in a record; the rest is cut with a marker.
MAX_RECORD_STRING_CHARS: Final = 16_384
#: Characters of strings and keys kept from one agent value (a tool call, the options) in a
#: record, all levels together; past it every further value is :data:`TRUNCATED`.
MAX_RECORD_CHARS: Final = 256 * 1024
#: What stands for agent data a record does not keep (too deep, too many items, too large).
TRUNCATED: Final = "[TRUNCATED]"

#: Shapes of credentials that have no business in a request, option or tool-call id, besides
#: what the journal's redaction recognizes: provider API keys (OpenAI/Anthropic ``sk-``, xAI,
#: GitHub, GitLab, Slack, AWS, Google), JWTs, PEM private keys, bearer tokens and ``key=value``
#: secrets. UUIDs and adapter ids (``toolu_...``, ``call_4``, ``allow_always``) do not match.
_CREDENTIAL_PATTERNS: Final = re.compile(
    "|".join(
        (
            r"sk-[A-Za-z0-9_-]{16,}",
            r"xai-[A-Za-z0-9]{20,}",
            r"gh[pousr]_[A-Za-z0-9]{20,}",
            r"github_pat_[A-Za-z0-9_]{20,}",
            r"glpat-[A-Za-z0-9_-]{20,}",
            r"xox[abprs]-[A-Za-z0-9-]{10,}",
            r"(?:AKIA|ASIA)[0-9A-Z]{16}",
            r"AIza[0-9A-Za-z_-]{35}",
            r"eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.",
            r"-----BEGIN [A-Z ]*PRIVATE KEY",
            r"(?i:bearer)\s+[A-Za-z0-9._~+/-]{16,}",
            r"(?i:api[_-]?key|token|secret|passw(?:or)?d)[=:]\S{8,}",
        )
    )
)


def looks_like_credential(value: str) -> bool:
    """True when ``value`` contains something shaped like a credential: the journal's text
    redaction would change it, or it matches one of the shapes above."""
    return redact_text(value) != value or _CREDENTIAL_PATTERNS.search(value) is not None


def redacted_identifier(value: object) -> object:
    """``value`` as it may be recorded: the journal's redaction marker for a credential-looking
    string."""
    return REDACTED if isinstance(value, str) and looks_like_credential(value) else value


def credential_identifiers(request_id: RequestId | None, params: object) -> list[str]:
    """The names of the identifiers in a raw request that look like credentials: ``id``,
    ``sessionId``, ``toolCall.toolCallId``, ``options[N].optionId``. Empty when none does."""
    found: list[str] = []
    if isinstance(request_id, str) and looks_like_credential(request_id):
        found.append("id")
    if not isinstance(params, Mapping):
        return found
    session_id = params.get("sessionId")
    if isinstance(session_id, str) and looks_like_credential(session_id):
        found.append("sessionId")
    tool_call = params.get("toolCall")
    if isinstance(tool_call, Mapping):
        tool_call_id = tool_call.get("toolCallId")
        if isinstance(tool_call_id, str) and looks_like_credential(tool_call_id):
            found.append("toolCall.toolCallId")
    options = params.get("options")
    if isinstance(options, list):
        # Past the bound the engine refuses the request anyway (too many options).
        for index, option in enumerate(options[:MAX_RECORD_ITEMS]):
            option_id = option.get("optionId") if isinstance(option, Mapping) else None
            if isinstance(option_id, str) and looks_like_credential(option_id):
                found.append(f"options[{index}].optionId")
    return found


@dataclass(frozen=True, slots=True)
class RecordedOption:
    """One option the agent sent: offered to the user or policy, or dropped (with why)."""

    option_id: str
    name: str
    kind: str
    offered: bool
    dropped_reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Plain JSON types."""
        return {
            "optionId": self.option_id,
            "name": self.name,
            "kind": self.kind,
            "offered": self.offered,
            "droppedReason": self.dropped_reason,
        }


def recorded_options(
    options: tuple[PermissionOption, ...], dropped: tuple[DroppedOption, ...]
) -> tuple[RecordedOption, ...]:
    """Every option in the agent's order, marked offered or dropped."""
    reasons = {item.option.option_id: item.reason for item in dropped}
    return tuple(
        RecordedOption(
            option.option_id,
            option.name,
            option.kind,
            offered=option.option_id not in reasons,
            dropped_reason=reasons.get(option.option_id),
        )
        for option in options
    )


@dataclass(frozen=True, slots=True)
class InteractionRecord:
    """One permission decision. ``choice`` is the optionId sent, ``None`` for cancelled.

    Fields Baton could not know for a refused request (the policy of an unknown session, the
    tool call of an unparseable request) are ``None``.
    """

    request_id: RequestId | None
    session_id: str | None
    tool_call_id: str | None
    policy: str | None
    # Agent data of any size: left out of repr() so a log line or a traceback stays small.
    request_tool_call: Mapping[str, Any] | None = field(repr=False)
    correlated_tool_call: Mapping[str, Any] | None = field(repr=False)
    options: tuple[RecordedOption, ...]
    local: LocalDecision | None
    choice: str | None
    chosen_by: ChosenBy
    reason_code: str
    reason: str

    def outcome(self) -> RequestPermissionResponse:
        """The RequestPermissionResponse this record says to send."""
        return cancelled_outcome() if self.choice is None else selected_outcome(self.choice)

    def to_json(self, secrets: SecretValues | None = None) -> dict[str, Any]:
        """The record as plain JSON types, redacted as the journal redacts (``secrets``: the
        profile's exact sensitive values, removed too). The journal and store write this; the
        answer itself comes from :meth:`outcome`, unredacted."""
        local = (
            None
            if self.local is None
            else {
                "permitsAllow": self.local.permits_allow,
                "reasonCode": self.local.reason_code,
                "detail": self.local.detail,
            }
        )
        data = {
            "version": RECORD_VERSION,
            "requestId": _plain(self.request_id),
            "sessionId": _plain(self.session_id),
            "toolCallId": _plain(self.tool_call_id),
            # The tool's programmatic name (stable ACP since SDK 2.4.0), latest known first.
            "toolName": tool_name(self.correlated_tool_call or self.request_tool_call or {}),
            "policy": self.policy,
            "requestToolCall": _plain(self.request_tool_call),
            "correlatedToolCall": _plain(self.correlated_tool_call),
            "options": _plain([option.to_json() for option in self.options]),
            "local": local,
            "choice": _plain(self.choice),
            "chosenBy": self.chosen_by,
            "reasonCode": self.reason_code,
            "reason": _plain(self.reason),
            "outcome": _plain(self.outcome()),
        }
        redacted: dict[str, Any] = redact_json(data, secrets)
        return redacted


class _Budget:
    """What is left of :data:`MAX_RECORD_CHARS` for one agent value."""

    __slots__ = ("chars",)

    def __init__(self) -> None:
        self.chars = MAX_RECORD_CHARS

    def text(self, value: str) -> str:
        """``value`` cut to :data:`MAX_RECORD_STRING_CHARS` and to the budget left, marked."""
        keep = min(len(value), MAX_RECORD_STRING_CHARS, max(self.chars, 0))
        self.chars -= keep
        if keep == len(value):
            return value
        return f"{value[:keep]}{TRUNCATED} ({len(value) - keep} more characters)"


def _plain(value: object) -> Any:
    """A JSON-typed copy of agent data (mappings to dicts, sequences to lists), bounded: at most
    :data:`MAX_RECORD_DEPTH` levels, :data:`MAX_RECORD_ITEMS` per container,
    :data:`MAX_RECORD_STRING_CHARS` per string and :data:`MAX_RECORD_CHARS` in all. What is left
    out is replaced or counted by an explicit :data:`TRUNCATED` marker, never an error."""
    return _bounded(value, 0, _Budget())


def _bounded(value: object, depth: int, budget: _Budget) -> Any:
    if isinstance(value, str):
        return budget.text(value)
    if not isinstance(value, Mapping | list | tuple):
        return value if value is None or isinstance(value, bool | int | float) else str(value)
    if depth >= MAX_RECORD_DEPTH:
        return f"{TRUNCATED} (nested deeper than {MAX_RECORD_DEPTH} levels)"
    if budget.chars <= 0:
        return f"{TRUNCATED} (record size limit)"
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for index, (key, item) in enumerate(value.items()):
            if index >= MAX_RECORD_ITEMS or budget.chars <= 0:
                out[TRUNCATED] = f"{len(value) - index} more keys"
                break
            out[budget.text(str(key))] = _bounded(item, depth + 1, budget)
        return out
    items: list[Any] = []
    for index, item in enumerate(value):
        if index >= MAX_RECORD_ITEMS or budget.chars <= 0:
            items.append(f"{TRUNCATED} ({len(value) - index} more items)")
            break
        items.append(_bounded(item, depth + 1, budget))
    return items


def decision_record(
    request_id: RequestId | None,
    request: PermissionRequest,
    *,
    policy: str,
    correlated_tool_call: Mapping[str, Any],
    dropped: tuple[DroppedOption, ...],
    local: LocalDecision,
    choice: str | None,
    chosen_by: ChosenBy,
    reason_code: str,
    reason: str,
) -> InteractionRecord:
    """The record of a request the policy engine decided (automatically or by asking)."""
    return InteractionRecord(
        request_id=request_id,
        session_id=request.session_id,
        tool_call_id=request.tool_call_id,
        policy=policy,
        request_tool_call=request.tool_call,
        correlated_tool_call=correlated_tool_call,
        options=recorded_options(request.options, dropped),
        local=local,
        choice=choice,
        chosen_by=chosen_by,
        reason_code=reason_code,
        reason=reason,
    )


def refusal_record(
    request_id: RequestId | None,
    params: object,
    *,
    reason_code: str,
    reason: str,
    policy: str | None = None,
) -> InteractionRecord:
    """The record of a request answered cancelled before any policy ran. Identifiers that look
    like credentials are redacted; the request's toolCall is kept only when its id is clean."""
    fields = params if isinstance(params, Mapping) else {}
    session_id = fields.get("sessionId")
    tool_call = fields.get("toolCall")
    tool_call = tool_call if isinstance(tool_call, Mapping) else None
    tool_call_id = tool_call.get("toolCallId") if tool_call is not None else None
    clean_tool_call = None
    if tool_call is not None and redacted_identifier(tool_call_id) == tool_call_id:
        clean_tool_call = tool_call
    options: list[RecordedOption] = []
    raw_options = fields.get("options")
    # Bounded like the record itself; the rest is counted by the JSON form's marker.
    for raw in raw_options[:MAX_RECORD_ITEMS] if isinstance(raw_options, list) else []:
        if not isinstance(raw, Mapping):
            continue
        option_id, name, kind = raw.get("optionId"), raw.get("name"), raw.get("kind")
        options.append(
            RecordedOption(
                str(redacted_identifier(option_id)) if option_id is not None else "",
                name if isinstance(name, str) else "",
                kind if isinstance(kind, str) else "",
                offered=False,
                dropped_reason=reason_code,
            )
        )
    recorded_id = redacted_identifier(request_id)
    return InteractionRecord(
        request_id=recorded_id if isinstance(recorded_id, int | str) else None,
        session_id=_clean_string(session_id),
        tool_call_id=_clean_string(tool_call_id),
        policy=policy,
        request_tool_call=clean_tool_call,
        correlated_tool_call=None,
        options=tuple(options),
        local=None,
        choice=None,
        chosen_by="default",
        reason_code=reason_code,
        reason=reason,
    )


def _clean_string(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    return REDACTED if looks_like_credential(value) else value
