"""Everything the wire layer builds for a v2 agent validates against the v2 draft schema
(tests/fixtures/schema/sdk-2.4.0/v2/schema.json); the ``auto``
initialize offer validates against both schemas."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from acp_schemas import STABLE_SCHEMAS, V2, validate_in
from baton.wire.capabilities import AgentCapabilities
from baton.wire.codec import V2_CODEC, initialize_params
from baton.wire.content import PreparedContext, build_prompt, resource_link_block, text_block
from baton.wire.mcp import parse_tool_declarations
from baton.wire.permission import cancelled_outcome, selected_outcome
from baton.wire.version import AUTO_CHOICE, ProtocolChoice


def validate(definition: str, instance: Any, release: str = V2) -> None:
    """Validate ``instance`` against ``$defs/definition`` of ``release`` (v2 by default)."""
    validate_in(release, definition, instance)


def test_the_validator_can_fail() -> None:
    with pytest.raises(jsonschema.ValidationError):
        validate("InitializeRequest", {"protocolVersion": 2, "clientInfo": {"name": "baton"}})
    with pytest.raises(jsonschema.ValidationError):
        validate("PromptRequest", {"sessionId": "s", "prompt": []})
    with pytest.raises(jsonschema.ValidationError):
        validate("ResumeSessionRequest", {"sessionId": "s", "cwd": "/w", "replayFrom": {}})


def test_initialize_offers() -> None:
    auto = initialize_params(AUTO_CHOICE)
    validate("InitializeRequest", auto)
    for release in STABLE_SCHEMAS:
        validate("InitializeRequest", auto, release)
    validate("InitializeRequest", initialize_params(ProtocolChoice(2)))
    validate("ClientCapabilities", initialize_params(ProtocolChoice(2))["capabilities"])


def test_auth_requests() -> None:
    validate("LoginAuthRequest", {"methodId": "login"})
    validate("LogoutAuthRequest", {})


def test_session_requests(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(
        json.dumps({"mcpServers": [{"name": "t", "command": "/bin/true", "args": ["-x"]}]})
    )
    servers = V2_CODEC.mcp_servers(parse_tool_declarations(tools.read_bytes()).to_acp())
    assert servers[0]["type"] == "stdio"
    validate("NewSessionRequest", {"cwd": "/w", "mcpServers": servers})
    plan = V2_CODEC.resume_with_replay()
    validate(
        "ResumeSessionRequest", {"sessionId": "s", "cwd": "/w", "mcpServers": [], **plan.extra}
    )
    validate("ResumeSessionRequest", {"sessionId": "s", "cwd": "/w", "mcpServers": []})
    validate("CancelSessionNotification", {"sessionId": "s"})
    validate("CloseSessionRequest", {"sessionId": "s"})
    select = V2_CODEC.set_config_params("s", "model", "m", boolean=False)
    validate("SetSessionConfigOptionRequest", select)
    flag = V2_CODEC.set_config_params("s", "fast", True, boolean=True)
    validate("SetSessionConfigOptionRequest", flag)


def test_prompt_requests() -> None:
    prompt = build_prompt(
        AgentCapabilities(prompt_embedded_context=True),
        "Fix it.",
        context=[PreparedContext("ctx", "baton:context/1")],
        attachments=[resource_link_block("file:///a", "a")],
    )
    validate("PromptRequest", {"sessionId": "s", "prompt": prompt})
    validate("PromptRequest", {"sessionId": "s", "prompt": [text_block("hi")]})


def test_permission_answers() -> None:
    validate("RequestPermissionResponse", cancelled_outcome())
    validate("RequestPermissionResponse", selected_outcome("allow"))
