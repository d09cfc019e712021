"""Everything the wire layer builds for the agent validates against both pinned stable ACP
schemas (release 1.21.0 and SDK 2.4.0's stable v1, see tests/acp_schemas.py)."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from acp_schemas import STABLE_SCHEMAS, validate_in, validate_stable
from baton.wire.capabilities import AgentCapabilities, ElicitationOffer, initialize_params
from baton.wire.content import (
    PreparedContext,
    audio_block,
    build_prompt,
    embedded_blob_block,
    embedded_text_block,
    image_block,
    resource_link_block,
    text_block,
)
from baton.wire.mcp import http_server, parse_tool_declarations, sse_server
from baton.wire.permission import cancelled_outcome, selected_outcome
from baton.wire.version import offered_version


def validate(definition: str, instance: Any) -> None:
    """Validate ``instance`` against ``$defs/definition`` of every pinned stable schema."""
    validate_stable(definition, instance)


ALL = AgentCapabilities(prompt_image=True, prompt_audio=True, prompt_embedded_context=True)


@pytest.mark.parametrize("release", list(STABLE_SCHEMAS))
def test_the_validator_can_fail(release: str) -> None:
    with pytest.raises(jsonschema.ValidationError):
        validate_in(release, "InitializeRequest", {"clientInfo": {"name": "baton"}})
    with pytest.raises(jsonschema.ValidationError):
        validate_in(release, "RequestPermissionResponse", {"outcome": {"outcome": "selected"}})


def test_initialize_params() -> None:
    validate("InitializeRequest", initialize_params(offered_version()))
    validate("ClientCapabilities", initialize_params(1)["clientCapabilities"])
    offered = initialize_params(1, elicitation=ElicitationOffer(form=True, url=True))
    validate("InitializeRequest", offered)


@pytest.mark.parametrize(
    "block",
    [
        text_block("hello"),
        resource_link_block("file:///a.py", "a.py", mime_type="text/x-python", title="A", size=3),
        image_block(ALL, "aGk=", "image/png", uri="file:///i.png"),
        audio_block(ALL, "aGk=", "audio/wav"),
        embedded_text_block(ALL, "baton:context/1", "ctx", mime_type="text/plain"),
        embedded_blob_block(ALL, "baton:blob/1", "aGk=", mime_type="application/octet-stream"),
    ],
)
def test_content_blocks(block: dict[str, Any]) -> None:
    validate("ContentBlock", block)


@pytest.mark.parametrize("capabilities", [ALL, AgentCapabilities()])
def test_prompt_requests(capabilities: AgentCapabilities) -> None:
    prompt = build_prompt(
        capabilities,
        "Fix it.",
        context=[PreparedContext("ctx", "baton:context/1")],
        attachments=[resource_link_block("file:///a", "a")],
    )
    validate("PromptRequest", {"sessionId": "s", "prompt": prompt})


def test_mcp_servers() -> None:
    declarations = parse_tool_declarations(
        json.dumps(
            {"mcpServers": [{"name": "a", "command": "/bin/a", "args": ["x"], "env": {"K": "V"}}]}
        ).encode()
    )
    for server in declarations.to_acp():
        validate("McpServer", server)
        validate("McpServerStdio", server)
    validate("McpServer", http_server("h", "http://127.0.0.1:1/mcp", [("A", "B")]))
    validate("McpServer", sse_server("s", "http://127.0.0.1:1/sse"))
    validate("NewSessionRequest", {"cwd": "/w", "mcpServers": declarations.to_acp()})


def test_permission_answers() -> None:
    validate("RequestPermissionResponse", cancelled_outcome())
    validate("RequestPermissionResponse", selected_outcome("approved"))
