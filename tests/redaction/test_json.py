"""Structural JSON redaction: by key, by pairing, by container, by depth; never mutating."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from baton.redaction import MAX_REDACTION_DEPTH, REDACTED, SecretValues, redact_json

CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "adapters"


def test_credential_named_fields_are_redacted_whatever_their_spelling() -> None:
    value = {
        "api_key": "v1",
        "apiKey": "v2",
        "X-API-KEY": "v3",
        "token": "v4",
        "access_token": "v5",
        "refreshToken": "v6",
        "client_secret": "v7",
        "password": "v8",
        "passwd": "v9",
        "Authorization": "v10",
        "cookie": "v11",
        "set-cookie": ["v12"],
        "credentials": {"user": "bob", "pass": "v13"},
        "private_key": "v14",
        "OPENAI_API_KEY": "v15",
        "pin_secret": 1234,
    }
    out = redact_json(value)
    assert out == {key: REDACTED for key in value}


def test_routing_fields_acp_needs_are_kept() -> None:
    value = {
        "sessionId": "sess-1",
        "toolCallId": "call-1",
        "optionId": "allow-once",
        "configId": "model",
        "modeId": "default",
        "methodId": "codex-api-key",
        "messageId": "m-1",
        "requestId": 7,
        "usage": {"inputTokens": 10, "outputTokens": 3, "totalTokens": 13},
    }
    assert redact_json(value) == value


def test_auth_methods_and_their_ids_are_kept() -> None:
    auth_methods = [
        {"id": "chatgpt", "name": "Login with ChatGPT", "description": "Use your login"},
        {
            "type": "env_var",
            "id": "openai-api-key",
            "name": "Use OPENAI_API_KEY",
            "vars": [{"name": "OPENAI_API_KEY"}],
        },
    ]
    assert redact_json({"authMethods": auth_methods}) == {"authMethods": auth_methods}


def test_a_credential_named_value_without_any_secret_keeps_its_shape() -> None:
    capabilities = {"auth": {"logout": {}}, "clientAuth": {"auth": {"terminal": False}}}
    assert redact_json(capabilities) == capabilities
    assert redact_json({"token": None, "password": ""}) == {"token": None, "password": ""}


def test_env_arrays_always_redact_values_and_keep_names() -> None:
    server = {
        "name": "github",
        "command": "/usr/bin/mcp-github",
        "args": ["--stdio"],
        "env": [
            {"name": "GITHUB_PERSONAL_ACCESS_TOKEN", "value": "ghp-not-a-shape"},
            {"name": "LOG_LEVEL", "value": "debug"},
        ],
    }
    out = redact_json({"mcpServers": [server]})
    assert out["mcpServers"][0]["env"] == [
        {"name": "GITHUB_PERSONAL_ACCESS_TOKEN", "value": REDACTED},
        {"name": "LOG_LEVEL", "value": REDACTED},
    ]
    assert out["mcpServers"][0]["command"] == "/usr/bin/mcp-github"
    assert out["mcpServers"][0]["args"] == ["--stdio"]


def test_header_arrays_always_redact_values() -> None:
    server = {
        "type": "http",
        "name": "api",
        "url": "https://mcp.example.com",
        "headers": [{"name": "X-Trace", "value": "abc"}, {"name": "Authorization", "value": "x"}],
    }
    out = redact_json(server)
    assert out["headers"] == [
        {"name": "X-Trace", "value": REDACTED},
        {"name": "Authorization", "value": REDACTED},
    ]
    assert out["url"] == "https://mcp.example.com"


def test_env_maps_and_assignment_strings_keep_names_only() -> None:
    value = {
        "env": {"ANTHROPIC_API_KEY": "a-secret", "DEBUG": "1", "FLAG": True},
        "headers": ["Authorization: Bearer x", "X-Id=42", "opaque"],
        "ANTHROPIC_CUSTOM_HEADERS": "X-Key: abc",
    }
    assert redact_json(value) == {
        "env": {"ANTHROPIC_API_KEY": REDACTED, "DEBUG": REDACTED, "FLAG": True},
        "headers": [f"Authorization: {REDACTED}", f"X-Id={REDACTED}", REDACTED],
        "ANTHROPIC_CUSTOM_HEADERS": REDACTED,
    }


def test_generic_pairs_are_redacted_only_when_the_name_is_credential_like() -> None:
    value = {
        "settings": [
            {"key": "api_key", "value": "abc"},
            {"name": "Auto", "value": "default"},
            {"id": "client_secret", "currentValue": "xyz"},
            {"id": "model", "currentValue": "gpt-5"},
        ]
    }
    assert redact_json(value) == {
        "settings": [
            {"key": "api_key", "value": REDACTED},
            {"name": "Auto", "value": "default"},
            {"id": "client_secret", "currentValue": REDACTED},
            {"id": "model", "currentValue": "gpt-5"},
        ]
    }


def test_config_option_choices_are_kept() -> None:
    option = {
        "id": "model",
        "name": "Model",
        "category": "model",
        "type": "select",
        "currentValue": "default",
        "options": [{"value": "default", "name": "Auto"}, {"value": "gpt-5", "name": "GPT-5"}],
    }
    assert redact_json(option) == option


def test_email_fields_are_redacted() -> None:
    out = redact_json({"email": "bob@example.com", "userEmail": "a@b.c", "verified": True})
    assert out == {"email": REDACTED, "userEmail": REDACTED, "verified": True}


def test_strings_go_through_text_redaction_keys_included() -> None:
    value = {
        "url": "https://bob:pw@example.com/x",
        "note": "use Bearer abcdefghijklmnop",
        "sk-abcdefghijklmnopqrstuvwx": 1,
    }
    assert redact_json(value) == {
        "url": f"https://{REDACTED}@example.com/x",
        "note": f"use Bearer {REDACTED}",
        REDACTED: 1,
    }


def test_exact_secrets_in_any_leaf() -> None:
    values = SecretValues(["the-exact-secret-1"])
    out = redact_json({"a": ["x the-exact-secret-1 y", {"b": "the-exact-secret-1"}]}, values)
    assert out == {"a": [f"x {REDACTED} y", {"b": REDACTED}]}


def _nested(levels: int) -> Any:
    """``levels`` nested objects around a leaf string: the leaf sits at depth ``levels``."""
    value: Any = "leaf"
    for _ in range(levels):
        value = {"a": value}
    return value


def _leaf(value: Any) -> Any:
    while isinstance(value, dict):
        value = value["a"]
    return value


def test_depth_bound() -> None:
    assert _leaf(redact_json(_nested(MAX_REDACTION_DEPTH))) == "leaf"
    assert _leaf(redact_json(_nested(MAX_REDACTION_DEPTH + 1))) == REDACTED
    # Far past the bound still costs only the bound (no recursion error).
    assert _leaf(redact_json(_nested(5000))) == REDACTED


def test_input_is_never_mutated_and_nothing_is_shared() -> None:
    value = {"token": "t", "list": [{"password": "p"}, "x"], "env": [{"name": "A", "value": "b"}]}
    before = copy.deepcopy(value)
    out = redact_json(value)
    assert value == before
    assert out["list"] is not value["list"]
    out["list"].append("new")
    assert value == before


def test_scalars_pass_through() -> None:
    assert redact_json(None) is None
    assert redact_json(True) is True
    assert redact_json(3.5) == 3.5
    assert redact_json([1, "a"]) == [1, "a"]


def test_non_json_objects_become_redacted() -> None:
    assert redact_json({"x": object()}) == {"x": REDACTED}


def test_real_adapter_captures_are_unchanged() -> None:
    for path in sorted(CAPTURES.glob("*/*.json")):
        message = json.loads(path.read_text())
        assert redact_json(message) == message, path.name
