"""Elicitation: parsing form and URL requests, the form answer checks, the three answers.
Requests used here validate against the pinned current schema; answers against both."""

from __future__ import annotations

from typing import Any

import pytest

from acp_schemas import CURRENT, validate_in, validate_stable
from baton.errors import ElicitationAnswerInvalid, InvalidElicitationRequest
from baton.wire.elicitation import (
    MAX_FIELDS,
    accept_answer,
    cancel_answer,
    decline_answer,
    parse_complete,
    parse_elicitation_request,
    validate_form_answer,
)

FORM_REQUEST: dict[str, Any] = {
    "sessionId": "s1",
    "toolCallId": "t1",
    "mode": "form",
    "message": "Configure the deploy",
    "requestedSchema": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Name", "minLength": 2, "maxLength": 8},
            "email": {"type": "string", "format": "email"},
            "region": {"type": "string", "enum": ["eu", "us"]},
            "tier": {
                "type": "string",
                "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}],
            },
            "replicas": {"type": "integer", "minimum": 1, "maximum": 5},
            "ratio": {"type": "number", "minimum": 0, "maximum": 1},
            "confirm": {"type": "boolean"},
            "tags": {
                "type": "array",
                "items": {"type": "string", "enum": ["a", "b", "c"]},
                "maxItems": 2,
            },
            "when": {"type": "string", "format": "date"},
        },
        "required": ["name", "replicas"],
    },
}

URL_REQUEST: dict[str, Any] = {
    "sessionId": "s1",
    "mode": "url",
    "message": "Sign in to continue",
    "url": "https://127.0.0.1/login?x=1",
    "elicitationId": "e1",
}


def test_the_requests_are_schema_valid() -> None:
    validate_in(CURRENT, "CreateElicitationRequest", FORM_REQUEST)
    validate_in(CURRENT, "CreateElicitationRequest", URL_REQUEST)


def test_parse_form() -> None:
    request = parse_elicitation_request(FORM_REQUEST)
    assert request.mode == "form" and request.session_id == "s1" and request.tool_call_id == "t1"
    names = [f.name for f in request.fields]
    assert names == list(FORM_REQUEST["requestedSchema"]["properties"])
    by_name = {f.name: f for f in request.fields}
    assert by_name["name"].required and by_name["name"].label == "Name"
    assert by_name["email"].label == "email" and not by_name["email"].required
    assert [c.title for c in by_name["tier"].choices] == ["Small", "Large"]
    assert [c.value for c in by_name["tags"].choices] == ["a", "b", "c"]
    assert request.unsupported_fields == ()
    view = request.to_json()
    assert view["fields"][0] == {
        "name": "name",
        "type": "string",
        "title": "Name",
        "required": True,
    }


def test_parse_url() -> None:
    request = parse_elicitation_request(URL_REQUEST)
    assert request.url == URL_REQUEST["url"] and request.elicitation_id == "e1"
    assert request.to_json()["url"] == URL_REQUEST["url"]


def test_unknown_mode_kept_for_refusal() -> None:
    request = parse_elicitation_request({"sessionId": "s", "mode": "_x", "message": "?"})
    assert request.mode == "_x" and request.fields == ()


@pytest.mark.parametrize(
    "params",
    [
        None,
        {"sessionId": "s", "mode": "form"},
        {"sessionId": "s", "message": "m"},
        {"mode": "form", "message": "m", "requestedSchema": {}},
        {"sessionId": "s", "mode": "form", "message": "m"},
        {"sessionId": "s", "mode": "form", "message": "m", "requestedSchema": {"properties": 1}},
        {"sessionId": "s", "mode": "url", "message": "m", "elicitationId": "e"},
        {"sessionId": "s", "mode": "url", "message": "m", "url": "not a url", "elicitationId": "e"},
        {"sessionId": "s", "mode": "url", "message": "m", "url": "https://x"},
    ],
)
def test_malformed_requests(params: object) -> None:
    with pytest.raises(InvalidElicitationRequest):
        parse_elicitation_request(params)


def test_unsupported_fields_are_listed() -> None:
    properties: dict[str, Any] = {f"f{i}": {"type": "string"} for i in range(MAX_FIELDS + 2)}
    properties["odd"] = {"type": "object"}
    properties["multi"] = {"type": "array", "items": {"type": "string"}}
    request = parse_elicitation_request(
        {
            "sessionId": "s",
            "mode": "form",
            "message": "m",
            "requestedSchema": {"properties": properties, "required": ["ghost"]},
        }
    )
    assert len(request.fields) == MAX_FIELDS
    assert {"odd", "multi", "ghost", f"f{MAX_FIELDS}"} <= set(request.unsupported_fields)


GOOD = {"name": "web", "replicas": 3}


def test_valid_answers() -> None:
    request = parse_elicitation_request(FORM_REQUEST)
    full = {
        "name": "web",
        "email": "a@b.example",
        "region": "eu",
        "tier": "l",
        "replicas": 3.0,
        "ratio": 0.5,
        "confirm": True,
        "tags": ["a", "c"],
        "when": "2026-12-03",
    }
    answer = validate_form_answer(request, full)
    assert answer["replicas"] == 3 and type(answer["replicas"]) is int
    validate_stable("CreateElicitationResponse", accept_answer(answer))
    assert validate_form_answer(request, GOOD) == GOOD


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"name": "w"}, "name"),
        ({"name": "w" * 9}, "name"),
        ({"name": 5}, "name"),
        ({"email": "nope"}, "email"),
        ({"region": "asia"}, "region"),
        ({"tier": "Small"}, "tier"),
        ({"replicas": 0}, "replicas"),
        ({"replicas": 2.5}, "replicas"),
        ({"replicas": True}, "replicas"),
        ({"ratio": 2}, "ratio"),
        ({"confirm": "yes"}, "confirm"),
        ({"tags": ["a", "b", "c"]}, "tags"),
        ({"tags": ["a", "a"]}, "tags"),
        ({"tags": ["z"]}, "tags"),
        ({"tags": "a"}, "tags"),
        ({"when": "tomorrow"}, "when"),
        ({"extra": 1}, "extra"),
    ],
)
def test_invalid_answers_name_the_field(change: dict[str, Any], field: str) -> None:
    request = parse_elicitation_request(FORM_REQUEST)
    with pytest.raises(ElicitationAnswerInvalid) as caught:
        validate_form_answer(request, {**GOOD, **change})
    assert caught.value.field == field
    assert caught.value.code == "ELICITATION_ANSWER_INVALID"


def test_missing_required_field() -> None:
    request = parse_elicitation_request(FORM_REQUEST)
    with pytest.raises(ElicitationAnswerInvalid) as caught:
        validate_form_answer(request, {"name": "web"})
    assert caught.value.field == "replicas"


def test_url_requests_take_no_content() -> None:
    with pytest.raises(ElicitationAnswerInvalid):
        validate_form_answer(parse_elicitation_request(URL_REQUEST), {})


def test_answers_and_completion() -> None:
    for answer in (accept_answer(), decline_answer(), cancel_answer()):
        validate_stable("CreateElicitationResponse", answer)
    assert decline_answer() == {"action": "decline"}
    validate_in(CURRENT, "CompleteElicitationNotification", {"elicitationId": "e1"})
    assert parse_complete({"elicitationId": "e1"}) == "e1"
    assert parse_complete({"elicitationId": 1}) is None and parse_complete(None) is None
