"""Grok Build's session model catalog (grok-build-acp/session-models@v1)."""

from __future__ import annotations

from typing import Any

import pytest

from baton.errors import ChoiceNotAdvertised, ExtensionPayloadInvalid
from baton.wire.extensions import grok


def catalog(current: str = "grok-build", *models: dict[str, Any]) -> dict[str, Any]:
    return {
        "currentModelId": current,
        "availableModels": list(models)
        or [
            {
                "modelId": "grok-build",
                "name": "Grok Build",
                "_meta": {
                    "reasoningEfforts": [
                        {"value": "low", "name": "Low"},
                        {"value": "high", "name": "High"},
                    ],
                    "reasoningEffort": "high",
                    "totalContextTokens": 500000,
                },
            },
            {"modelId": "grok-code-fast-1", "name": "Grok Code Fast"},
        ],
    }


def test_initialize_model_state() -> None:
    result = {"protocolVersion": 1, "_meta": {"modelState": catalog()}}
    parsed = grok.parse_initialize_model_state(result)
    assert parsed is not None
    assert parsed.current_model_id == "grok-build"
    assert parsed.ids() == ("grok-build", "grok-code-fast-1")
    build = parsed.current
    assert build.efforts == (grok.GrokEffort("low", "Low"), grok.GrokEffort("high", "High"))
    assert build.current_effort == "high"
    assert parsed.model("grok-code-fast-1") == grok.GrokModel("grok-code-fast-1", "Grok Code Fast")


@pytest.mark.parametrize(
    "result",
    [{}, {"_meta": None}, {"_meta": {"other": 1}}, {"_meta": {"modelState": None}}, None, []],
)
def test_initialize_without_catalog(result: Any) -> None:
    assert grok.parse_initialize_model_state(result) is None


def test_session_models_and_model_state() -> None:
    parsed = grok.parse_session_models({"sessionId": "s", "models": catalog()})
    assert parsed is not None
    state = parsed.to_model_state()
    assert state.current_model_id == "grok-build"
    assert state.ids() == ("grok-build", "grok-code-fast-1")
    assert grok.parse_session_models({"sessionId": "s"}) is None


def test_tolerant_entries() -> None:
    raw = catalog(
        "b",
        {"modelId": "a", "reasoningEfforts": ["low", "", 3, {"id": "x-high", "label": "XH"}]},
        {"modelId": ""},
        {"name": "no id"},
        "junk",
        {"modelId": "b", "name": 7, "_meta": {"reasoningEfforts": "nope"}},
        {"modelId": "c" * (grok.MAX_ID_CHARS + 1)},
    )
    parsed = grok.parse_model_state(raw)
    assert parsed.ids() == ("a", "b")
    assert parsed.ignored_entries == 4
    a = parsed.model("a")
    assert a is not None and a.name == "a"
    assert a.efforts == (grok.GrokEffort("low", "low"), grok.GrokEffort("x-high", "XH"))
    assert parsed.current.name == "b" and parsed.current.efforts == ()


def test_effort_list_is_bounded_and_deduplicated() -> None:
    efforts = [f"e{i}" for i in range(grok.MAX_EFFORTS_PER_MODEL + 10)] + ["e0"]
    parsed = grok.parse_model_state(catalog("m", {"modelId": "m", "reasoningEfforts": efforts}))
    assert len(parsed.current.efforts) == grok.MAX_EFFORTS_PER_MODEL


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ("x", "not an object"),
        ({"availableModels": []}, "currentModelId"),
        ({"currentModelId": "", "availableModels": []}, "currentModelId"),
        ({"currentModelId": "a"}, "availableModels list"),
        ({"currentModelId": "a", "availableModels": {"a": 1}}, "availableModels list"),
        ({"currentModelId": "a", "availableModels": [{"modelId": "b"}]}, "does not list"),
        (
            {"currentModelId": "a", "availableModels": [{"modelId": "a"}, {"modelId": "a"}]},
            "twice",
        ),
        (
            {
                "currentModelId": "a",
                "availableModels": [{"modelId": "a"}] * (grok.MAX_CATALOG_MODELS + 1),
            },
            "at most",
        ),
    ],
)
def test_malformed_catalog(raw: Any, problem: str) -> None:
    with pytest.raises(ExtensionPayloadInvalid) as caught:
        grok.apply_models_update(raw)
    assert problem in caught.value.message
    assert caught.value.code == "AGENT_EXTENSION_INVALID"
    assert caught.value.fault == "agent"


def test_malformed_initialize_catalog_raises() -> None:
    with pytest.raises(ExtensionPayloadInvalid):
        grok.parse_initialize_model_state({"_meta": {"modelState": {"currentModelId": "a"}}})


def test_update_replaces_the_catalog_atomically() -> None:
    first = grok.parse_model_state(catalog())
    second = grok.apply_models_update(
        {"currentModelId": "grok-5", "availableModels": [{"modelId": "grok-5", "name": "Five"}]}
    )
    assert first.model("grok-build") is not None
    assert second.ids() == ("grok-5",)
    assert second.model("grok-build") is None  # removed models do not remain
    with pytest.raises(ChoiceNotAdvertised):
        grok.require_selection(second, "grok-build")


def test_catalog_after_startup_applies_updates_in_order() -> None:
    initialize = {"_meta": {"modelState": catalog()}}
    updates = [
        {"jsonrpc": "2.0", "method": "_auth/status_update", "params": {}},
        {
            "jsonrpc": "2.0",
            "method": grok.MODELS_UPDATE_METHOD,
            "params": catalog("x", {"modelId": "x"}),
        },
        {
            "jsonrpc": "2.0",
            "method": grok.MODELS_UPDATE_METHOD,
            "params": catalog("y", {"modelId": "y"}, {"modelId": "x"}),
        },
    ]
    result = grok.catalog_after_startup(initialize, updates)
    assert result is not None and result.ids() == ("y", "x")
    assert grok.catalog_after_startup(initialize, []) == grok.parse_model_state(catalog())
    # An update alone is a catalog too (the initialize answer carried none).
    alone = grok.catalog_after_startup({}, updates[1:2])
    assert alone is not None and alone.ids() == ("x",)
    # A request with the method name is not the notification.
    assert not grok.is_models_update({"id": 1, "method": grok.MODELS_UPDATE_METHOD})


def test_malformed_startup_update_raises() -> None:
    bad = {"jsonrpc": "2.0", "method": grok.MODELS_UPDATE_METHOD, "params": {"x": 1}}
    with pytest.raises(ExtensionPayloadInvalid):
        grok.catalog_after_startup({"_meta": {"modelState": catalog()}}, [bad])


def test_set_model_params() -> None:
    assert grok.set_model_params("s1", "grok-build") == {"sessionId": "s1", "modelId": "grok-build"}
    assert grok.set_model_params("s1", "grok-build", reasoning_effort="low") == {
        "sessionId": "s1",
        "modelId": "grok-build",
        "_meta": {"reasoningEffort": "low"},
    }


def test_require_selection_and_effort_matching() -> None:
    parsed = grok.parse_model_state(catalog())
    model, effort = grok.require_selection(parsed, "grok-build", "High")
    assert model.model_id == "grok-build" and effort == "high"
    assert grok.require_selection(parsed, "grok-build") == (model, None)
    with pytest.raises(ChoiceNotAdvertised) as caught:
        grok.require_selection(parsed, "grok-build", "xhigh")
    assert caught.value.advertised == ("low", "high")
    with pytest.raises(ChoiceNotAdvertised):
        grok.require_selection(parsed, "grok-code-fast-1", "low")  # no efforts advertised
    with pytest.raises(ChoiceNotAdvertised) as missing:
        grok.require_selection(parsed, "Grok-Build")  # models match exactly
    assert missing.value.advertised == ("grok-build", "grok-code-fast-1")


def test_ambiguous_effort() -> None:
    raw = catalog("m", {"modelId": "m", "reasoningEfforts": ["High", "HIGH"]})
    with pytest.raises(ChoiceNotAdvertised) as caught:
        grok.resolve_effort(grok.parse_model_state(raw).current, "high")
    assert "ambiguous" in caught.value.what


def test_with_current() -> None:
    parsed = grok.parse_model_state(catalog())
    moved = parsed.with_current("grok-code-fast-1")
    assert moved.current_model_id == "grok-code-fast-1"
    lowered = parsed.with_current("grok-build", "low")
    assert lowered.current.current_effort == "low"
    assert parsed.current.current_effort == "high"  # the original is untouched
    with pytest.raises(ChoiceNotAdvertised):
        parsed.with_current("gone")
