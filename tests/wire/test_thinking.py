"""Reasoning effort and models: normalization for matching only, parameterized model ids."""

from __future__ import annotations

from itertools import permutations
from typing import Any

import pytest

from baton.errors import ChoiceNotAdvertised
from baton.wire.session_state import SessionState, parse_session_state
from baton.wire.thinking import (
    EFFORT_ATTRIBUTE_KEYS,
    PORTABLE_LEVELS,
    advertised_effort,
    effort_matches,
    effort_options,
    model_id_attrs,
    model_id_base,
    normalize_effort,
    resolve_effort,
    resolve_model,
    thinking_marker,
)


def test_the_vocabulary() -> None:
    assert PORTABLE_LEVELS == ("off", "low", "medium", "high", "xhigh")
    assert EFFORT_ATTRIBUTE_KEYS == ("effort", "reasoning_effort", "variant", "thinking")


@pytest.mark.parametrize(
    ("spelling", "level"),
    [
        ("off", "off"),
        ("None", "off"),
        ("disabled", "off"),
        ("LOW", "low"),
        (" medium ", "medium"),
        ("med", "medium"),
        ("High", "high"),
        ("xhigh", "xhigh"),
        ("X-High", "xhigh"),
        ("extra_high", "xhigh"),
        ("very high", "xhigh"),
        ("max", None),
        ("ultra", None),
        ("minimal", None),
        ("", None),
    ],
)
def test_normalize_effort(spelling: str, level: str | None) -> None:
    assert normalize_effort(spelling) == level


def test_effort_matches_exact_then_normalized() -> None:
    assert effort_matches("max", "max")
    assert effort_matches("Max", "max")
    assert effort_matches("x-high", "xhigh")
    assert effort_matches("off", "none")
    assert not effort_matches("max", "xhigh")
    assert not effort_matches("high", "xhigh")
    assert not effort_matches("ultra", "max")


ATTRS = ["thinking=true", "effort=high", "fast=true"]


@pytest.mark.parametrize("order", list(permutations(ATTRS)))
def test_every_attribute_order_reads_the_same(order: tuple[str, ...]) -> None:
    model_id = f"gpt-5[{','.join(order)}]"
    assert model_id_base(model_id) == "gpt-5"
    assert model_id_attrs(model_id) == {"thinking": "true", "effort": "high", "fast": "true"}
    assert advertised_effort(model_id) == "high"
    assert thinking_marker(model_id) is True


PRECEDENCE = ["thinking=low", "variant=max", "reasoning_effort=medium", "effort=xhigh"]


@pytest.mark.parametrize("order", list(permutations(PRECEDENCE)))
def test_key_precedence_is_fixed_whatever_the_order(order: tuple[str, ...]) -> None:
    ids = [f"m[{','.join(order[:n])}]" for n in range(1, len(order) + 1)]
    for model_id in ids:
        present = {part.split("=")[0]: part.split("=")[1] for part in model_id[2:-1].split(",")}
        expected = next(present[k] for k in EFFORT_ATTRIBUTE_KEYS if k in present)
        assert advertised_effort(model_id) == expected


@pytest.mark.parametrize(
    "model_id",
    [
        "sonnet[1m]",  # keyless bracket (Claude's real id)
        "m[effort]",
        "m[effort=]",
        "m[=high]",
        "m[effort=high",
        "m[effort=high]x",
        "[effort=high]",
        "m[a=b][effort=high]",
        "m[effort=high,effort=low]",
        "m[Effort=high,effort=low]",
        "m[effort=a=b]",
        "m[]",
        "m[ , ]",
        "plain",
    ],
)
def test_malformed_or_keyless_brackets_yield_nothing(model_id: str) -> None:
    assert model_id_attrs(model_id) == {}
    assert advertised_effort(model_id) is None
    assert thinking_marker(model_id) is None
    assert model_id_base(model_id) == model_id


def test_attribute_keys_are_case_folded_values_verbatim() -> None:
    assert model_id_attrs("m[Effort=High]") == {"effort": "High"}
    assert advertised_effort("m[ Effort = High ]") == "High"


@pytest.mark.parametrize(
    ("model_id", "effort", "marker"),
    [
        ("m[thinking=true]", None, True),
        ("m[thinking=false]", None, False),
        ("m[thinking=high]", "high", True),
        ("m[thinking=none]", "none", False),
        ("m[thinking=sometimes]", None, None),
        ("m[effort=off]", "off", False),
        ("m[effort=max]", "max", True),
        ("m[fast=true]", None, None),
    ],
)
def test_thinking_is_a_weaker_marker(
    model_id: str, effort: str | None, marker: bool | None
) -> None:
    assert advertised_effort(model_id) == effort
    assert thinking_marker(model_id) is marker


def _select(
    option_id: str, current: str, values: list[str], category: str | None
) -> dict[str, Any]:
    return {
        "id": option_id,
        "name": option_id,
        "type": "select",
        "category": category,
        "currentValue": current,
        "options": [{"value": v, "name": v} for v in values],
    }


def _state(*options: dict[str, Any], models: dict[str, Any] | None = None) -> SessionState:
    raw: dict[str, Any] = {"configOptions": list(options)}
    if models is not None:
        raw["models"] = models
    return parse_session_state(raw)


def test_effort_via_a_thought_level_option_sends_the_adapters_spelling() -> None:
    state = _state(
        _select("reasoning_effort", "medium", ["Low", "Medium", "MAX", "ultra"], "thought_level")
    )
    chosen = resolve_effort(state, "low")
    assert (chosen.method, chosen.config_id, chosen.value, chosen.matched_by) == (
        "session/set_config_option",
        "reasoning_effort",
        "Low",
        "casefold",
    )
    assert resolve_effort(state, "ultra").value == "ultra"
    assert resolve_effort(state, "max").value == "MAX"
    assert resolve_effort(state, "Medium").already_current is False
    assert resolve_effort(state, "med").matched_by == "normalized"
    with pytest.raises(ChoiceNotAdvertised) as caught:
        resolve_effort(state, "high")
    assert caught.value.advertised == ("Low", "Medium", "MAX", "ultra")
    assert "Low, Medium, MAX, ultra" in caught.value.message


def test_exact_wins_over_normalized() -> None:
    state = _state(_select("effort", "none", ["none", "off"], "thought_level"))
    assert resolve_effort(state, "off").value == "off"
    assert resolve_effort(state, "none").value == "none"
    ambiguous = _state(_select("effort", "none", ["none", "disabled"], "thought_level"))
    with pytest.raises(ChoiceNotAdvertised) as caught:
        resolve_effort(ambiguous, "off")
    assert caught.value.advertised == ("none", "disabled")


def test_effort_option_preference() -> None:
    state = _state(
        _select("thinking", "on", ["on", "off"], "thinking"),
        _select("mode", "a", ["a"], "mode"),
        _select("effort", "low", ["low", "high"], None),
        _select("reasoning_effort", "low", ["low", "high"], "thought_level"),
    )
    assert [o.id for o in effort_options(state)] == ["reasoning_effort", "thinking", "effort"]
    assert resolve_effort(state, "off").config_id == "thinking"
    assert resolve_effort(state, "high").config_id == "reasoning_effort"


CURSOR_MODELS = [
    "default",
    "gpt-5[effort=low,fast=false]",
    "gpt-5[fast=false,effort=high]",
    "gpt-5[effort=high,fast=true]",
    "gpt-5[effort=max,fast=false]",
    "claude[thinking=true]",
]


def test_effort_via_parameterized_model_siblings() -> None:
    model = _select("model", "gpt-5[effort=low,fast=false]", CURSOR_MODELS, "model")
    chosen = resolve_effort(_state(model), "HIGH")
    assert (chosen.method, chosen.config_id, chosen.value) == (
        "session/set_config_option",
        "model",
        "gpt-5[fast=false,effort=high]",  # the sibling that keeps fast=false
    )
    assert resolve_effort(_state(model), "max").value == "gpt-5[effort=max,fast=false]"
    assert resolve_effort(_state(model), "low").already_current
    with pytest.raises(ChoiceNotAdvertised) as caught:
        resolve_effort(_state(model), "medium")
    assert caught.value.advertised == ("low", "high", "max")


def test_ambiguous_siblings_fail() -> None:
    model = _select("model", "gpt-5[effort=low]", CURSOR_MODELS, "model")
    with pytest.raises(ChoiceNotAdvertised) as caught:
        resolve_effort(_state(model), "high")
    assert set(caught.value.advertised) == {
        "gpt-5[fast=false,effort=high]",
        "gpt-5[effort=high,fast=true]",
    }


def test_effort_via_legacy_models_uses_set_model() -> None:
    models = {
        "currentModelId": "gpt-5[effort=low,fast=false]",
        "availableModels": [{"modelId": m} for m in CURSOR_MODELS],
    }
    chosen = resolve_effort(_state(models=models), "high")
    assert (chosen.method, chosen.config_id) == ("session/set_model", None)


def test_no_effort_advertised() -> None:
    with pytest.raises(ChoiceNotAdvertised) as caught:
        resolve_effort(SessionState(), "high")
    assert caught.value.advertised == ()
    assert "advertised: nothing" in caught.value.message


def test_models_match_exactly() -> None:
    state = _state(
        _select("model", "a", ["a", "B"], "model"),
        models={"currentModelId": "x", "availableModels": [{"modelId": "x"}, {"modelId": "y"}]},
    )
    assert resolve_model(state, "B").method == "session/set_config_option"
    assert resolve_model(state, "a").already_current
    legacy = resolve_model(state, "y")
    assert (legacy.method, legacy.config_id, legacy.value) == ("session/set_model", None, "y")
    with pytest.raises(ChoiceNotAdvertised) as caught:
        resolve_model(state, "b")
    assert caught.value.advertised == ("a", "B", "x", "y")
    with pytest.raises(ChoiceNotAdvertised):
        resolve_model(SessionState(), "a")
