"""One request end to end: the real captured payloads and the scripted agent's variants."""

from __future__ import annotations

import asyncio
import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest

from baton.runtime.permissions import ask as ask_module
from baton.runtime.permissions import records
from baton.runtime.permissions.ask import AskAnswer, AskPrompt, NoUserAsker
from baton.runtime.permissions.correlation import ToolCallTracker
from baton.runtime.permissions.engine import PermissionSettings, refuse, settle
from baton.runtime.permissions.local_policy import LocalContext
from baton.runtime.permissions.policies import PolicyName
from baton.wire.budget import TurnBudget

FIXTURES = Path(__file__).parents[2] / "fixtures" / "permissions"
CAPTURED_WORKTREE = "/home/user/project"


def _fixture(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())
    return loaded


def _tracker(fixture: dict[str, Any]) -> ToolCallTracker:
    tracker = ToolCallTracker(fixture["params"]["sessionId"])
    for update in fixture["prior_updates"]:
        tracker.observe(update)
    return tracker


def _settings(policy: PolicyName, worktree: str, remembered: bool = True) -> PermissionSettings:
    return PermissionSettings(policy, remembered, LocalContext(worktree, network_allowed=True))


class Picks:
    """A user who picks by option id (or cancels), and remembers what was shown."""

    def __init__(self, choice: str | None) -> None:
        self.choice = choice
        self.prompts: list[AskPrompt] = []

    async def ask(self, prompt: AskPrompt) -> AskAnswer:
        self.prompts.append(prompt)
        if self.choice is None:
            return AskAnswer.user_cancelled("Ctrl-C")
        return AskAnswer.selected(self.choice)


needs_captured_worktree = pytest.mark.skipif(
    os.path.realpath(CAPTURED_WORKTREE) != CAPTURED_WORKTREE,
    reason="the captured worktree path resolves elsewhere on this machine",
)

#: (fixture, policy) -> the optionId sent, or None for cancelled ("no user available").
EXPECTED: dict[tuple[str, PolicyName], str | None] = {
    ("claude-execute", "ask"): None,
    ("claude-execute", "auto-edits"): None,
    ("claude-execute", "full"): "allow",
    ("claude-edit", "ask"): None,
    ("claude-edit", "auto-edits"): "allow",
    ("claude-edit", "full"): "allow",
    ("claude-write", "ask"): None,
    ("claude-write", "auto-edits"): "allow",
    ("claude-write", "full"): "allow",
    ("codex-execute-first-sight", "ask"): None,
    ("codex-execute-first-sight", "auto-edits"): None,
    ("codex-execute-first-sight", "full"): "approved",
    ("codex-edit", "ask"): None,
    ("codex-edit", "auto-edits"): "approved",
    ("codex-edit", "full"): "approved",
}


@needs_captured_worktree
@pytest.mark.parametrize(("name", "policy"), list(EXPECTED))
async def test_captured_requests(name: str, policy: PolicyName) -> None:
    fixture = _fixture(name)
    resolution = await settle(
        fixture["id"],
        fixture["params"],
        tracker=_tracker(fixture),
        settings=_settings(policy, CAPTURED_WORKTREE),
        asker=NoUserAsker(),
        clock=None,
    )
    expected = EXPECTED[(name, policy)]
    record = resolution.record
    if expected is None:
        assert resolution.outcome == {"outcome": {"outcome": "cancelled"}}
        assert (record.chosen_by, record.reason_code, record.reason) == (
            "default",
            ask_module.NO_USER,
            "no user available",
        )
    else:
        assert resolution.outcome == {"outcome": {"outcome": "selected", "optionId": expected}}
        assert (record.chosen_by, record.reason_code) == ("policy", records.POLICY_SELECTED)
    assert record.request_id == fixture["id"]
    assert record.policy == policy
    assert record.local is not None and record.local.permits_allow
    json.dumps(record.to_json())


@needs_captured_worktree
async def test_the_user_chooses_among_the_exact_native_options_under_ask() -> None:
    fixture = _fixture("claude-edit")
    asker = Picks("allow_always")
    resolution = await settle(
        fixture["id"],
        fixture["params"],
        tracker=_tracker(fixture),
        settings=_settings("ask", CAPTURED_WORKTREE, remembered=True),
        asker=asker,
        clock=None,
    )
    assert resolution.outcome["outcome"] == {"outcome": "selected", "optionId": "allow_always"}
    assert resolution.record.chosen_by == "user"
    shown = asker.prompts[0]
    assert [o.option_id for o in shown.offered] == ["allow_always", "allow", "reject"]
    assert [o.name for o in shown.offered] == ["Always Allow", "Allow", "Reject"]


@needs_captured_worktree
async def test_a_remembered_option_cannot_be_chosen_when_the_profile_forbids_it() -> None:
    fixture = _fixture("claude-edit")
    asker = Picks("allow_always")
    resolution = await settle(
        fixture["id"],
        fixture["params"],
        tracker=_tracker(fixture),
        settings=_settings("ask", CAPTURED_WORKTREE, remembered=False),
        asker=asker,
        clock=None,
    )
    assert resolution.outcome == {"outcome": {"outcome": "cancelled"}}
    assert resolution.record.reason_code == ask_module.INVALID_ANSWER
    assert [o.option_id for o in asker.prompts[0].offered] == ["allow", "reject"]


@needs_captured_worktree
async def test_a_reserved_command_is_never_allowed_even_by_the_user_under_full() -> None:
    fixture = _fixture("codex-execute-first-sight")
    params = copy.deepcopy(fixture["params"])
    params["toolCall"]["rawInput"]["command"] = ["/bin/bash", "-lc", "git push --force origin"]
    asker = Picks("approved")
    resolution = await settle(
        fixture["id"],
        params,
        tracker=ToolCallTracker(params["sessionId"]),
        settings=_settings("full", CAPTURED_WORKTREE),
        asker=asker,
        clock=None,
    )
    assert resolution.outcome == {"outcome": {"outcome": "cancelled"}}
    record = resolution.record
    assert record.local is not None and record.local.reason_code == "reserved_command"
    assert [o.option_id for o in asker.prompts[0].offered] == ["abort"]
    assert [(o.option_id, o.offered) for o in record.options] == [
        ("approved", False),
        ("approved-execpolicy-amendment", False),
        ("abort", True),
    ]


@needs_captured_worktree
async def test_an_edit_outside_the_worktree_is_asked_with_only_rejections(
    tmp_path: Path,
) -> None:
    fixture = _fixture("codex-edit")
    asker = Picks("abort")
    resolution = await settle(
        fixture["id"],
        fixture["params"],
        tracker=_tracker(fixture),
        settings=_settings("full", str(tmp_path)),
        asker=asker,
        clock=None,
    )
    assert resolution.outcome["outcome"] == {"outcome": "selected", "optionId": "abort"}
    assert resolution.record.local is not None
    assert resolution.record.local.reason_code == "path_outside_worktree"


def _scripted(tool_call: dict[str, Any], options: list[tuple[str, str, str]]) -> dict[str, Any]:
    return {
        "sessionId": "sess",
        "toolCall": tool_call,
        "options": [{"optionId": i, "name": n, "kind": k} for i, n, k in options],
    }


async def test_a_reject_option_named_cancel_is_selected_not_cancelled(tmp_path: Path) -> None:
    params = _scripted(
        {"toolCallId": "t1", "kind": "edit", "locations": [{"path": f"{tmp_path}/a"}]},
        [("go", "Go", "allow_once"), ("cancel", "cancel", "reject_once")],
    )
    resolution = await settle(
        0,
        params,
        tracker=ToolCallTracker("sess"),
        settings=_settings("ask", str(tmp_path)),
        asker=Picks("cancel"),
        clock=None,
    )
    assert resolution.outcome == {"outcome": {"outcome": "selected", "optionId": "cancel"}}


async def test_only_remembered_options_never_auto_select(tmp_path: Path) -> None:
    params = _scripted(
        {"toolCallId": "t1", "kind": "edit", "locations": [{"path": f"{tmp_path}/a"}]},
        [("aa", "Always", "allow_always"), ("ra", "Never", "reject_always")],
    )
    asker = Picks(None)
    resolution = await settle(
        0,
        params,
        tracker=ToolCallTracker("sess"),
        settings=_settings("full", str(tmp_path)),
        asker=asker,
        clock=None,
    )
    assert resolution.outcome == {"outcome": {"outcome": "cancelled"}}
    assert resolution.record.chosen_by == "user"
    assert [o.option_id for o in asker.prompts[0].offered] == ["aa", "ra"]


async def test_a_request_with_no_prior_tool_call_and_no_input_fails_closed(
    tmp_path: Path,
) -> None:
    params = _scripted({"toolCallId": "never-seen"}, [("ok", "OK", "allow_once")])
    resolution = await settle(
        0,
        params,
        tracker=ToolCallTracker("sess"),
        settings=_settings("full", str(tmp_path)),
        asker=NoUserAsker(),
        clock=None,
    )
    assert resolution.outcome == {"outcome": {"outcome": "cancelled"}}
    assert resolution.record.local is not None
    assert resolution.record.local.reason_code == "kind_not_allowable"


async def test_several_pending_requests_are_answered_independently(tmp_path: Path) -> None:
    tracker = ToolCallTracker("sess")
    gate = asyncio.Event()
    seen: list[str] = []

    class Waits:
        async def ask(self, prompt: AskPrompt) -> AskAnswer:
            seen.append(prompt.request.tool_call_id)
            if len(seen) == 2:
                gate.set()
            await gate.wait()
            wanted = "r" if prompt.request.tool_call_id == "first" else "a"
            return AskAnswer.selected(wanted)

    def params(tool_call_id: str) -> dict[str, Any]:
        return _scripted(
            {"toolCallId": tool_call_id, "kind": "execute", "rawInput": {"command": "ls"}},
            [("a", "Allow", "allow_once"), ("r", "Reject", "reject_once")],
        )

    settings = _settings("ask", str(tmp_path))
    first, second = await asyncio.wait_for(
        asyncio.gather(
            settle(
                1, params("first"), tracker=tracker, settings=settings, asker=Waits(), clock=None
            ),
            settle(
                2, params("second"), tracker=tracker, settings=settings, asker=Waits(), clock=None
            ),
        ),
        timeout=30,
    )
    assert first.outcome["outcome"]["optionId"] == "r"
    assert second.outcome["outcome"]["optionId"] == "a"
    assert sorted(seen) == ["first", "second"]


async def test_an_elapsed_turn_budget_cancels_the_question(tmp_path: Path) -> None:
    params = _scripted(
        {"toolCallId": "t1", "kind": "execute", "rawInput": {"command": "ls"}},
        [("a", "Allow", "allow_once")],
    )

    class Never:
        async def ask(self, prompt: AskPrompt) -> AskAnswer:
            await asyncio.Event().wait()
            raise AssertionError("unreachable")

    clock = TurnBudget(absolute=1.0).start(now=0.0)
    resolution = await asyncio.wait_for(
        settle(
            0,
            params,
            tracker=ToolCallTracker("sess"),
            settings=_settings("ask", str(tmp_path)),
            asker=Never(),
            clock=clock,
            now=lambda: 5.0,
        ),
        timeout=30,
    )
    assert resolution.outcome == {"outcome": {"outcome": "cancelled"}}
    assert (resolution.record.chosen_by, resolution.record.reason_code) == (
        "default",
        ask_module.BUDGET_ELAPSED,
    )


@pytest.mark.parametrize(
    ("request_id", "params", "code"),
    [
        (
            "sk-proj-abcdefghijklmnopqrstuvwx",
            _scripted({"toolCallId": "t"}, [("a", "A", "allow_once")]),
            records.CREDENTIAL_IDENTIFIER,
        ),
        (
            1,
            _scripted(
                {"toolCallId": "ghp_abcdefghijklmnopqrstuvwxyz0123456789"},
                [("a", "A", "allow_once")],
            ),
            records.CREDENTIAL_IDENTIFIER,
        ),
        (1, _scripted({"toolCallId": "t"}, []), records.INVALID_REQUEST),
        (1, {"sessionId": "sess"}, records.INVALID_REQUEST),
        (
            1,
            dict(_scripted({"toolCallId": "t"}, [("a", "A", "allow_once")]), sessionId="other"),
            records.UNKNOWN_SESSION,
        ),
    ],
)
async def test_refused_requests_are_cancelled_and_recorded(
    request_id: Any, params: dict[str, Any], code: str, tmp_path: Path
) -> None:
    resolution = await settle(
        request_id,
        params,
        tracker=ToolCallTracker("sess"),
        settings=_settings("full", str(tmp_path)),
        asker=Picks("a"),
        clock=None,
    )
    assert resolution.outcome == {"outcome": {"outcome": "cancelled"}}
    assert (resolution.record.reason_code, resolution.record.chosen_by) == (code, "default")
    encoded = json.dumps(resolution.record.to_json())
    assert "sk-proj-abcdefghijklmnopqrstuvwx" not in encoded
    assert "ghp_abcdefghijklmnopqrstuvwxyz0123456789" not in encoded


def test_refuse_for_runtime_reasons() -> None:
    params = _scripted({"toolCallId": "t"}, [("a", "A", "allow_once")])
    for code in (records.NO_ACTIVE_PROMPT, records.STALE_GENERATION, records.TURN_CANCELLED):
        resolution = refuse(3, params, reason_code=code, reason="runtime said so", policy="ask")
        assert resolution.outcome == {"outcome": {"outcome": "cancelled"}}
        assert (resolution.record.reason_code, resolution.record.policy) == (code, "ask")
