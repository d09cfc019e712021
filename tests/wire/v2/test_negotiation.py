"""v2 negotiation and initialize: offer 2, accept 1, read v2's info/capabilities layout."""

from __future__ import annotations

from typing import Any

import pytest

from baton.errors import (
    CapabilityNotAdvertised,
    IncompatibleProtocolVersion,
    MalformedResult,
    ProtocolVersionMislabelled,
)
from baton.wire.codec import AcpV1Codec, AcpV2Codec, initialize_params, negotiate
from baton.wire.mcp import check_mcp_servers
from baton.wire.version import AUTO_CHOICE, ProtocolChoice

INFO = {"name": "agent", "version": "1.0"}


def test_auto_offers_1_with_both_layouts() -> None:
    # Issue 29: the stable version by default; both layouts so a v2-only agent reads it too.
    params = initialize_params(AUTO_CHOICE, "9.9")
    assert params["protocolVersion"] == 1
    assert params["info"] == {"name": "baton", "version": "9.9"}
    assert params["clientInfo"] == {"name": "baton", "version": "9.9"}
    assert params["capabilities"] == {}
    assert params["clientCapabilities"]["terminal"] is False


def test_auto_offers_2_where_the_profile_declared_v2() -> None:
    params = initialize_params(ProtocolChoice(v2_declared=True), "9.9")
    assert params["protocolVersion"] == 2
    assert {"info", "capabilities", "clientInfo", "clientCapabilities"} <= set(params)


def test_auto_accepts_a_v2_answer_to_an_offer_of_1() -> None:
    # An agent answers another version only when it does not speak the one offered.
    codec, result = negotiate({"protocolVersion": 2, "info": INFO, "capabilities": {}})
    assert isinstance(codec, AcpV2Codec) and result.protocol_version == 2


@pytest.mark.parametrize(
    ("choice", "fix"),
    [
        (AUTO_CHOICE, "--protocol 1"),
        (ProtocolChoice(v2_declared=True), "--protocol 1"),
        (ProtocolChoice(2), "--protocol auto"),
    ],
)
@pytest.mark.parametrize(
    "v1_keys", [(), ("agentInfo",), ("agentCapabilities",), ("agentInfo", "agentCapabilities")]
)
def test_a_v1_answer_labelled_2_is_mislabelled_naming_the_fix(
    choice: ProtocolChoice, fix: str, v1_keys: tuple[str, ...]
) -> None:
    # The official Python SDK 0.12.1's echo agent and fast-agent 0.10.48 echo the offer.
    result: dict[str, Any] = {"protocolVersion": 2, **{k: {} for k in v1_keys}}
    with pytest.raises(ProtocolVersionMislabelled) as caught:
        negotiate(result, choice)
    error = caught.value
    assert isinstance(error, IncompatibleProtocolVersion) and error.fault == "agent"
    assert error.code == "AGENT_PROTOCOL_MISLABELLED"
    assert fix in error.message and "malformed" not in error.message.lower()
    assert (error.offered, error.answered) == (choice.offered, 2)


def test_pinned_offers_carry_one_layout() -> None:
    assert set(initialize_params(ProtocolChoice(2))) == {"protocolVersion", "info", "capabilities"}
    v1 = initialize_params(ProtocolChoice(1))
    assert v1["protocolVersion"] == 1 and "info" not in v1 and "clientInfo" in v1


def test_an_answer_of_1_picks_the_v1_codec() -> None:
    codec, result = negotiate(
        {"protocolVersion": 1, "agentCapabilities": {"loadSession": True}, "agentInfo": INFO}
    )
    assert isinstance(codec, AcpV1Codec) and codec.login_method == "authenticate"
    assert result.protocol_version == 1 and result.capabilities.load_session


def test_an_answer_of_2_picks_the_v2_codec_and_reads_markers() -> None:
    codec, result = negotiate(
        {
            "protocolVersion": 2,
            "info": {"name": "a", "title": "A", "version": "2.0"},
            "capabilities": {
                "session": {
                    "prompt": {"image": {}, "audio": None, "embeddedContext": {"_meta": {}}},
                    "mcp": {"stdio": {}, "http": {}},
                    "delete": {},
                    "fork": {},
                },
                "auth": {"_x.ai/device": {}},
                "_x": {},
                "_meta": {"vendor": 1},
            },
            "authMethods": [{"type": "agent", "methodId": "login", "name": "Log in"}],
        }
    )
    assert isinstance(codec, AcpV2Codec) and codec.login_method == "auth/login"
    caps = result.capabilities
    assert result.agent_info is not None and result.agent_info.version == "2.0"
    assert (caps.prompt_image, caps.prompt_audio, caps.prompt_embedded_context) == (
        True,
        False,
        True,
    )
    assert caps.mcp_stdio and caps.mcp_http and not caps.mcp_sse
    assert caps.session_resume and caps.session_list and caps.session_close
    assert caps.session_delete and not caps.load_session
    assert caps.auth_logout
    assert result.auth_methods[0].id == "login"
    assert set(caps.unmodeled) == {"auth._x.ai/device", "_x"}
    assert caps.session_fork and not caps.session_fork_at_turn
    assert caps.meta_keys == ("vendor",)


def test_v2_without_session_capabilities_supports_no_session_methods() -> None:
    _codec, result = negotiate({"protocolVersion": 2, "info": INFO, "capabilities": {}})
    caps = result.capabilities
    assert not caps.session_resume and not caps.mcp_stdio and not caps.auth_logout
    with pytest.raises(CapabilityNotAdvertised) as caught:
        check_mcp_servers([{"name": "x", "command": "/bin/x", "args": [], "env": []}], caps, "n")
    assert "session.mcp.stdio" in caught.value.message


@pytest.mark.parametrize(
    "info", [None, {}, {"name": "a"}, {"version": "1"}, {"name": 1, "version": "1"}, "agent"]
)
def test_an_answer_of_2_without_info_is_malformed(info: Any) -> None:
    result: dict[str, Any] = {"protocolVersion": 2, "capabilities": {}}
    if info is not None:
        result["info"] = info
    with pytest.raises(MalformedResult) as caught:
        negotiate(result)
    assert caught.value.code == "AGENT_MALFORMED_RESULT"


def test_a_pinned_choice_refuses_the_other_answer() -> None:
    with pytest.raises(IncompatibleProtocolVersion) as caught:
        negotiate({"protocolVersion": 2, "info": INFO}, ProtocolChoice(1))
    assert "offered protocol version 1" in caught.value.message
    assert "answered 2" in caught.value.message


def test_an_unimplemented_answer_names_both() -> None:
    with pytest.raises(IncompatibleProtocolVersion) as caught:
        negotiate({"protocolVersion": 3})
    assert "offered protocol version 1" in caught.value.message
    assert "answered 3" in caught.value.message


def test_v2_methods_and_attach() -> None:
    v2 = AcpV2Codec()
    assert v2.logout_method == "auth/logout"
    assert v2.removed("session/load") and v2.removed("session/set_mode")
    assert not v2.removed("session/prompt")
    plan = v2.attach_plan(resume=True, replay=False)
    assert plan is not None and plan.method == "session/resume" and not plan.extra
    replay = v2.resume_with_replay()
    assert replay.extra == {"replayFrom": {"type": "start"}}
    assert v2.attach_plan(resume=False, replay=False) is None
    v1 = AcpV1Codec()
    load = v1.attach_plan(resume=False, replay=True)
    assert load is not None and load.method == "session/load"


def test_v2_system_prompt_markers_are_read_like_v1() -> None:
    # The draft's unstable session.systemPrompt (claude-agent-acp 0.101.0 and codex-acp 2.6.0
    # advertise it under v2): append with the marker, override with mode.override.
    def caps(system_prompt: object) -> Any:
        session = {"systemPrompt": system_prompt}
        answer = {"protocolVersion": 2, "info": INFO, "capabilities": {"session": session}}
        return negotiate(answer)[1].capabilities

    both = caps({"mode": {"override": {}}})
    assert both.supports("sessionCapabilities.systemPrompt")
    assert both.supports("sessionCapabilities.systemPrompt.mode.override")
    assert "session.systemPrompt" not in both.unmodeled
    append = caps({})
    assert append.supports("sessionCapabilities.systemPrompt")
    assert not append.supports("sessionCapabilities.systemPrompt.mode.override")
    for absent in (None, False, {"mode": None}):
        found = caps(absent)
        assert not found.supports("sessionCapabilities.systemPrompt.mode.override")
    assert not caps(None).supports("sessionCapabilities.systemPrompt")
    assert not caps(False).supports("sessionCapabilities.systemPrompt")
