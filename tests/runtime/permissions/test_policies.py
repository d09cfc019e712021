"""The policies, table-driven over option-kind sets x tool kinds x policies x profile flags."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from baton.errors import ConfigurationError, PolicyNotAvailable, UnsupportedExecutionSetting
from baton.runtime.permissions.local_policy import LocalContext, LocalDecision, evaluate
from baton.runtime.permissions.policies import (
    DROPPED_LOCAL_POLICY,
    DROPPED_REMEMBERED,
    POLICIES,
    REMEMBERED_NOTE,
    AskUser,
    AutoSelect,
    ExecutionSettings,
    PolicyName,
    available_policies,
    check_policy,
    check_run_settings,
    decide,
    note_for,
    parse_policy,
)
from baton.wire.permission import PermissionOption, PermissionRequest

Opt = PermissionOption

#: Option sets real and scripted agents send. Ids are opaque: never assume id == kind.
OPTION_SETS: dict[str, tuple[PermissionOption, ...]] = {
    "all_four": (
        Opt("a1", "Allow once", "allow_once"),
        Opt("a2", "Allow always", "allow_always"),
        Opt("r1", "Reject once", "reject_once"),
        Opt("r2", "Reject always", "reject_always"),
    ),
    "claude": (
        Opt("allow_always", "Always Allow", "allow_always"),
        Opt("allow", "Allow", "allow_once"),
        Opt("reject", "Reject", "reject_once"),
    ),
    "codex_exec": (
        Opt("approved", "Yes, proceed", "allow_once"),
        Opt("approved-execpolicy-amendment", "Yes, and don't ask again", "allow_always"),
        Opt("abort", "No, and tell Codex what to do differently", "reject_once"),
    ),
    "grok_once_only": (Opt("allow", "Allow", "allow_once"), Opt("deny", "Deny", "reject_once")),
    "unknown_kind": (
        Opt("maybe", "Maybe", "allow_sometimes"),
        Opt("x", "Mystery", "frobnicate"),
        Opt("ok", "OK", "allow_once"),
        Opt("no", "No", "reject_once"),
    ),
    "reject_named_cancel": (
        Opt("proceed", "Proceed", "allow_once"),
        Opt("cancel", "cancel", "reject_once"),
    ),
    "uuid_ids": (
        Opt("6f1c3a0e-5d2b-4b8e-9a51-0c7e2d4f8b13", "Allow", "allow_once"),
        Opt("0b7d9e42-31aa-4c55-8f20-9e6a4b1c2d37", "Reject", "reject_once"),
    ),
    "only_always": (
        Opt("aa", "Always allow", "allow_always"),
        Opt("ra", "Always reject", "reject_always"),
    ),
    "two_allow_once": (
        Opt("a", "Allow this file", "allow_once"),
        Opt("b", "Allow this edit", "allow_once"),
        Opt("r", "Reject", "reject_once"),
    ),
    "reject_only": (Opt("r", "Reject", "reject_once"),),
}


def _tool_calls(worktree: Path) -> dict[str, tuple[dict[str, Any], bool]]:
    """One tool call per kind, permitted or forbidden by the local policy."""
    inside, outside = f"{worktree}/src/main.py", "/etc/hosts"
    calls: dict[str, tuple[dict[str, Any], bool]] = {}
    for kind in ("edit", "delete", "move", "read"):
        calls[f"{kind}-inside"] = ({"kind": kind, "locations": [{"path": inside}]}, True)
        calls[f"{kind}-outside"] = ({"kind": kind, "locations": [{"path": outside}]}, False)
    for kind in ("execute", "search"):
        calls[f"{kind}-clean"] = ({"kind": kind, "rawInput": {"command": "rg TODO"}}, True)
        calls[f"{kind}-reserved"] = ({"kind": kind, "rawInput": {"command": "git push"}}, False)
        calls[f"{kind}-opaque"] = ({"kind": kind, "rawInput": {}}, False)
    calls["fetch"] = ({"kind": "fetch", "rawInput": {"url": "https://example.com"}}, True)
    calls["fetch-file"] = ({"kind": "fetch", "rawInput": {"url": "file:///etc/hosts"}}, False)
    for kind in ("think", "switch_mode", "other", "frobnicate"):
        calls[kind] = ({"kind": kind, "rawInput": {"command": "ls"}}, False)
    calls["no-kind"] = ({"rawInput": {"path": inside}}, False)
    for call, _ in calls.values():
        call["toolCallId"] = "t"
    return calls


def _expected(
    policy: PolicyName,
    options: tuple[PermissionOption, ...],
    kind: str | None,
    permits: bool,
    allow_remembered: bool,
) -> tuple[tuple[str, ...], str | None]:
    """The rules of issue 8, restated independently: (offered ids, auto-selected id)."""
    offered = []
    for option in options:
        remembered = option.kind.endswith("_always")
        rejecting = option.kind.startswith("reject_")
        if remembered and not allow_remembered:
            continue
        if not rejecting and not permits:
            continue
        offered.append(option)
    once = [option.option_id for option in offered if option.kind == "allow_once"]
    eligible = policy == "full" or (policy == "auto-edits" and kind in ("edit", "delete", "move"))
    auto = once[0] if eligible and permits and len(once) == 1 else None
    return tuple(option.option_id for option in offered), auto


MATRIX = list(itertools.product(POLICIES, OPTION_SETS, [True, False]))


@pytest.mark.parametrize(("policy", "option_set", "allow_remembered"), MATRIX)
def test_matrix(
    policy: PolicyName, option_set: str, allow_remembered: bool, worktree: Path
) -> None:
    context = LocalContext(str(worktree), network_allowed=True)
    options = OPTION_SETS[option_set]
    for name, (tool_call, permitted) in _tool_calls(worktree).items():
        local = evaluate(tool_call, context)
        assert local.permits_allow is permitted, name
        request = PermissionRequest("s", "t", tool_call, options)
        decision = decide(policy, request, tool_call, local, allow_remembered=allow_remembered)
        offered_ids, auto = _expected(
            policy, options, tool_call.get("kind"), permitted, allow_remembered
        )
        assert tuple(o.option_id for o in decision.offered) == offered_ids, name
        if auto is None:
            assert isinstance(decision, AskUser), name
        else:
            assert isinstance(decision, AutoSelect), name
            assert decision.option.option_id == auto
        # Invariants that hold whatever the table says.
        kept = {o.option_id for o in decision.offered} | {
            d.option.option_id for d in decision.dropped
        }
        assert kept == {o.option_id for o in options}
        for option in options:
            if option.kind == "reject_once":
                assert option in decision.offered  # reject options always stay available
        if not permitted:
            assert not any(o.is_allow for o in decision.offered)
        if not allow_remembered:
            assert not any(o.is_remembered for o in decision.offered)
        if isinstance(decision, AutoSelect):
            assert decision.option.kind == "allow_once"
            assert not decision.option.is_remembered
            assert policy != "ask"


def test_full_chooses_the_exact_allow_once_of_claude_not_the_first_option(
    worktree: Path, context: LocalContext
) -> None:
    tool_call = {"toolCallId": "t", "kind": "edit", "locations": [{"path": f"{worktree}/a"}]}
    request = PermissionRequest("s", "t", tool_call, OPTION_SETS["claude"])
    local = evaluate(tool_call, context)
    decision = decide("full", request, tool_call, local, allow_remembered=True)
    assert isinstance(decision, AutoSelect)
    assert decision.option.option_id == "allow"  # options[0] is allow_always


def test_auto_edits_asks_for_commands(context: LocalContext) -> None:
    tool_call = {"toolCallId": "t", "kind": "execute", "rawInput": {"command": "ls"}}
    request = PermissionRequest("s", "t", tool_call, OPTION_SETS["grok_once_only"])
    decision = decide(
        "auto-edits", request, tool_call, evaluate(tool_call, context), allow_remembered=False
    )
    assert isinstance(decision, AskUser)
    assert "auto-edits" in decision.reason


def test_two_allow_once_options_are_never_resolved_by_position(
    worktree: Path, context: LocalContext
) -> None:
    tool_call = {"toolCallId": "t", "kind": "edit", "locations": [{"path": f"{worktree}/a"}]}
    request = PermissionRequest("s", "t", tool_call, OPTION_SETS["two_allow_once"])
    decision = decide(
        "full", request, tool_call, evaluate(tool_call, context), allow_remembered=True
    )
    assert isinstance(decision, AskUser)
    assert [o.option_id for o in decision.offered] == ["a", "b", "r"]
    assert "2 allow_once" in decision.reason


def test_dropped_options_say_why(context: LocalContext) -> None:
    tool_call = {"toolCallId": "t", "kind": "execute", "rawInput": {"command": "git push"}}
    request = PermissionRequest("s", "t", tool_call, OPTION_SETS["all_four"])
    decision = decide(
        "ask", request, tool_call, evaluate(tool_call, context), allow_remembered=False
    )
    assert [(d.option.option_id, d.reason) for d in decision.dropped] == [
        ("a1", DROPPED_LOCAL_POLICY),
        ("a2", DROPPED_REMEMBERED),
        ("r2", DROPPED_REMEMBERED),
    ]
    assert [o.option_id for o in decision.offered] == ["r1"]


def test_a_remembered_rejection_stays_available_when_allowing_is_forbidden(
    context: LocalContext,
) -> None:
    tool_call = {"toolCallId": "t", "kind": "think"}
    request = PermissionRequest("s", "t", tool_call, OPTION_SETS["all_four"])
    decision = decide(
        "full", request, tool_call, evaluate(tool_call, context), allow_remembered=True
    )
    assert [o.option_id for o in decision.offered] == ["r1", "r2"]


def test_remembered_options_carry_the_provider_note() -> None:
    assert note_for(Opt("a", "A", "allow_always")) == REMEMBERED_NOTE
    assert note_for(Opt("r", "R", "reject_always")) == REMEMBERED_NOTE
    assert note_for(Opt("a", "A", "allow_once")) is None
    assert "provider" in REMEMBERED_NOTE and "scope and lifetime" in REMEMBERED_NOTE


def test_a_local_refusal_is_the_reason_under_full() -> None:
    local = LocalDecision(False, "reserved_command", "git push")
    tool_call = {"toolCallId": "t", "kind": "execute"}
    request = PermissionRequest("s", "t", tool_call, OPTION_SETS["grok_once_only"])
    decision = decide("full", request, tool_call, local, allow_remembered=False)
    assert isinstance(decision, AskUser) and "git push" in decision.reason


# --- policy names, exposure and run settings ------------------------------------------------


def test_parse_policy() -> None:
    assert [parse_policy(p) for p in ("ask", "auto-edits", "full")] == list(POLICIES)
    with pytest.raises(ConfigurationError, match="ask, auto-edits, full"):
        parse_policy("yolo")


def test_ad_hoc_agents_only_ask_unless_unattended_is_allowed() -> None:
    assert available_policies(POLICIES, ad_hoc=True, allow_unattended=False) == ("ask",)
    assert available_policies(("ask",), ad_hoc=True, allow_unattended=True) == POLICIES
    assert available_policies(("ask",), ad_hoc=False, allow_unattended=True) == ("ask",)
    assert available_policies(POLICIES, ad_hoc=False, allow_unattended=False) == POLICIES


def test_check_policy() -> None:
    check_policy("ask", ("ask",), profile="claude")
    with pytest.raises(PolicyNotAvailable, match="claude profile does not expose the 'full'"):
        check_policy("full", ("ask",), profile="claude")
    with pytest.raises(PolicyNotAvailable, match="--allow-unattended"):
        check_policy("auto-edits", ("ask",), profile="ad-hoc", ad_hoc=True)


def test_default_settings_are_accepted() -> None:
    check_run_settings(ExecutionSettings())


@pytest.mark.parametrize(
    ("settings", "setting"),
    [
        (ExecutionSettings(workspace="workspace-write"), "workspace"),
        (ExecutionSettings(workspace="read-only"), "workspace"),
        (ExecutionSettings(network="disabled"), "network"),
        (ExecutionSettings(reviewer="automated"), "reviewer"),
        (ExecutionSettings(workspace="read-only", network="disabled"), "workspace"),
    ],
)
def test_restricted_settings_are_refused_not_downgraded(
    settings: ExecutionSettings, setting: str
) -> None:
    with pytest.raises(UnsupportedExecutionSetting) as raised:
        check_run_settings(settings)
    assert raised.value.setting == setting
    assert raised.value.fault == "caller"
    assert "no sandbox" in raised.value.message
