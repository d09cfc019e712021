"""Permission primitives: parsing, the cancelled default, unattended choice by kind."""

from __future__ import annotations

from itertools import permutations
from typing import Any

import pytest

from baton.errors import ChoiceNotAdvertised, InvalidPermissionRequest
from baton.wire.permission import (
    MAX_PERMISSION_OPTIONS,
    PermissionOption,
    PermissionRequest,
    cancelled_outcome,
    choose_unattended,
    default_choice,
    parse_permission_request,
    selected_outcome,
    single_allow_once,
    user_choice,
)


def _params(options: list[Any], **over: Any) -> dict[str, Any]:
    params: dict[str, Any] = {
        "sessionId": "s",
        "toolCall": {"toolCallId": "call_1", "kind": "edit"},
        "options": options,
    }
    params.update(over)
    return params


def _option(option_id: str, kind: str, name: str = "N") -> dict[str, str]:
    return {"optionId": option_id, "name": name, "kind": kind}


CLAUDE_OPTIONS = [
    _option("allow_always", "allow_always"),
    _option("allow", "allow_once"),
    _option("reject", "reject_once"),
]


def test_parse_keeps_ids_kinds_and_the_tool_call() -> None:
    request = parse_permission_request(_params([*CLAUDE_OPTIONS, _option("x", "allow_session")]))
    assert request.session_id == "s" and request.tool_call_id == "call_1"
    assert request.tool_call == {"toolCallId": "call_1", "kind": "edit"}
    assert [(o.option_id, o.kind) for o in request.options] == [
        ("allow_always", "allow_always"),
        ("allow", "allow_once"),
        ("reject", "reject_once"),
        ("x", "allow_session"),
    ]


def test_option_kind_helpers() -> None:
    always = PermissionOption("a", "A", "allow_always")
    once = PermissionOption("b", "B", "allow_once")
    reject = PermissionOption("c", "C", "reject_always")
    assert always.is_allow and always.is_remembered and not always.is_reject
    assert once.is_allow and not once.is_remembered
    assert reject.is_reject and reject.is_remembered and not reject.is_allow


@pytest.mark.parametrize(
    "params",
    [
        None,
        [],
        _params(CLAUDE_OPTIONS, sessionId=None),
        _params(CLAUDE_OPTIONS, sessionId=3),
        _params(CLAUDE_OPTIONS, toolCall=None),
        _params(CLAUDE_OPTIONS, toolCall={"kind": "edit"}),
        _params(CLAUDE_OPTIONS, toolCall={"toolCallId": 0}),
        _params([]),
        _params(None),  # type: ignore[arg-type]
        _params([{"optionId": "a", "name": "A"}]),
        _params([{"optionId": "a", "kind": "allow_once"}]),
        _params([{"name": "A", "kind": "allow_once"}]),
        _params([{"optionId": 1, "name": "A", "kind": "allow_once"}]),
        _params(["allow"]),
        _params([_option("a", "allow_once"), _option("a", "reject_once")]),
        _params([_option(f"o{i}", "reject_once") for i in range(MAX_PERMISSION_OPTIONS + 1)]),
    ],
)
def test_invalid_requests(params: Any) -> None:
    with pytest.raises(InvalidPermissionRequest) as caught:
        parse_permission_request(params)
    assert caught.value.code == "AGENT_INVALID_PERMISSION_REQUEST"
    assert caught.value.fault == "agent"


def test_the_option_bound_itself_is_accepted() -> None:
    options = [_option(f"o{i}", "reject_once") for i in range(MAX_PERMISSION_OPTIONS)]
    assert len(parse_permission_request(_params(options)).options) == MAX_PERMISSION_OPTIONS


def test_outcomes() -> None:
    assert cancelled_outcome() == {"outcome": {"outcome": "cancelled"}}
    assert selected_outcome("approved") == {
        "outcome": {"outcome": "selected", "optionId": "approved"}
    }


@pytest.mark.parametrize("order", list(permutations(range(3))))
def test_single_allow_once_is_chosen_by_kind_never_position(order: tuple[int, ...]) -> None:
    options = parse_permission_request(_params([CLAUDE_OPTIONS[i] for i in order])).options
    chosen = single_allow_once(options)
    assert chosen is not None and chosen.option_id == "allow"


@pytest.mark.parametrize(
    "kinds",
    [
        ["allow_always", "reject_once"],
        ["allow_once", "allow_once", "reject_once"],
        ["reject_once", "reject_always"],
        ["allow_session", "reject_once"],
        ["ALLOW_ONCE", "reject_once"],
    ],
)
def test_no_single_allow_once_means_none(kinds: list[str]) -> None:
    options = tuple(PermissionOption(f"o{i}", "N", k) for i, k in enumerate(kinds))
    assert single_allow_once(options) is None


def _request(options: list[dict[str, str]]) -> PermissionRequest:
    return parse_permission_request(_params(options))


def test_unattended_choice_is_recorded() -> None:
    choice = choose_unattended(_request(CLAUDE_OPTIONS))
    assert choice.chooser == "unattended" and choice.rule == "single_allow_once"
    assert choice.approved
    assert choice.option is not None and choice.option.option_id == "allow"
    assert choice.outcome() == selected_outcome("allow")
    assert (choice.session_id, choice.tool_call_id) == ("s", "call_1")


def test_unattended_without_a_single_allow_once_cancels() -> None:
    only_always = [_option("allow_always", "allow_always"), _option("reject", "reject_once")]
    choice = choose_unattended(_request(only_always))
    assert choice.option is None and not choice.approved
    assert choice.outcome() == cancelled_outcome()
    assert "0 allow_once" in choice.reason


def test_the_default_is_cancelled() -> None:
    choice = default_choice(_request(CLAUDE_OPTIONS))
    assert (choice.chooser, choice.option, choice.outcome()) == (
        "default",
        None,
        cancelled_outcome(),
    )


def test_a_user_choice_carries_the_exact_offered_id() -> None:
    choice = user_choice(_request(CLAUDE_OPTIONS), "reject")
    assert choice.chooser == "user" and not choice.approved
    assert choice.outcome() == selected_outcome("reject")
    with pytest.raises(ChoiceNotAdvertised) as caught:
        user_choice(_request(CLAUDE_OPTIONS), "Reject")
    assert caught.value.advertised == ("allow_always", "allow", "reject")
