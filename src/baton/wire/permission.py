"""``session/request_permission``: parsing the request and building the answer.

The default answer is ``cancelled``: an unanswered approval request never silently becomes an
approval. Unattended approval is an explicit choice of the caller (decisions.md item 9): it
selects by semantic kind, only when exactly one ``allow_once`` option is offered, never the first
option because of its position and never an ``*_always`` (remembered) option; it is recorded in
an :class:`UnattendedChoice`. Every answer carries the exact ``optionId`` the agent offered.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal, cast

from baton.errors import ChoiceNotAdvertised, InvalidPermissionRequest

if TYPE_CHECKING:
    from baton.wire.acp_types import RequestPermissionRequest, RequestPermissionResponse

#: The schema's option kinds. Other kinds are kept verbatim and never chosen unattended.
ALLOW_ONCE: Final = "allow_once"
ALLOW_ALWAYS: Final = "allow_always"
REJECT_ONCE: Final = "reject_once"
REJECT_ALWAYS: Final = "reject_always"

#: Options accepted in one request. Real adapters offer two to four; a request with hundreds
#: would flood an interactive prompt and the journal's interaction record.
MAX_PERMISSION_OPTIONS: Final = 32


@dataclass(frozen=True, slots=True)
class PermissionOption:
    """One option the agent offered; ``kind`` is verbatim."""

    option_id: str
    name: str
    kind: str

    @property
    def is_allow(self) -> bool:
        """An allowing option (``allow_once``, ``allow_always``, or another ``allow_*``)."""
        return self.kind.startswith("allow_")

    @property
    def is_reject(self) -> bool:
        """A rejecting option (``reject_once``, ``reject_always``, or another ``reject_*``)."""
        return self.kind.startswith("reject_")

    @property
    def is_remembered(self) -> bool:
        """An option whose effect outlives this request (``*_always``); provider-owned scope."""
        return self.kind.endswith("_always")


@dataclass(frozen=True, slots=True)
class PermissionRequest:
    """A parsed request. ``tool_call`` is the agent's ``toolCall`` object as sent (it may be
    the first time this ``toolCallId`` appears)."""

    session_id: str
    tool_call_id: str
    tool_call: dict[str, Any]
    options: tuple[PermissionOption, ...]


def _fail(detail: str) -> InvalidPermissionRequest:
    return InvalidPermissionRequest(f"session/request_permission {detail}")


def parse_permission_request(params: object) -> PermissionRequest:
    """Parse the params of ``session/request_permission``.

    Raises :class:`InvalidPermissionRequest` for a missing sessionId or toolCall.toolCallId, an
    empty or oversized options list, an option without a string optionId, name and kind, or a
    repeated optionId (which would make the answer ambiguous).
    """
    if not isinstance(params, Mapping):
        raise _fail("params are not an object")
    # Read through the schema's type, indexing (mypy checks an index's name; it does not
    # check ``.get``'s); every value is the agent's and is checked here at run time.
    request = cast("RequestPermissionRequest", params)
    session_id: object = request["sessionId"] if "sessionId" in request else None  # noqa: SIM401
    if not isinstance(session_id, str):
        raise _fail("carries no string sessionId")
    tool_call: object = request["toolCall"] if "toolCall" in request else None  # noqa: SIM401
    if not isinstance(tool_call, dict) or not isinstance(tool_call.get("toolCallId"), str):
        raise _fail("carries no toolCall with a string toolCallId")
    raw_options: object = request["options"] if "options" in request else None  # noqa: SIM401
    if not isinstance(raw_options, list) or not raw_options:
        raise _fail("offers no options")
    if len(raw_options) > MAX_PERMISSION_OPTIONS:
        raise _fail(f"offers more than {MAX_PERMISSION_OPTIONS} options")
    options: list[PermissionOption] = []
    seen: set[str] = set()
    for index, raw in enumerate(raw_options):
        fields = (
            (raw.get("optionId"), raw.get("name"), raw.get("kind"))
            if isinstance(raw, Mapping)
            else (None, None, None)
        )
        option_id, name, kind = fields
        if not isinstance(option_id, str) or not isinstance(name, str) or not isinstance(kind, str):
            raise _fail(f"option #{index + 1} lacks a string optionId, name or kind")
        if option_id in seen:
            raise _fail(f"option #{index + 1} repeats an optionId")
        seen.add(option_id)
        options.append(PermissionOption(option_id, name, kind))
    return PermissionRequest(session_id, tool_call["toolCallId"], tool_call, tuple(options))


def cancelled_outcome() -> RequestPermissionResponse:
    """The default answer: ``{"outcome": {"outcome": "cancelled"}}``."""
    return {"outcome": {"outcome": "cancelled"}}


def selected_outcome(option_id: str) -> RequestPermissionResponse:
    """The answer selecting ``option_id`` (exactly as the agent offered it)."""
    return {"outcome": {"outcome": "selected", "optionId": option_id}}


def single_allow_once(options: Sequence[PermissionOption]) -> PermissionOption | None:
    """The one ``allow_once`` option when exactly one is offered, else None. Never decided by
    position and never an ``*_always`` option."""
    found = [option for option in options if option.kind == ALLOW_ONCE]
    return found[0] if len(found) == 1 else None


#: Who chose an answer: a person at a prompt, the caller's explicit unattended policy, or
#: nobody (the default cancel).
Chooser = Literal["user", "unattended", "default"]

#: The rule an unattended choice applies, recorded with it.
UNATTENDED_RULE: Final = "single_allow_once"


@dataclass(frozen=True, slots=True)
class UnattendedChoice:
    """The record of who answered a permission request and how.

    ``option`` is None for a cancelled answer. ``rule`` names the rule applied
    (:data:`UNATTENDED_RULE` for unattended approval) and ``reason`` says why in words.
    """

    session_id: str
    tool_call_id: str
    chooser: Chooser
    option: PermissionOption | None
    rule: str
    reason: str

    @property
    def approved(self) -> bool:
        """True when the answer selects an allowing option."""
        return self.option is not None and self.option.is_allow

    def outcome(self) -> RequestPermissionResponse:
        """The RequestPermissionResponse to send."""
        if self.option is None:
            return cancelled_outcome()
        return selected_outcome(self.option.option_id)


def default_choice(request: PermissionRequest) -> UnattendedChoice:
    """The answer when nobody chose: cancelled."""
    return UnattendedChoice(
        request.session_id,
        request.tool_call_id,
        "default",
        None,
        "default_cancel",
        "no one chose; the default answer is cancelled",
    )


def choose_unattended(request: PermissionRequest) -> UnattendedChoice:
    """Apply unattended approval, which the caller must have chosen explicitly: the single
    ``allow_once`` option if exactly one is offered, else cancelled. Always recorded."""
    option = single_allow_once(request.options)
    if option is None:
        count = sum(1 for o in request.options if o.kind == ALLOW_ONCE)
        return UnattendedChoice(
            request.session_id,
            request.tool_call_id,
            "unattended",
            None,
            UNATTENDED_RULE,
            f"{count} allow_once options offered (exactly one is required); cancelled",
        )
    return UnattendedChoice(
        request.session_id,
        request.tool_call_id,
        "unattended",
        option,
        UNATTENDED_RULE,
        "exactly one allow_once option was offered",
    )


def user_choice(request: PermissionRequest, option_id: str) -> UnattendedChoice:
    """Record a person's pick of ``option_id``, which must be one the agent offered exactly
    (else :class:`ChoiceNotAdvertised` listing the offered ids)."""
    for option in request.options:
        if option.option_id == option_id:
            return UnattendedChoice(
                request.session_id,
                request.tool_call_id,
                "user",
                option,
                "user",
                "chosen by the user",
            )
    offered = tuple(option.option_id for option in request.options)
    raise ChoiceNotAdvertised("permission option", option_id, offered)
