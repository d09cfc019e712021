"""Profiles reproduce the captured initialize and session/new payloads of real adapters."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from baton.errors import AuthenticationRequired

ADAPTERS = Path(__file__).parents[1] / "fixtures" / "adapters"

CAPTURES = {
    "claude": "claude-agent-acp-0.23.1",
    "codex": "codex-acp-0.16.0",
    "fast-agent": "fast-agent-0.10.48",
}


def capture(profile: str, name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ADAPTERS / CAPTURES[profile] / name).read_text())
    return data


@pytest.mark.parametrize("profile", sorted(CAPTURES))
async def test_profile_matches_the_capture(spawn: Any, profile: str) -> None:
    agent = await spawn("--profile", profile)
    assert await agent.initialize() == capture(profile, "initialize.json")["result"]
    expected = capture(profile, "session_new.json")["result"]
    result = await agent.new_session()
    assert result.pop("sessionId") and expected.pop("sessionId")
    assert result == expected


async def test_claude_quirks(spawn: Any) -> None:
    agent = await spawn("--profile", "claude")
    session = await agent.start()
    result = await agent.prompt(session, "write a.txt hi")
    assert set(result) == {"stopReason", "usage"}
    request = agent.permission_requests[0]
    assert request.id == 0
    assert [o["optionId"] for o in request.params["options"]] == ["allow_always", "allow", "reject"]
    assert request.params["toolCall"]["kind"] == "edit"  # the full tool call
    # It does not exit at stdin EOF: a turn started before EOF keeps streaming after it.
    await agent.send_prompt(session, "wait_for_cancel 5")
    await agent.until(lambda: len(agent.updates(session)) >= 3)
    assert agent.process.stdin is not None
    agent.process.stdin.close()
    seen = len(agent.updates(session))
    await agent.until(lambda: len(agent.updates(session)) >= seen + 3)
    assert agent.process.returncode is None


async def test_codex_quirks(spawn: Any) -> None:
    agent = await spawn("--profile", "codex", "--auth-required", "new")
    await agent.initialize()
    with pytest.raises(AuthenticationRequired):
        await agent.new_session()
    await agent.conn.request("authenticate", {"methodId": "codex-api-key"}, timeout=20)
    session = (await agent.new_session())["sessionId"]
    agent.answer_selecting("reject_once")
    assert await agent.prompt(session, "shell echo hi; echo never") == {"stopReason": "cancelled"}
    request = agent.permission_requests[0]
    assert isinstance(request.id, str) and len(request.id) == 36
    result = await agent.conn.request(
        "session/set_config_option",
        {"sessionId": session, "configId": "reasoning_effort", "value": "xhigh"},
        timeout=20,
    )
    assert result["configOptions"][2]["currentValue"] == "xhigh"


async def test_fast_agent_has_no_config_options(spawn: Any) -> None:
    agent = await spawn("--profile", "fast-agent")
    session = await agent.start()
    assert await agent.prompt(session, "Say hello") == {"stopReason": "end_turn"}
    assert agent.text(session) == "Say hello"
