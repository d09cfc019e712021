"""Session controls: projection, safety, revisions, resolution and confirmation."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from baton.errors import (
    ControlBusy,
    ControlChoiceNotAdvertised,
    ControlNotMutable,
    ControlRejected,
    ControlRevisionStale,
    ControlUnknown,
    ControlWrongType,
    InvalidArgument,
    SessionMutationAmbiguous,
)
from baton.redaction import SecretValues
from baton.runtime.turns import controls as c
from baton.wire.extensions import grok
from baton.wire.session_state import SessionState, parse_session_state

ADAPTERS = Path(__file__).parents[2] / "fixtures" / "adapters"


def capture(name: str) -> SessionState:
    data = json.loads((ADAPTERS / name / "session_new.json").read_text())
    return parse_session_state(data["result"])


def select(
    option_id: str, current: str, *values: str, category: str | None = None, name: str = ""
) -> dict[str, Any]:
    option: dict[str, Any] = {
        "id": option_id,
        "name": name or option_id.title(),
        "type": "select",
        "currentValue": current,
        "options": [{"value": v, "name": v.upper(), "_meta": {"x": 1}} for v in values],
        "_meta": {"opaque": "never shown"},
        "description": "never shown either",
    }
    if category is not None:
        option["category"] = category
    return option


def boolean(option_id: str, current: bool, name: str = "") -> dict[str, Any]:
    return {
        "id": option_id,
        "name": name or option_id.title(),
        "type": "boolean",
        "currentValue": current,
    }


def state(**fields: Any) -> SessionState:
    return parse_session_state(fields)


BASIC = state(
    modes={
        "currentModeId": "default",
        "availableModes": [{"id": "default", "name": "Default"}, {"id": "plan", "name": "Plan"}],
    },
    configOptions=[
        select("mode", "default", "default", "plan", category="mode"),
        select("model", "small", "small", "large", category="model"),
        select("effort", "medium", "low", "medium", "high", category="thought_level"),
        boolean("thinking", False, name="Extended thinking"),
    ],
)


def test_projection_of_a_basic_session() -> None:
    controls = c.project_controls("sess-1", BASIC, session_id="local-1")
    assert controls.ids() == ("mode", "model", "config:effort", "config:thinking")
    view = controls.to_json()
    assert view["providerSessionId"] == "sess-1" and view["sessionId"] == "local-1"
    assert view["omitted"] == 0
    mode, model, effort, thinking = view["controls"]
    assert mode == {
        "id": "mode",
        "label": "Mode",
        "group": "mode",
        "type": "SELECT",
        "value": "default",
        "choices": [
            {"value": "default", "label": "Default", "group": None, "groupLabel": None},
            {"value": "plan", "label": "Plan", "group": None, "groupLabel": None},
        ],
        "mutable": True,
    }
    assert model["group"] == "model" and model["value"] == "small"
    assert [ch["value"] for ch in model["choices"]] == ["small", "large"]
    assert effort["id"] == "config:effort" and effort["group"] == "thought_level"
    assert thinking == {
        "id": "config:thinking",
        "label": "Extended thinking",
        "group": None,
        "type": "BOOLEAN",
        "value": False,
        "choices": [],
        "mutable": True,
    }
    # No _meta and no description anywhere in the view.
    text = json.dumps(view)
    assert "_meta" not in text and "opaque" not in text and "never shown" not in text


def test_revision_is_sha256_of_the_canonical_catalog() -> None:
    controls = c.project_controls("sess-1", BASIC)
    canonical = orjson.dumps(
        {
            "providerSessionId": "sess-1",
            "controls": [
                {**control.to_json(), "method": control.method, "configId": control.config_id}
                for control in controls.controls
            ],
        },
        option=orjson.OPT_SORT_KEYS,
    )
    assert controls.revision == hashlib.sha256(canonical).hexdigest()
    # Same inputs, same revision; another session or another value, another revision.
    assert c.project_controls("sess-1", BASIC).revision == controls.revision
    assert c.project_controls("sess-2", BASIC).revision != controls.revision
    changed = BASIC.with_current_mode("plan")
    assert c.project_controls("sess-1", changed).revision != controls.revision
    # Baton's own session id is not part of the revision.
    assert c.project_controls("sess-1", BASIC, session_id="x").revision == controls.revision


def test_mode_config_option_mirrors_modes_only_when_values_match() -> None:
    differing = state(
        modes={"currentModeId": "a", "availableModes": [{"id": "a", "name": "A"}]},
        configOptions=[select("preset", "x", "x", "y", category="mode")],
    )
    assert c.project_controls("s", differing).ids() == ("mode", "config:preset")
    only_option = state(configOptions=[select("preset", "x", "x", "y", category="mode")])
    controls = c.project_controls("s", only_option)
    assert controls.ids() == ("mode",)
    mode = controls.control("mode")
    assert mode is not None and mode.method == "session/set_config_option"
    assert mode.config_id == "preset" and mode.label == "Preset"


def test_real_captures_project() -> None:
    claude = c.project_controls("s", capture("claude-agent-acp-0.23.1"))
    assert claude.ids() == ("mode", "model")
    model = claude.control("model")
    assert model is not None and model.method == "session/set_config_option"
    assert model.value == "default"
    codex = c.project_controls("s", capture("codex-acp-0.16.0"))
    assert codex.ids() == ("mode", "model", "config:reasoning_effort")
    effort = codex.control("config:reasoning_effort")
    assert effort is not None and effort.values() == ("low", "medium", "high", "xhigh")
    fast = c.project_controls("s", capture("fast-agent-0.10.48"))
    assert fast.ids() == ("mode",)


def test_legacy_models_without_the_grok_extension_are_read_only() -> None:
    legacy = state(
        models={
            "currentModelId": "m1",
            "availableModels": [{"modelId": "m1", "name": "M1"}, {"modelId": "m2"}],
        }
    )
    controls = c.project_controls("s", legacy)
    model = controls.control("model")
    assert model is not None and not model.mutable and model.method is None
    assert model.values() == ("m1", "m2")
    with pytest.raises(ControlNotMutable) as caught:
        c.resolve_control(controls, "model", "m2", controls.revision)
    assert caught.value.code == "CONTROL_NOT_MUTABLE"


GROK_CATALOG = {
    "currentModelId": "grok-build",
    "availableModels": [
        {
            "modelId": "grok-build",
            "name": "Grok Build",
            "_meta": {"reasoningEfforts": ["low", "medium", "high"], "reasoningEffort": "high"},
        },
        {"modelId": "grok-code-fast-1", "name": "Grok Code Fast"},
    ],
}


def grok_session() -> tuple[SessionState, grok.GrokModelCatalog]:
    result = {"sessionId": "g1", "models": GROK_CATALOG}
    models = grok.parse_session_models(result)
    assert models is not None
    return parse_session_state(result), models


def test_grok_model_and_effort_controls() -> None:
    session, models = grok_session()
    controls = c.project_controls("g1", session, grok_models=models)
    assert controls.ids() == ("model", "effort")
    model, effort = controls.controls
    assert model.method == "session/set_model" and model.values() == (
        "grok-build",
        "grok-code-fast-1",
    )
    assert effort.group == "thought_level" and effort.value == "high"
    change = c.resolve_control(controls, "effort", "low", controls.revision)
    assert change.method == "session/set_model"
    assert change.params == {
        "sessionId": "g1",
        "modelId": "grok-build",
        "_meta": {"reasoningEffort": "low"},
    }
    assert change.model_id == "grok-build" and change.reasoning_effort == "low"
    switch = c.resolve_control(controls, "model", "grok-code-fast-1", controls.revision)
    assert switch.params == {"sessionId": "g1", "modelId": "grok-code-fast-1"}
    # After the switch the new model advertises no effort: no effort control.
    confirmed = c.confirm_mutation(switch, session, {}, grok_models=models)
    assert confirmed.grok_models is not None
    assert confirmed.grok_models.current_model_id == "grok-code-fast-1"
    assert confirmed.state.models is not None
    assert confirmed.state.models.current_model_id == "grok-code-fast-1"
    after = c.project_controls("g1", confirmed.state, grok_models=confirmed.grok_models)
    assert after.ids() == ("model",) and after.revision != controls.revision


def test_grok_catalog_is_ignored_without_the_extension() -> None:
    session, _models = grok_session()
    # The same session state projected for another profile: legacy, read-only, no effort.
    controls = c.project_controls("g1", session)
    assert controls.ids() == ("model",)
    model = controls.control("model")
    assert model is not None and not model.mutable


def test_grok_effort_confirmation_updates_the_catalog() -> None:
    session, models = grok_session()
    controls = c.project_controls("g1", session, grok_models=models)
    change = c.resolve_control(controls, "effort", "medium", controls.revision)
    confirmed = c.confirm_mutation(change, session, {}, grok_models=models)
    assert confirmed.grok_models is not None
    assert confirmed.grok_models.current.current_effort == "medium"
    again = c.project_controls("g1", confirmed.state, grok_models=confirmed.grok_models)
    effort = again.control("effort")
    assert effort is not None and effort.value == "medium"


@pytest.mark.parametrize(
    "option",
    [
        select("api_key", "a", "a", "b"),
        select("proxy", "a", "a", "b", name="Auth token"),
        select("vendor", "a", "a", "sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345"),
        select("vendor", "token=abcdefghijkl123", "token=abcdefghijkl123", "b"),
        boolean("access_token", True),
        select("x" * (c.MAX_CONTROL_TEXT_CHARS + 1), "a", "a"),
        select("big", "v0", *(f"v{i}" for i in range(c.MAX_CHOICES_PER_CONTROL + 1))),
    ],
)
def test_sensitive_and_oversized_selectors_are_omitted_whole(option: dict[str, Any]) -> None:
    session = state(configOptions=[option, boolean("fast", True)])
    controls = c.project_controls("s", session)
    assert controls.ids() == ("config:fast",)
    assert controls.omitted == 1
    assert option["id"] not in json.dumps(controls.to_json())


def test_exact_profile_secrets_are_omitted() -> None:
    secret = "hunter2-but-long-enough"
    session = state(configOptions=[select("workspace", "a", "a", secret), boolean("fast", True)])
    assert c.project_controls("s", session).ids() == ("config:workspace", "config:fast")
    masked = c.project_controls("s", session, secrets=SecretValues([secret]))
    assert masked.ids() == ("config:fast",)


def test_bounds_and_ignored_options_count_as_omitted() -> None:
    many = [boolean(f"flag{i}", False) for i in range(c.MAX_CONTROLS + 5)]
    session = state(configOptions=[*many, {"id": "weird", "type": "slider", "currentValue": 1}])
    controls = c.project_controls("s", session)
    assert len(controls.controls) == c.MAX_CONTROLS
    assert controls.omitted == 5 + 1


def test_grouped_choices_keep_their_groups() -> None:
    grouped = {
        "id": "model",
        "name": "Model",
        "category": "model",
        "type": "select",
        "currentValue": "a1",
        "options": [
            {"group": "g-a", "name": "Group A", "options": [{"value": "a1", "name": "A1"}]},
            {"group": "g-b", "name": "Group B", "options": [{"value": "b1", "name": "B1"}]},
        ],
    }
    controls = c.project_controls("s", state(configOptions=[grouped]))
    model = controls.control("model")
    assert model is not None
    assert [ch.to_json() for ch in model.choices] == [
        {"value": "a1", "label": "A1", "group": "g-a", "groupLabel": "Group A"},
        {"value": "b1", "label": "B1", "group": "g-b", "groupLabel": "Group B"},
    ]


def test_resolve_each_method() -> None:
    controls = c.project_controls("sess-1", BASIC)
    rev = controls.revision
    mode = c.resolve_control(controls, "mode", "plan", rev)
    assert mode.method == "session/set_mode" and not mode.already_current
    assert mode.params == {"sessionId": "sess-1", "modeId": "plan"}
    model = c.resolve_control(controls, "model", "large", rev)
    assert model.method == "session/set_config_option" and model.config_id == "model"
    assert model.params == {"sessionId": "sess-1", "configId": "model", "value": "large"}
    flag = c.resolve_control(controls, "config:thinking", True, rev)
    assert flag.params == {
        "sessionId": "sess-1",
        "configId": "thinking",
        "type": "boolean",
        "value": True,
    }
    same = c.resolve_control(controls, "config:effort", "medium", rev)
    assert same.already_current
    assert same.to_json() == {
        "controlId": "config:effort",
        "method": "session/set_config_option",
        "params": {"sessionId": "sess-1", "configId": "effort", "value": "medium"},
        "value": "medium",
        "alreadyCurrent": True,
    }


@pytest.mark.parametrize(
    ("control_id", "value", "stale", "error", "code"),
    [
        ("mode", "plan", True, ControlRevisionStale, "CONTROL_REVISION_STALE"),
        ("nope", "plan", True, ControlRevisionStale, "CONTROL_REVISION_STALE"),
        ("nope", "plan", False, ControlUnknown, "CONTROL_UNKNOWN"),
        (7, "plan", False, ControlUnknown, "CONTROL_UNKNOWN"),
        ("effort", "low", False, ControlUnknown, "CONTROL_UNKNOWN"),  # ids are exact
        ("config:thinking", "true", False, ControlWrongType, "CONTROL_WRONG_TYPE"),
        ("config:thinking", 1, False, ControlWrongType, "CONTROL_WRONG_TYPE"),
        ("mode", True, False, ControlWrongType, "CONTROL_WRONG_TYPE"),
        ("mode", None, False, ControlWrongType, "CONTROL_WRONG_TYPE"),
        ("mode", "Plan", False, ControlChoiceNotAdvertised, "CONTROL_CHOICE_NOT_ADVERTISED"),
        (
            "config:effort",
            "xhigh",
            False,
            ControlChoiceNotAdvertised,
            "CONTROL_CHOICE_NOT_ADVERTISED",
        ),
    ],
)
def test_rejections(
    control_id: object, value: object, stale: bool, error: type[ControlRejected], code: str
) -> None:
    controls = c.project_controls("sess-1", BASIC)
    revision = "0" * 64 if stale else controls.revision
    with pytest.raises(error) as caught:
        c.resolve_control(controls, control_id, value, revision)
    assert caught.value.code == code and caught.value.fault == "caller"


def test_rejections_never_echo_the_value() -> None:
    controls = c.project_controls("sess-1", BASIC)
    typed = "my-secret-looking-choice"
    with pytest.raises(ControlChoiceNotAdvertised) as caught:
        c.resolve_control(controls, "mode", typed, controls.revision)
    assert typed not in str(caught.value)
    assert "default, plan" in str(caught.value)


def test_a_revision_from_before_a_change_is_stale() -> None:
    before = c.project_controls("sess-1", BASIC)
    after = c.project_controls("sess-1", BASIC.with_current_mode("plan"))
    with pytest.raises(ControlRevisionStale):
        c.resolve_control(after, "mode", "default", before.revision)
    assert c.resolve_control(after, "mode", "default", after.revision).method == "session/set_mode"


@pytest.mark.parametrize(
    "status",
    ["QUEUED", "STARTING", "RUNNING", "AWAITING_APPROVAL", "INTERRUPTING", "RECOVERY_REQUIRED"],
)
def test_refused_while_busy(status: str) -> None:
    with pytest.raises(ControlBusy) as caught:
        c.refuse_while(status, "mode")
    assert caught.value.code == "CONTROL_BUSY" and caught.value.control_id == "mode"


@pytest.mark.parametrize("status", [None, "COMPLETED", "FAILED", "INTERRUPTED", "LOST"])
def test_allowed_when_idle(status: str | None) -> None:
    c.refuse_while(status)


def test_parse_control_request() -> None:
    request = c.parse_control_request({"controlId": "mode", "value": "plan", "revision": "r"})
    assert request == c.ControlRequest("mode", "plan", "r")
    assert (
        c.parse_control_request({"controlId": "x", "value": False, "revision": "r"}).value is False
    )
    for body in (
        None,
        [],
        {"controlId": "mode", "value": "plan"},
        {"controlId": "mode", "value": 3, "revision": "r"},
        {"controlId": 1, "value": "plan", "revision": "r"},
        {"controlId": "mode", "value": "plan", "revision": "r", "_meta": {}},
        {"controlId": "mode", "value": "plan", "revision": "r", "method": "session/prompt"},
    ):
        with pytest.raises(InvalidArgument):
            c.parse_control_request(body)


def test_confirm_config_mutation() -> None:
    controls = c.project_controls("sess-1", BASIC)
    change = c.resolve_control(controls, "model", "large", controls.revision)
    full = {
        "configOptions": [
            select("mode", "default", "default", "plan", category="mode"),
            select("model", "large", "small", "large", category="model"),
        ]
    }
    confirmed = c.confirm_mutation(change, BASIC, full)
    model = confirmed.state.config_option("model")
    assert model is not None and model.current_value == "large"
    # The answer's options are the complete list: the others are gone.
    assert confirmed.state.config_option("effort") is None
    for answer in (
        {},
        None,
        {"configOptions": [select("mode", "default", "default", category="mode")]},
        {"configOptions": [select("model", "small", "small", "large", category="model")]},
    ):
        with pytest.raises(SessionMutationAmbiguous):
            c.confirm_mutation(change, BASIC, answer)


def test_confirm_mode_mutation() -> None:
    controls = c.project_controls("sess-1", BASIC)
    change = c.resolve_control(controls, "mode", "plan", controls.revision)
    confirmed = c.confirm_mutation(change, BASIC, {})
    assert confirmed.state.modes is not None and confirmed.state.modes.current_mode_id == "plan"
    assert confirmed.grok_models is None
