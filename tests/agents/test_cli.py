"""`baton agent scripted` runs the same agent as `python -m baton.agents.scripted`."""

from __future__ import annotations

from typing import Any

import pytest

from baton.cli.main import build_parser

BATON_AGENT = ("-m", "baton.cli.main", "agent", "scripted")


async def test_baton_agent_scripted_speaks_acp(spawn: Any) -> None:
    agent = await spawn("--profile", "codex", "--eof", "exit", entry=BATON_AGENT)
    assert (await agent.initialize())["agentInfo"]["name"] == "codex-acp"
    session = (await agent.new_session())["sessionId"]
    assert await agent.prompt(session, "echo via the baton command") == {"stopReason": "end_turn"}
    assert agent.text(session) == "via the baton command"
    assert agent.process.stdin is not None
    agent.process.stdin.close()
    assert await agent.exit_code() == 0


def test_the_verb_is_registered(capsys: pytest.CaptureFixture[str]) -> None:
    parser = build_parser()
    args = parser.parse_args(
        ["agent", "scripted", "--profile", "claude", "--cap", "loadSession=false"]
    )
    assert args.profile == "claude" and args.cap == ["loadSession=false"]
    with pytest.raises(SystemExit):
        parser.parse_args(["agent", "scripted", "--help"])
    assert "--permission-tool-call" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        parser.parse_args(["agent"])
