"""Session state: modes, config options (flat, grouped, boolean; id or configId), legacy models."""

from __future__ import annotations

from typing import Any

import pytest

from baton.errors import CapabilityNotAdvertised, ChoiceNotAdvertised, MalformedResult
from baton.wire.session_state import (
    ConfigOption,
    SessionState,
    parse_attached_session_result,
    parse_config_options,
    parse_list_sessions_result,
    parse_new_session_result,
    parse_session_state,
    parse_set_config_option_response,
    require_config_value,
    require_mode,
)


def _select(option_id: str, current: str, values: list[str], **extra: Any) -> dict[str, Any]:
    return {
        "id": option_id,
        "name": option_id.title(),
        "type": "select",
        "currentValue": current,
        "options": [{"value": v, "name": v.upper()} for v in values],
        **extra,
    }


GROUPED = {
    "configId": "model",
    "name": "Model",
    "category": "model",
    "type": "select",
    "currentValue": "b1",
    "options": [
        {"group": "fast", "name": "Fast", "options": [{"value": "a1", "name": "A1"}]},
        {"group": "big", "name": "Big", "options": [{"value": "b1", "name": "B1"}, "junk"]},
    ],
}
BOOL = {
    "id": "web",
    "name": "Web",
    "type": "boolean",
    "currentValue": False,
    "category": "thinking",
}


def test_flat_grouped_and_boolean_options() -> None:
    options, ignored = parse_config_options(
        [_select("mode", "a", ["a", "b"], category="mode"), GROUPED, BOOL]
    )
    assert ignored == ()
    flat, grouped, boolean = options
    assert (flat.id, flat.values(), flat.grouped, flat.category) == (
        "mode",
        ("a", "b"),
        False,
        "mode",
    )
    assert flat.choices[0].name == "A"
    assert (grouped.id, grouped.values(), grouped.grouped) == ("model", ("a1", "b1"), True)
    assert [(c.group, c.group_name) for c in grouped.choices] == [("fast", "Fast"), ("big", "Big")]
    assert (boolean.type, boolean.current_value, boolean.choices) == ("boolean", False, ())
    assert boolean.category == "thinking"  # a non-standard category kept as a string


def test_the_id_is_read_from_id_or_config_id() -> None:
    options, _ = parse_config_options([_select("x", "a", ["a"]), GROUPED])
    assert [o.id for o in options] == ["x", "model"]


@pytest.mark.parametrize(
    "entry",
    [
        {"id": "t", "name": "T", "type": "slider", "currentValue": 3},
        {"id": "t", "name": "T", "type": "select", "currentValue": 1, "options": []},
        {"id": "t", "name": "T", "type": "select", "currentValue": "a", "options": []},
        {"id": "t", "name": "T", "type": "boolean", "currentValue": "false"},
    ],
)
def test_unmodeled_option_shapes_are_skipped_and_named(entry: dict[str, Any]) -> None:
    options, ignored = parse_config_options([entry, BOOL])
    assert [o.id for o in options] == ["web"]
    assert ignored == ("t",)


def test_entries_without_an_id_and_repeated_ids_are_skipped() -> None:
    options, ignored = parse_config_options(
        [{"name": "no id", "type": "boolean", "currentValue": True}, BOOL, dict(BOOL), 7]
    )
    assert [o.id for o in options] == ["web"]
    assert ignored == ("web",)


@pytest.mark.parametrize("raw", [None, {}, "x", 3])
def test_a_config_options_field_that_is_not_a_list_is_empty(raw: object) -> None:
    assert parse_config_options(raw) == ((), ())


def test_modes_and_models_keep_exact_ids() -> None:
    state = parse_session_state(
        {
            "modes": {
                "currentModeId": "read-only",
                "availableModes": [{"id": "read-only", "name": "RO"}, {"name": "no id"}],
            },
            "models": {
                "currentModelId": "m[effort=high]",
                "availableModels": [{"modelId": "m[effort=high]"}, {"modelId": 3}],
            },
        }
    )
    assert state.modes is not None and state.modes.ids() == ("read-only",)
    assert state.models is not None and state.models.ids() == ("m[effort=high]",)
    assert state.models.available[0].name == "m[effort=high]"


@pytest.mark.parametrize(
    "raw",
    [
        {"modes": {"availableModes": []}},
        {"modes": "x"},
        {"models": {"currentModelId": "a"}},
        {"models": None},
    ],
)
def test_invalid_modes_or_models_are_absent(raw: dict[str, Any]) -> None:
    state = parse_session_state(raw)
    assert state.modes is None and state.models is None


def test_new_session_needs_a_session_id() -> None:
    assert parse_new_session_result({"sessionId": "s"}).state == SessionState()
    for bad in (None, {}, {"sessionId": 3}):
        with pytest.raises(MalformedResult):
            parse_new_session_result(bad)


def test_load_and_resume_results() -> None:
    assert parse_attached_session_result(None, "session/load") == SessionState()
    state = parse_attached_session_result({"configOptions": [BOOL]}, "session/resume")
    assert [o.id for o in state.config_options] == ["web"]
    with pytest.raises(MalformedResult):
        parse_attached_session_result([], "session/load")


def _state() -> SessionState:
    return parse_session_state(
        {
            "modes": {"currentModeId": "a", "availableModes": [{"id": "a", "name": "A"}]},
            "configOptions": [_select("effort", "low", ["low", "high"]), BOOL],
        }
    )


def test_set_config_option_confirmation() -> None:
    complete = {"configOptions": [_select("effort", "high", ["low", "high"]), BOOL]}
    yes = parse_set_config_option_response(complete, "effort", "high")
    assert (yes.confirmed, yes.complete, yes.reported) == (True, True, "high")
    assert len(yes.options) == 2
    other = parse_set_config_option_response(complete, "effort", "low")
    assert (other.confirmed, other.complete, other.reported) == (False, True, "high")
    missing = parse_set_config_option_response({"configOptions": [BOOL]}, "effort", "high")
    assert (missing.confirmed, missing.complete, missing.reported) == (False, True, None)
    for bad in (None, {}, {"configOptions": None}, []):
        none = parse_set_config_option_response(bad, "effort", "high")
        assert (none.confirmed, none.complete) == (False, False)


def test_a_boolean_is_confirmed_only_by_a_boolean() -> None:
    on = {"configOptions": [{**BOOL, "currentValue": True}]}
    assert parse_set_config_option_response(on, "web", True).confirmed
    assert not parse_set_config_option_response(on, "web", False).confirmed
    assert not parse_set_config_option_response(on, "web", "true").confirmed


def test_require_mode() -> None:
    require_mode(_state(), "a")
    with pytest.raises(ChoiceNotAdvertised) as caught:
        require_mode(_state(), "b")
    assert caught.value.advertised == ("a",)
    with pytest.raises(CapabilityNotAdvertised):
        require_mode(SessionState(), "a")


def test_require_config_value() -> None:
    state = _state()
    option = require_config_value(state, "effort", "high")
    assert isinstance(option, ConfigOption)
    require_config_value(state, "web", True)
    with pytest.raises(ChoiceNotAdvertised) as unknown:
        require_config_value(state, "nope", "x")
    assert unknown.value.advertised == ("effort", "web")
    with pytest.raises(ChoiceNotAdvertised) as value:
        require_config_value(state, "effort", "max")
    assert value.value.advertised == ("low", "high")
    with pytest.raises(ChoiceNotAdvertised):
        require_config_value(state, "web", "true")
    with pytest.raises(ChoiceNotAdvertised):
        require_config_value(state, "effort", True)


def test_state_copies() -> None:
    state = _state()
    assert state.with_current_mode("a").modes == state.modes
    assert SessionState().with_current_mode("x") == SessionState()
    assert SessionState().with_current_model("x") == SessionState()
    assert state.with_config_options(()).config_options == ()
    assert state.options_in_category("thinking")[0].id == "web"


def test_list_sessions() -> None:
    page = parse_list_sessions_result(
        {
            "sessions": [
                {"sessionId": "s1", "cwd": "/w", "title": "T", "additionalDirectories": ["/a", 3]},
                {"sessionId": "s2", "cwd": "/w", "additionalDirectories": "/not-a-list"},
                {"sessionId": 3, "cwd": "/w"},
                "junk",
            ],
            "nextCursor": "c2",
        }
    )
    assert [s.session_id for s in page.sessions] == ["s1", "s2"]
    assert page.sessions[0].additional_directories == ("/a",)
    assert page.sessions[1].additional_directories == ()
    assert page.next_cursor == "c2"
    with pytest.raises(MalformedResult):
        parse_list_sessions_result({"nextCursor": None})
