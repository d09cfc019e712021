"""Every parser against real adapter payloads (tests/fixtures/adapters, copied from captures).

The adapters disagree: neither shape is a superset of the other. These tests pin what Baton
reads from each, so a parser that only agrees with itself cannot pass.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from baton.errors import ChoiceNotAdvertised
from baton.wire.capabilities import AgentCapabilities, InitializeResult, parse_initialize_result
from baton.wire.permission import parse_permission_request, single_allow_once
from baton.wire.session_state import (
    NewSessionResult,
    parse_new_session_result,
    parse_set_config_option_response,
)
from baton.wire.stop import parse_prompt_result
from baton.wire.thinking import resolve_effort, resolve_model

ADAPTERS = Path(__file__).parents[1] / "fixtures" / "adapters"
CLAUDE = "claude-agent-acp-0.23.1"
CODEX = "codex-acp-0.16.0"
FAST = "fast-agent-0.10.48"


def _frame(adapter: str, name: str) -> dict[str, Any]:
    frame: dict[str, Any] = json.loads((ADAPTERS / adapter / name).read_text())
    return frame


def _initialize(adapter: str, name: str = "initialize.json") -> InitializeResult:
    return parse_initialize_result(_frame(adapter, name)["result"])


def _session(adapter: str) -> NewSessionResult:
    return parse_new_session_result(_frame(adapter, "session_new.json")["result"])


def _transcript(adapter: str) -> list[dict[str, Any]]:
    frames: list[dict[str, Any]] = []
    for path in sorted((ADAPTERS / adapter).glob("transcript.*.jsonl")):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            frames.append(record.get("frame") or record.get("msg"))
    return frames


#: The newest versions' feature captures (tests/connection/test_feature_captures.py).
FEATURE_CAPTURES = {"claude-agent-acp-0.101.0", "codex-acp-2.6.0"}


def test_the_fixtures_are_present() -> None:
    assert {p.name for p in ADAPTERS.iterdir()} == {CLAUDE, CODEX, FAST} | FEATURE_CAPTURES


def test_claude_initialize() -> None:
    result = _initialize(CLAUDE)
    assert result.protocol_version == 1
    assert result.capabilities == AgentCapabilities(
        load_session=True,
        prompt_image=True,
        prompt_embedded_context=True,
        mcp_http=True,
        mcp_sse=True,
        session_list=True,
        session_resume=True,
        session_close=True,
        session_fork=True,
        meta_keys=("claudeCode",),
    )
    assert result.auth_methods == ()
    assert result.agent_info is not None and result.agent_info.title == "Claude Agent"


def test_codex_initialize_honours_explicit_false() -> None:
    for name in ("initialize.json", "initialize.nocreds.json"):
        result = _initialize(CODEX, name)
        caps = result.capabilities
        assert caps == AgentCapabilities(
            load_session=True,
            prompt_image=True,
            prompt_audio=False,  # "audio": false is not an advertisement
            prompt_embedded_context=True,
            mcp_http=True,
            mcp_sse=False,  # nor is "sse": false
            session_list=True,
            session_resume=True,
            session_close=True,
            auth_logout=True,
        )
        # "acp": false is neither modeled nor advertised.
        assert caps.unmodeled == ()
        assert [(m.id, m.type) for m in result.auth_methods] == [
            ("chatgpt", "agent"),
            ("codex-api-key", "env_var"),
            ("openai-api-key", "env_var"),
        ]
        assert result.auth_methods[0].description is not None


def test_fast_agent_initialize() -> None:
    result = _initialize(FAST)
    assert result.capabilities == AgentCapabilities(
        load_session=True,
        prompt_image=True,
        prompt_embedded_context=True,
        mcp_http=True,
        mcp_sse=True,
        session_list=True,
        session_resume=True,
        meta_keys=("co.huggingface",),
    )
    assert [m.id for m in result.auth_methods] == ["fast-agent-ai-secrets"]
    assert result.agent_info is not None and result.agent_info.title is None


def test_the_three_adapters_read_differently() -> None:
    caps = {a: _initialize(a).capabilities for a in (CLAUDE, CODEX, FAST)}
    assert caps[CLAUDE].mcp_sse and not caps[CODEX].mcp_sse
    assert caps[CLAUDE].session_close and caps[CODEX].session_close and not caps[FAST].session_close
    assert caps[CODEX].auth_logout and not caps[CLAUDE].auth_logout
    assert len({c for c in caps.values()}) == 3


def test_claude_session_new() -> None:
    session = _session(CLAUDE)
    assert session.session_id == "d4cbc409-3fca-4632-ac8d-1e5c106b7f23"
    state = session.state
    assert state.modes is not None
    assert state.modes.current_mode_id == "default"
    assert state.modes.ids() == ("default", "acceptEdits", "plan", "dontAsk")
    assert state.models is not None
    assert state.models.current_model_id == "default"
    assert state.models.ids() == ("default", "sonnet[1m]", "opus[1m]", "haiku")
    assert [(o.id, o.category, o.type) for o in state.config_options] == [
        ("mode", "mode", "select"),
        ("model", "model", "select"),
    ]
    model = state.config_option("model")
    assert model is not None and model.values() == state.models.ids()
    assert state.ignored_config_options == ()


def test_codex_session_new() -> None:
    state = _session(CODEX).state
    assert state.models is None  # no legacy models object
    assert state.modes is not None and state.modes.ids() == ("read-only", "auto", "full-access")
    assert [(o.id, o.category) for o in state.config_options] == [
        ("mode", "mode"),
        ("model", "model"),
        ("reasoning_effort", "thought_level"),
    ]
    effort = state.config_option("reasoning_effort")
    assert effort is not None
    assert effort.current_value == "medium"
    assert effort.values() == ("low", "medium", "high", "xhigh")


def test_fast_agent_session_new_has_modes_only() -> None:
    state = _session(FAST).state
    assert state.modes is not None and state.modes.ids() == ("agent",)
    assert state.config_options == () and state.models is None


def test_effort_resolves_per_adapter() -> None:
    codex = resolve_effort(_session(CODEX).state, "X-High")
    assert (codex.method, codex.config_id, codex.value) == (
        "session/set_config_option",
        "reasoning_effort",
        "xhigh",
    )
    for adapter in (CLAUDE, FAST):
        with pytest.raises(ChoiceNotAdvertised) as caught:
            resolve_effort(_session(adapter).state, "high")
        assert caught.value.advertised == ()


def test_models_match_exactly_per_adapter() -> None:
    claude = resolve_model(_session(CLAUDE).state, "opus[1m]")
    assert (claude.method, claude.config_id, claude.value) == (
        "session/set_config_option",
        "model",
        "opus[1m]",
    )
    codex = resolve_model(_session(CODEX).state, "gpt-5.4")
    assert codex.already_current
    # A bare name valid for one adapter means nothing to the other.
    with pytest.raises(ChoiceNotAdvertised) as caught:
        resolve_model(_session(CODEX).state, "opus[1m]")
    assert "gpt-5.5" in caught.value.advertised
    with pytest.raises(ChoiceNotAdvertised):
        resolve_model(_session(CLAUDE).state, "gpt-5.4")
    with pytest.raises(ChoiceNotAdvertised):
        resolve_model(_session(CLAUDE).state, "opus")


def test_codex_set_config_option_answer_confirms() -> None:
    frames = _transcript(CODEX)
    answer = next(f for f in frames if f.get("id") == 3 and "result" in f)
    confirmation = parse_set_config_option_response(answer["result"], "reasoning_effort", "low")
    assert confirmation.confirmed and confirmation.complete
    assert len(confirmation.options) == 3
    ambiguous = parse_set_config_option_response(answer["result"], "reasoning_effort", "high")
    assert not ambiguous.confirmed and ambiguous.reported == "low"


@pytest.mark.parametrize("adapter", [CLAUDE, CODEX])
def test_real_permission_requests_parse(adapter: str) -> None:
    requests = [f for f in _transcript(adapter) if f.get("method") == "session/request_permission"]
    assert requests
    for frame in requests:
        request = parse_permission_request(frame["params"])
        chosen = single_allow_once(request.options)
        assert chosen is not None and chosen.kind == "allow_once"
        assert chosen.option_id in {"allow", "approved"}
        assert chosen is not request.options[0] or adapter == CODEX


def test_real_prompt_answers_parse() -> None:
    reasons = set()
    for adapter in (CLAUDE, CODEX, FAST):
        for frame in _transcript(adapter):
            result = frame.get("result")
            if isinstance(result, dict) and "stopReason" in result:
                parsed = parse_prompt_result(result)
                assert parsed.stop_reason.known
                reasons.add(parsed.stop_reason.value)
                if adapter == CLAUDE and parsed.stop_reason.is_end_turn:
                    assert parsed.usage is not None
    assert reasons == {"end_turn", "cancelled"}
