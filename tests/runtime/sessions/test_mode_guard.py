"""The native-mode guard, decided on the session states real adapters reported (the captures
in tests/fixtures/adapters), and the bypass rule for undeclared modes."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson
import pytest

from baton.errors import ConfigurationError, ModeActsWithoutAsking
from baton.runtime.agents.native_modes import (
    MAX_MODE_TEXT_CHARS,
    UNDECLARED,
    NativeModes,
    says_it_bypasses,
    session_modes,
)
from baton.runtime.agents.profiles import BUILTIN_PROFILES, CLAUDE, CODEX
from baton.runtime.sessions.mode_guard import (
    MODE_ACTS_WITHOUT_ASKING,
    MODE_MAY_BYPASS_APPROVALS,
    guard_mode,
)
from baton.runtime.turns.settings import RequestedSettings
from baton.wire.session_state import ModeState, SessionState, parse_session_state

ADAPTERS = Path(__file__).resolve().parents[2] / "fixtures" / "adapters"
NOTHING = RequestedSettings()


def _new_session_result(capture: str) -> dict[str, Any]:
    path = ADAPTERS / capture
    data = orjson.loads(path.read_bytes())
    if "frames" not in data:
        result: dict[str, Any] = data["result"]
        return result
    asked = {
        f["frame"]["id"]
        for f in data["frames"]
        if f["dir"] == "client->agent" and f["frame"].get("method") == "session/new"
    }
    for frame in data["frames"]:
        answer = frame["frame"]
        if frame["dir"] == "agent->client" and answer.get("id") in asked and "result" in answer:
            found: dict[str, Any] = answer["result"]
            return found
    raise AssertionError(f"no session/new answer in {capture}")


CLAUDE_101 = parse_session_state(
    _new_session_result("claude-agent-acp-0.101.0/features.protocol-1.json")
)
CLAUDE_23 = parse_session_state(_new_session_result("claude-agent-acp-0.23.1/session_new.json"))
CODEX_16 = parse_session_state(_new_session_result("codex-acp-0.16.0/session_new.json"))
FAST_AGENT = parse_session_state(_new_session_result("fast-agent-0.10.48/session_new.json"))


def _starting_in(state: SessionState, mode_id: str) -> SessionState:
    assert state.modes is not None
    return replace(state, modes=replace(state.modes, current_mode_id=mode_id))


def test_claude_0_101_starts_in_auto_and_baton_selects_default_under_ask() -> None:
    modes = session_modes(CLAUDE_101)
    assert modes is not None and modes.current == "auto"
    for policy in ("ask", "auto-edits"):
        decision = guard_mode(CLAUDE.native_modes, policy, NOTHING, CLAUDE_101)
        assert decision.select == "default" and decision.warning is None


def test_the_mode_config_option_alone_is_guarded_too() -> None:
    only_config = replace(CLAUDE_101, modes=None)
    modes = session_modes(only_config)
    assert modes is not None and modes.current == "auto"
    assert guard_mode(CLAUDE.native_modes, "ask", NOTHING, only_config).select == "default"


def test_full_leaves_the_starting_mode_alone() -> None:
    decision = guard_mode(CLAUDE.native_modes, "full", NOTHING, CLAUDE_101)
    assert decision.select is None and decision.warning is None


def test_a_session_starting_in_an_asking_mode_is_left_as_it_is() -> None:
    for profile, state in ((CLAUDE, CLAUDE_23), (CODEX, CODEX_16)):
        decision = guard_mode(profile.native_modes, "ask", NOTHING, state)
        assert decision.select is None and decision.warning is None


def test_codex_starting_in_full_access_is_moved_to_read_only() -> None:
    for start in ("auto", "full-access"):
        state = _starting_in(CODEX_16, start)
        assert guard_mode(CODEX.native_modes, "ask", NOTHING, state).select == "read-only"


@pytest.mark.parametrize(
    "requested",
    [RequestedSettings(mode="auto"), RequestedSettings(config={"mode": "auto"})],
)
def test_an_explicit_self_acting_mode_is_allowed_and_said(requested: RequestedSettings) -> None:
    decision = guard_mode(CLAUDE.native_modes, "ask", requested, CLAUDE_23)
    assert decision.select is None
    assert decision.warning is not None and decision.warning.code == MODE_ACTS_WITHOUT_ASKING
    assert "'auto'" in decision.warning.message


def test_an_explicit_asking_mode_says_nothing() -> None:
    decision = guard_mode(CLAUDE.native_modes, "ask", RequestedSettings(mode="plan"), CLAUDE_101)
    assert decision.select is None and decision.warning is None


def test_no_asking_mode_offered_is_refused_with_a_stable_code() -> None:
    assert CLAUDE_101.modes is not None
    acting_only = ModeState(
        "auto", tuple(m for m in CLAUDE_101.modes.available if m.id in ("auto", "acceptEdits"))
    )
    state = SessionState(modes=acting_only)
    with pytest.raises(ModeActsWithoutAsking) as caught:
        guard_mode(CLAUDE.native_modes, "ask", NOTHING, state)
    assert caught.value.code == "MODE_ACTS_WITHOUT_ASKING" and caught.value.fault == "caller"
    assert "'auto'" in caught.value.message and "--mode" in caught.value.message


def test_agents_without_modes_are_unaffected() -> None:
    no_modes = SessionState()
    for declared in (CLAUDE.native_modes, UNDECLARED):
        decision = guard_mode(declared, "ask", RequestedSettings(mode=None), no_modes)
        assert decision.select is None and decision.warning is None
    assert guard_mode(UNDECLARED, "ask", NOTHING, FAST_AGENT) == guard_mode(
        UNDECLARED, "full", NOTHING, SessionState()
    )


def test_an_unknown_agent_starting_in_claudes_auto_is_warned_about() -> None:
    decision = guard_mode(UNDECLARED, "ask", NOTHING, CLAUDE_101)
    assert decision.select is None
    assert decision.warning is not None and decision.warning.code == MODE_MAY_BYPASS_APPROVALS


@pytest.mark.parametrize(
    ("mode_id", "description"),
    [
        ("auto", "Claude handles permission decisions"),
        ("bypassPermissions", ""),
        ("dontAsk", ""),
        ("yolo", ""),
        ("full-access", ""),
        ("x", "Codex can edit files outside this workspace without asking for approval."),
        ("x", "Don't prompt for permissions, deny if not pre-approved"),
        ("x", "Auto-approve every tool call"),
        ("x", "skip permission checks"),
        ("x", "runs with --dangerously-skip-permissions"),
    ],
)
def test_the_bypass_rule_matches_what_says_it_bypasses(mode_id: str, description: str) -> None:
    assert says_it_bypasses(mode_id, description)


@pytest.mark.parametrize(
    ("mode_id", "description"),
    [
        ("default", "Always ask before making changes"),
        ("default", "Standard behavior, prompts for dangerous operations"),
        ("read-only", "Codex can read files. Approval is required to edit files."),
        ("plan", "Planning mode, no actual tool execution"),
        ("agent", "You are a helpful AI Agent."),
        ("acceptEdits", "Automatically accept all file edits"),
    ],
)
def test_the_bypass_rule_leaves_asking_words_alone(mode_id: str, description: str) -> None:
    assert not says_it_bypasses(mode_id, description)


def test_the_bypass_rule_reads_a_bounded_description() -> None:
    padded = "a" * MAX_MODE_TEXT_CHARS
    assert says_it_bypasses("x", padded[:-6] + "bypass")
    assert not says_it_bypasses("x", padded + "bypass")


def test_every_declaring_profile_is_consistent() -> None:
    with pytest.raises(ConfigurationError):
        NativeModes(asking=("a",), self_acting=frozenset({"a"}))
    declared = [p for p in BUILTIN_PROFILES.values() if p.native_modes != UNDECLARED]
    assert {p.id for p in declared} == {"claude", "codex"}
    assert CLAUDE.native_modes.approval("auto") == "acts"
    assert CLAUDE.native_modes.approval("default") == "asks"
