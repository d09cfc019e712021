"""Agent capabilities: the leaf rule, unmodeled paths, initialize results, what Baton sends."""

from __future__ import annotations

from typing import Any

import pytest

from baton._version import __version__
from baton.errors import (
    CapabilityNotAdvertised,
    IncompatibleProtocolVersion,
    MalformedResult,
    UsageError,
)
from baton.wire.capabilities import (
    CAPABILITY_PATHS,
    MAX_AUTH_METHODS,
    MAX_UNMODELED_PATHS,
    NO_ELICITATION,
    AgentCapabilities,
    ElicitationOffer,
    client_capabilities,
    initialize_params,
    leaf_advertised,
    parse_agent_capabilities,
    parse_initialize_result,
)

OMITTED = object()

# Every form a leaf can take and whether it advertises.
LEAF_FORMS: list[tuple[object, bool]] = [
    (True, True),
    (False, False),
    ({}, True),
    (None, False),
    (OMITTED, False),
    ({"_meta": {"x": 1}}, True),
]


def _container_with(path: str, value: object) -> dict[str, Any]:
    if "." not in path:
        return {} if value is OMITTED else {path: value}
    head, rest = path.split(".", 1)
    if "." in rest:  # a nested leaf (systemPrompt.mode.override): its parents are objects
        return {head: _container_with(rest, value)}
    return {head: {} if value is OMITTED else {rest: value}}


@pytest.mark.parametrize(("value", "expected"), LEAF_FORMS)
@pytest.mark.parametrize("path", sorted(CAPABILITY_PATHS))
def test_every_capability_in_every_form(path: str, value: object, expected: bool) -> None:
    capabilities = parse_agent_capabilities(_container_with(path, value))
    assert capabilities.supports(path) is expected
    # A nested leaf's parent is advertised by the objects around it.
    others = [p for p in CAPABILITY_PATHS if p != path and not path.startswith(p + ".")]
    assert not any(capabilities.supports(p) for p in others)
    assert capabilities.unmodeled == ()


@pytest.mark.parametrize(("value", "expected"), [*LEAF_FORMS[:4], (0, True), ("no", True)])
def test_the_leaf_rule(value: object, expected: bool) -> None:
    assert leaf_advertised(value) is expected


@pytest.mark.parametrize("container", [True, False, None, [], "yes", 1])
def test_a_container_that_is_not_an_object_advertises_nothing(container: object) -> None:
    capabilities = parse_agent_capabilities(
        {"promptCapabilities": container, "sessionCapabilities": container}
    )
    assert capabilities == AgentCapabilities()


@pytest.mark.parametrize("raw", [None, [], "caps", 3])
def test_unreadable_capabilities_are_all_unsupported(raw: object) -> None:
    assert parse_agent_capabilities(raw) == AgentCapabilities()


def test_require_names_the_absent_capability() -> None:
    capabilities = parse_agent_capabilities({"promptCapabilities": {"audio": False}})
    with pytest.raises(CapabilityNotAdvertised) as caught:
        capabilities.require("promptCapabilities.audio", "an audio block")
    assert caught.value.capability == "promptCapabilities.audio"
    assert caught.value.fault == "caller"
    assert "an audio block" in caught.value.message
    parse_agent_capabilities({"loadSession": True}).require("loadSession", "session/load")


def test_an_unknown_capability_path_is_a_caller_mistake() -> None:
    with pytest.raises(UsageError):
        AgentCapabilities().supports("promptCapabilities.video")


def test_unmodeled_paths_are_recorded_only_when_advertised() -> None:
    capabilities = parse_agent_capabilities(
        {
            "sessionCapabilities": {"title": {}, "list": {}, "_meta": {"x": True}},
            "mcpCapabilities": {"http": True, "acp": False},
            "nes": {"jump": True},
            "positionEncoding": None,
            "providers": False,
            "promptCapabilities": {"video": True},
            "_meta": {"claudeCode": {"promptQueueing": True}, "co.huggingface": {}},
        }
    )
    assert capabilities.unmodeled == (
        "sessionCapabilities.title",
        "nes",
        "promptCapabilities.video",
    )
    assert capabilities.meta_keys == ("claudeCode", "co.huggingface")
    assert capabilities.session_list and capabilities.mcp_http


def test_fork_and_batons_at_turn_extension_are_read_from_the_fork_capability() -> None:
    plain = parse_agent_capabilities({"sessionCapabilities": {"fork": {}}})
    assert plain.session_fork and not plain.session_fork_at_turn
    assert plain.supports("sessionCapabilities.fork")
    extended = parse_agent_capabilities(
        {"sessionCapabilities": {"fork": {"_meta": {"baton.forkAtTurn": True}}}}
    )
    assert extended.session_fork and extended.session_fork_at_turn
    for meta in ({"baton.forkAtTurn": "yes"}, {"other.forkAtTurn": True}, "x"):
        odd = parse_agent_capabilities({"sessionCapabilities": {"fork": {"_meta": meta}}})
        assert odd.session_fork and not odd.session_fork_at_turn
    absent = parse_agent_capabilities({"sessionCapabilities": {"fork": None}})
    assert not absent.session_fork and not absent.session_fork_at_turn
    assert not parse_agent_capabilities({}).session_fork


def test_unmodeled_paths_are_bounded() -> None:
    raw = {f"ext{i}": {} for i in range(MAX_UNMODELED_PATHS + 10)}
    capabilities = parse_agent_capabilities(raw)
    assert len(capabilities.unmodeled) == MAX_UNMODELED_PATHS


def test_a_long_capability_key_is_cut() -> None:
    capabilities = parse_agent_capabilities({"x" * 1000: {}})
    assert len(capabilities.unmodeled[0]) < 200


def test_initialize_result_keeps_auth_methods_and_agent_info() -> None:
    result = parse_initialize_result(
        {
            "protocolVersion": 1,
            "agentCapabilities": {"loadSession": True},
            "authMethods": [
                {"id": "chatgpt", "name": "Login", "description": "Use ChatGPT"},
                {"id": "term", "name": "Terminal", "type": "terminal"},
                {"id": "key", "name": "Key", "type": "env_var", "vars": [{"name": "K"}]},
                {"name": "no id"},
                {"id": "chatgpt", "name": "repeated"},
                "junk",
            ],
            "agentInfo": {"name": "agent", "title": "Agent", "version": "1.2"},
        }
    )
    assert result.protocol_version == 1
    assert result.capabilities.load_session
    assert [(m.id, m.type, m.description) for m in result.auth_methods] == [
        ("chatgpt", "agent", "Use ChatGPT"),
        ("term", "terminal", None),
        ("key", "env_var", None),
    ]
    method = result.auth_method("term")
    assert method is not None and method.is_terminal
    assert result.auth_method("nope") is None
    assert result.agent_info is not None
    assert (result.agent_info.name, result.agent_info.title, result.agent_info.version) == (
        "agent",
        "Agent",
        "1.2",
    )


def test_auth_methods_are_bounded() -> None:
    methods = [{"id": f"m{i}", "name": "n"} for i in range(MAX_AUTH_METHODS + 5)]
    result = parse_initialize_result({"protocolVersion": 1, "authMethods": methods})
    assert len(result.auth_methods) == MAX_AUTH_METHODS


def test_initialize_result_tolerates_missing_parts() -> None:
    result = parse_initialize_result({"protocolVersion": 1, "agentInfo": {"title": "no name"}})
    assert result.capabilities == AgentCapabilities()
    assert result.auth_methods == ()
    assert result.agent_info is None


def test_initialize_result_must_be_an_object_with_an_implemented_version() -> None:
    with pytest.raises(MalformedResult):
        parse_initialize_result(None)
    with pytest.raises(IncompatibleProtocolVersion):
        parse_initialize_result({"protocolVersion": 2})
    with pytest.raises(IncompatibleProtocolVersion):
        parse_initialize_result({})


def test_baton_advertises_exactly_what_it_implements() -> None:
    assert client_capabilities() == {
        "fs": {"readTextFile": False, "writeTextFile": False},
        "terminal": False,
        "session": {"configOptions": {"boolean": {}}, "notices": {}, "compaction": {}},
    }
    params = initialize_params(1)
    assert params == {
        "protocolVersion": 1,
        "clientCapabilities": client_capabilities(),
        "clientInfo": {"name": "baton", "version": __version__},
    }
    assert initialize_params(1, "9.9")["clientInfo"]["version"] == "9.9"


def test_notices_and_compaction_are_advertised_elicitation_only_when_offered() -> None:
    session = client_capabilities()["session"]
    assert session["notices"] == {} and session["compaction"] == {}
    assert "elicitation" not in client_capabilities(NO_ELICITATION)
    both = client_capabilities(ElicitationOffer(form=True, url=True))
    assert both["elicitation"] == {"form": {}, "url": {}}
    assert client_capabilities(ElicitationOffer(form=True))["elicitation"] == {"form": {}}
    assert client_capabilities(ElicitationOffer(url=True))["elicitation"] == {"url": {}}
    params = initialize_params(1, elicitation=ElicitationOffer(form=True))
    assert params["clientCapabilities"]["elicitation"] == {"form": {}}


@pytest.mark.parametrize(
    ("system_prompt", "append", "override"),
    [
        ({}, True, False),
        ({"mode": None}, True, False),
        ({"mode": {"override": {}}}, True, True),
        ({"mode": {"override": False}}, True, False),
        ({"mode": True}, True, False),
        (True, True, False),
        (False, False, False),
        (None, False, False),
    ],
)
def test_system_prompt_modes(system_prompt: object, append: bool, override: bool) -> None:
    capabilities = parse_agent_capabilities(
        {"sessionCapabilities": {"systemPrompt": system_prompt}}
    )
    assert capabilities.supports("sessionCapabilities.systemPrompt") is append
    assert capabilities.supports("sessionCapabilities.systemPrompt.mode.override") is override
    assert capabilities.unmodeled == ()
