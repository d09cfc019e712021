"""Interaction records: JSON-serializable, complete, and never holding a credential-shaped id."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest

from baton.runtime.permissions.local_policy import LocalDecision
from baton.runtime.permissions.policies import DROPPED_REMEMBERED, DroppedOption
from baton.runtime.permissions.records import (
    CREDENTIAL_IDENTIFIER,
    RECORD_VERSION,
    REDACTED,
    credential_identifiers,
    decision_record,
    looks_like_credential,
    refusal_record,
)
from baton.wire.permission import PermissionOption, PermissionRequest

CREDENTIALS = [
    "sk-proj-abcdefghijklmnopqrstuvwx",
    "sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
    "xai-abcdefghijklmnopqrstuvwxyz0123",
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "github_pat_11ABCDEFG0123456789_abcdefghij",
    "glpat-abcdefghijklmnopqrst",
    "xoxb-1234567890-abcdefghij",
    "AKIAIOSFODNN7EXAMPLE",
    "AIzaSyA-abcdefghijklmnopqrstuvwxyz012345",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig",
    "-----BEGIN RSA PRIVATE KEY-----",
    "Bearer abcdefghijklmnopqrstuvwx",
    "allow?token=abcdefghijkl",
]

NOT_CREDENTIALS = [
    "allow",
    "allow_always",
    "reject_once",
    "approved-execpolicy-amendment",
    "toolu_mock_0011",
    "toolu_01ABCDEFGHIJKLMNOPQRSTUV",
    "call_4",
    "fa3bc66e-bab4-40e5-9226-7329a7e1d5c2",
    "01a23607-3507-7921-a1cb-bdc8d4cf433a",
    "task-skill-runner",
]


@pytest.mark.parametrize("value", CREDENTIALS)
def test_credential_shapes_are_recognized(value: str) -> None:
    assert looks_like_credential(value)


@pytest.mark.parametrize("value", NOT_CREDENTIALS)
def test_adapter_ids_are_not_credentials(value: str) -> None:
    assert not looks_like_credential(value)


def _params(**tool_call: Any) -> dict[str, Any]:
    return {
        "sessionId": "s",
        "toolCall": {"toolCallId": "t", "kind": "edit", **tool_call},
        "options": [
            {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
            {
                "optionId": "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
                "name": "X",
                "kind": "allow_once",
            },
        ],
    }


def test_credential_identifiers_are_named() -> None:
    params = _params()
    params["toolCall"]["toolCallId"] = CREDENTIALS[0]
    params["sessionId"] = CREDENTIALS[1]
    found = credential_identifiers(CREDENTIALS[2], params)
    assert found == ["id", "sessionId", "toolCall.toolCallId", "options[1].optionId"]
    assert credential_identifiers(7, {"sessionId": "s"}) == []
    assert credential_identifiers("fa3bc66e-bab4-40e5-9226-7329a7e1d5c2", "junk") == []


def test_a_refusal_record_redacts_credential_identifiers() -> None:
    params = _params()
    params["toolCall"]["toolCallId"] = CREDENTIALS[0]
    record = refusal_record(
        CREDENTIALS[3], params, reason_code=CREDENTIAL_IDENTIFIER, reason="ids look like keys"
    )
    encoded = json.dumps(record.to_json())
    for secret in (CREDENTIALS[0], CREDENTIALS[3], "ghp_abcdefghijklmnopqrstuvwxyz0123456789"):
        assert secret not in encoded
    assert record.request_id == REDACTED
    assert record.tool_call_id == REDACTED
    assert record.request_tool_call is None  # it carries the credential-shaped id
    assert record.to_json()["outcome"] == {"outcome": {"outcome": "cancelled"}}
    assert record.chosen_by == "default"
    assert [o.option_id for o in record.options] == ["allow", REDACTED]


def test_a_refusal_record_of_garbage_params_is_still_a_record() -> None:
    record = refusal_record(
        None, ["not", "an", "object"], reason_code="invalid_request", reason="x"
    )
    data = record.to_json()
    assert data["sessionId"] is None and data["options"] == [] and data["choice"] is None
    orjson.dumps(data)


def test_a_decision_record_holds_everything_and_is_json() -> None:
    options = (
        PermissionOption("always", "Always", "allow_always"),
        PermissionOption("allow", "Allow", "allow_once"),
        PermissionOption("reject", "Reject", "reject_once"),
    )
    tool_call = {"toolCallId": "t", "kind": "edit", "locations": ({"path": "/w/a"},)}
    request = PermissionRequest("s", "t", {"toolCallId": "t"}, options)
    record = decision_record(
        "fa3bc66e-bab4-40e5-9226-7329a7e1d5c2",
        request,
        policy="full",
        correlated_tool_call=tool_call,
        dropped=(DroppedOption(options[0], DROPPED_REMEMBERED),),
        local=LocalDecision(True, "paths_inside_worktree", "1 path(s) inside the worktree"),
        choice="allow",
        chosen_by="policy",
        reason_code="policy_selected",
        reason="full chose the single allow_once",
    )
    data = json.loads(json.dumps(record.to_json()))
    assert data["version"] == RECORD_VERSION
    assert data["requestToolCall"] == {"toolCallId": "t"}
    assert data["correlatedToolCall"]["locations"] == [{"path": "/w/a"}]
    assert data["options"] == [
        {
            "optionId": "always",
            "name": "Always",
            "kind": "allow_always",
            "offered": False,
            "droppedReason": DROPPED_REMEMBERED,
        },
        {
            "optionId": "allow",
            "name": "Allow",
            "kind": "allow_once",
            "offered": True,
            "droppedReason": None,
        },
        {
            "optionId": "reject",
            "name": "Reject",
            "kind": "reject_once",
            "offered": True,
            "droppedReason": None,
        },
    ]
    assert data["local"] == {
        "permitsAllow": True,
        "reasonCode": "paths_inside_worktree",
        "detail": "1 path(s) inside the worktree",
    }
    assert (data["choice"], data["chosenBy"], data["reasonCode"]) == (
        "allow",
        "policy",
        "policy_selected",
    )
    assert data["outcome"] == {"outcome": {"outcome": "selected", "optionId": "allow"}}


def test_the_json_form_is_redacted_like_the_journal() -> None:
    token = "abcdefghijklmnopqrstuvwxyz012345"
    tool_call = {
        "toolCallId": "t",
        "kind": "execute",
        "rawInput": {"command": f"curl -H 'Authorization: Bearer {token}' https://x"},
    }
    request = PermissionRequest("s", "t", tool_call, (PermissionOption("a", "A", "allow_once"),))
    record = decision_record(
        1,
        request,
        policy="ask",
        correlated_tool_call=tool_call,
        dropped=(),
        local=LocalDecision(True, "command_permitted", "command"),
        choice="a",
        chosen_by="user",
        reason_code="selected",
        reason="chosen by the user",
    )
    assert token not in json.dumps(record.to_json())
    assert record.to_json()["outcome"] == {"outcome": {"outcome": "selected", "optionId": "a"}}
    assert token in json.dumps(record.request_tool_call)  # the in-memory request is untouched
