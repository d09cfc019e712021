"""What the journal stores of a message: session/update stream fields masked, routing kept."""

from __future__ import annotations

import copy
from typing import Any

import capture_samples as _samples

from baton.redaction import (
    REDACTED,
    STREAM_CONTENT_MARKER,
    STREAM_FIELDS,
    SecretValues,
    redact_frame_message,
)

M = STREAM_CONTENT_MARKER


def _update(update: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "sess-1", "update": update},
    }


def test_message_chunk_content_is_masked_and_routing_kept() -> None:
    message = _update(
        {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "m-1",
            "content": {"type": "text", "text": "provider text"},
        }
    )
    out = redact_frame_message(message)
    assert out == _update(
        {"sessionUpdate": "agent_message_chunk", "messageId": "m-1", "content": M}
    )
    assert out["method"] == "session/update"


def test_tool_call_free_form_fields_are_masked_status_and_paths_kept() -> None:
    message = _update(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "call-7",
            "title": "Run ls",
            "kind": "execute",
            "status": "pending",
            "rawInput": {"command": "ls", "token": "t"},
            "rawOutput": "output",
            "content": [{"type": "content", "content": {"type": "text", "text": "x"}}],
            "locations": [{"path": "/home/bob/https://u:p@h/file", "line": 3}],
        }
    )
    out = redact_frame_message(message)["params"]["update"]
    assert out == {
        "sessionUpdate": "tool_call",
        "toolCallId": "call-7",
        "title": M,
        "kind": "execute",
        "status": "pending",
        "rawInput": M,
        "rawOutput": M,
        "content": M,
        "locations": [{"path": f"/home/bob/https://{REDACTED}@h/file", "line": 3}],
    }


def test_stream_fields_are_masked_at_any_depth_under_update() -> None:
    message = _update(
        {
            "sessionUpdate": "plan",
            "entries": [{"content": "step one", "status": "pending", "priority": "high"}],
            "_meta": {"vendor": {"data": "blob", "text": "t", "count": 2}},
        }
    )
    out = redact_frame_message(message)["params"]["update"]
    assert out["entries"] == [{"content": M, "status": "pending", "priority": "high"}]
    assert out["_meta"] == {"vendor": {"data": M, "text": M, "count": 2}}


def test_explicit_null_stream_fields_stay_null() -> None:
    message = _update({"sessionUpdate": "tool_call_update", "toolCallId": "c", "content": None})
    assert redact_frame_message(message)["params"]["update"]["content"] is None


def test_a_bare_string_update_is_masked() -> None:
    out = redact_frame_message(_update("free text"))  # type: ignore[arg-type]
    assert out["params"] == {"sessionId": "sess-1", "update": M}


def test_fields_outside_the_update_are_only_redacted_structurally() -> None:
    message = _update({"sessionUpdate": "usage_update", "used": 5, "size": 10})
    message["params"]["_meta"] = {"title": "kept", "token": "gone"}
    out = redact_frame_message(message)
    assert out["params"]["_meta"] == {"title": "kept", "token": REDACTED}
    assert out["params"]["update"] == {"sessionUpdate": "usage_update", "used": 5, "size": 10}


def test_prompt_request_is_redacted_structurally_and_textually_not_masked() -> None:
    message = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "session/prompt",
        "params": {
            "sessionId": "sess-1",
            "prompt": [{"type": "text", "text": "deploy with api_key=abc123 please"}],
        },
    }
    out = redact_frame_message(message)
    assert out["params"]["prompt"] == [
        {"type": "text", "text": f"deploy with api_key={REDACTED} please"}
    ]
    assert out["id"] == 3


def test_new_session_request_env_and_headers() -> None:
    message = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "session/new",
        "params": {
            "cwd": "/work",
            "mcpServers": [
                {
                    "name": "gh",
                    "command": "/bin/gh-mcp",
                    "args": [],
                    "env": [{"name": "GH_TOKEN", "value": "v"}],
                },
                {
                    "type": "http",
                    "name": "api",
                    "url": "https://api.example.com/mcp",
                    "headers": [{"name": "Authorization", "value": "Bearer x"}],
                },
            ],
        },
    }
    out = redact_frame_message(message)
    servers = out["params"]["mcpServers"]
    assert servers[0]["env"] == [{"name": "GH_TOKEN", "value": REDACTED}]
    assert servers[1]["headers"] == [{"name": "Authorization", "value": REDACTED}]
    assert out["params"]["cwd"] == "/work"


def test_error_response_message_is_text_redacted() -> None:
    message = {
        "jsonrpc": "2.0",
        "id": 4,
        "error": {"code": -32000, "message": "bad key sk-abcdefghijklmnopqrstuvwx", "data": {}},
    }
    out = redact_frame_message(message, SecretValues(["unused-secret-value"]))
    assert out["error"] == {"code": -32000, "message": f"bad key {REDACTED}", "data": {}}


def test_never_mutates_the_message() -> None:
    message = _update({"sessionUpdate": "agent_message_chunk", "content": {"text": "x"}})
    before = copy.deepcopy(message)
    redact_frame_message(message)
    assert message == before


def _walk(value: Any, key: str | None = None) -> list[tuple[str | None, Any]]:
    found = [(key, value)]
    if isinstance(value, dict):
        for k, v in value.items():
            found.extend(_walk(v, k))
    elif isinstance(value, list):
        for v in value:
            found.extend(_walk(v, key))
    return found


def test_real_transcripts_keep_routing_and_lose_stream_text() -> None:
    messages = _samples.transcript_messages()
    assert messages
    updates = 0
    for message in messages:
        out = redact_frame_message(message)
        if message.get("method") != "session/update":
            assert out == message  # the captures hold no credential
            continue
        updates += 1
        before, after = message["params"], out["params"]
        assert after["sessionId"] == before["sessionId"]
        for field in ("sessionUpdate", "toolCallId", "status", "kind", "messageId"):
            assert after["update"].get(field) == before["update"].get(field)
        for key, value in _walk(after["update"]):
            if key in STREAM_FIELDS and value is not None:
                assert value == M
    assert updates > 10
