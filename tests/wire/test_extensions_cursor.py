"""Cursor's parameterized model picker (cursor-agent-acp/parameterized-model-picker@v1)."""

from __future__ import annotations

from typing import Any

import pytest

from baton.errors import ChoiceNotAdvertised, ExtensionPayloadInvalid
from baton.wire.capabilities import initialize_params
from baton.wire.extensions import cursor


def thought_level(current: str, *values: str) -> dict[str, Any]:
    return {
        "id": "reasoning",
        "name": "Reasoning",
        "category": "thought_level",
        "type": "select",
        "currentValue": current,
        "options": [{"value": v, "name": v.title()} for v in values],
    }


def answer() -> dict[str, Any]:
    return {
        "models": [
            {"value": "default", "name": "Auto"},
            {
                "value": "gpt-5",
                "name": "GPT-5",
                "configOptions": [thought_level("medium", "low", "medium", "high")],
            },
            {
                "value": "sonnet-4",
                "name": "Sonnet 4",
                "configOptions": [
                    {"id": "fast", "name": "Fast", "type": "boolean", "currentValue": False},
                    {"id": "odd", "name": "Odd", "type": "slider", "currentValue": 3},
                ],
            },
        ]
    }


def test_initialize_request_gets_the_flag() -> None:
    base = initialize_params(1)
    base["clientCapabilities"]["_meta"] = {"other": 1}
    params = cursor.with_model_picker(base)
    assert params["clientCapabilities"]["_meta"] == {"other": 1, "parameterizedModelPicker": True}
    # Everything else is unchanged, and the input is not modified.
    assert params["clientCapabilities"]["fs"] == base["clientCapabilities"]["fs"]
    assert params["protocolVersion"] == 1 and params["clientInfo"] == base["clientInfo"]
    assert base["clientCapabilities"]["_meta"] == {"other": 1}
    bare = cursor.with_model_picker({"protocolVersion": 1})
    assert bare["clientCapabilities"] == {"_meta": {"parameterizedModelPicker": True}}
    assert cursor.list_models_params() == {}


def test_parse_list() -> None:
    models = cursor.parse_list_available_models(answer())
    assert models.values() == ("default", "gpt-5", "sonnet-4")
    assert models.auto.name == "Auto" and models.auto.is_auto
    gpt = models.model("gpt-5")
    assert gpt is not None
    option = gpt.thought_level()
    assert option is not None and option.id == "reasoning"
    assert gpt.effort_values() == ("low", "medium", "high")
    sonnet = models.model("sonnet-4")
    assert sonnet is not None
    assert sonnet.thought_level() is None and sonnet.effort_values() == ()
    assert [o.id for o in sonnet.config_options] == ["fast"]
    assert sonnet.ignored_config_options == ("odd",)


def test_tolerant_entries() -> None:
    raw = {
        "models": [
            {"value": "default"},
            {"value": ""},
            {"name": "no value"},
            7,
            {"value": "x" * (cursor.MAX_VALUE_CHARS + 1)},
            {"value": "m", "name": "", "configOptions": "junk"},
        ]
    }
    models = cursor.parse_list_available_models(raw)
    assert models.values() == ("default", "m")
    assert models.ignored_entries == 4
    assert models.auto.name == "default"
    m = models.model("m")
    assert m is not None and m.name == "m" and m.config_options == ()


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        (None, "no models list"),
        ({"models": {"default": {}}}, "no models list"),
        ({"models": [{"value": "gpt-5"}]}, "'default'"),
        ({"models": [{"value": "default"}, {"value": "default"}]}, "twice"),
        ({"models": [{"value": "default"}] * (cursor.MAX_CATALOG_MODELS + 1)}, "at most"),
    ],
)
def test_malformed_list(raw: Any, problem: str) -> None:
    with pytest.raises(ExtensionPayloadInvalid) as caught:
        cursor.parse_list_available_models(raw)
    assert problem in caught.value.message


def test_require_selection() -> None:
    models = cursor.parse_list_available_models(answer())
    gpt, effort = models.require("gpt-5", "HIGH")
    assert gpt.value == "gpt-5" and effort == "high"
    assert models.require("default") == (models.auto, None)
    with pytest.raises(ChoiceNotAdvertised) as caught:
        models.require("gpt-6")
    assert caught.value.advertised == ("default", "gpt-5", "sonnet-4")
    with pytest.raises(ChoiceNotAdvertised) as no_effort:
        models.require("sonnet-4", "high")
    assert no_effort.value.advertised == ()
    with pytest.raises(ChoiceNotAdvertised):
        models.require("gpt-5", "ultra")


def test_cache_is_per_process_and_cleared() -> None:
    models = cursor.parse_list_available_models(answer())
    cache = cursor.CursorModelCatalog()
    assert cache.get("srv-1") is None and not cache.cached
    cache.store("srv-1", models)
    assert cache.get("srv-1") is models and cache.cached
    # Another process (a replacement generation) never sees this list.
    assert cache.get("srv-2") is None
    for reason in ("shutdown", "process_lost", "reconfigured", "auth_failure"):
        cache.store("srv-1", models)
        cache.clear(reason)  # type: ignore[arg-type]
        assert cache.get("srv-1") is None and not cache.cached
        assert cache.last_clear_reason == reason


def test_cache_keeps_a_typed_failure_until_success() -> None:
    models = cursor.parse_list_available_models(answer())
    cache = cursor.CursorModelCatalog()
    cache.store("srv-1", models)
    cache.record_failure("srv-1", "AGENT_EXTENSION_INVALID", "x" * 2000)
    assert cache.get("srv-1") is None
    assert cache.failure is not None and cache.failure.code == "AGENT_EXTENSION_INVALID"
    assert len(cache.failure.message) == cursor.MAX_FAILURE_CHARS
    cache.store("srv-1", models)
    assert cache.failure is None and cache.get("srv-1") is models
    cache.record_failure("srv-1", "BUDGET_EXPIRED", "slow")
    cache.clear("auth_failure")
    assert cache.failure is None
