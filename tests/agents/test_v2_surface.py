"""The scripted agent speaking the ACP v2 draft (``--protocol 2`` / ``auto``): every frame it
sends validates against the v2 schema (the spawn fixture checks at teardown)."""

from __future__ import annotations

from typing import Any

from acp_schemas import V2_UNSTABLE, validate_in
from baton.wire.v2.updates import SessionUpdateDecoder

V2_INIT = {
    "protocolVersion": 2,
    "info": {"name": "baton-tests", "version": "0"},
    "capabilities": {},
}

WAIT = 20.0


async def _start(agent: Any) -> str:
    await agent.conn.request("initialize", V2_INIT, timeout=WAIT)
    result = await agent.conn.request(
        "session/new", {"cwd": str(agent.cwd), "mcpServers": []}, timeout=WAIT
    )
    return str(result["sessionId"])


async def _turn(agent: Any, session: str, text: str) -> dict[str, Any]:
    """Prompt; return the ack after the idle state arrived (the turn's end)."""
    before = len(agent.updates(session))
    ack: dict[str, Any] = await agent.prompt(session, text)
    await agent.until(
        lambda: any(
            u["sessionUpdate"] == "state_update" and u["state"] == "idle"
            for u in agent.updates(session)[before:]
        )
    )
    return ack


def _idle(agent: Any, session: str) -> dict[str, Any]:
    return [
        u
        for u in agent.updates(session)
        if u["sessionUpdate"] == "state_update" and u["state"] == "idle"
    ][-1]


async def test_initialize_answers_v2(spawn: Any) -> None:
    agent = await spawn("--protocol", "2", "--auth-method", "key", schema_version=2)
    result = await agent.conn.request("initialize", V2_INIT, timeout=WAIT)
    assert result["protocolVersion"] == 2
    assert {"name", "version"} <= set(result["info"])
    assert result["capabilities"]["session"]["mcp"] == {"stdio": {}}
    assert result["authMethods"] == [{"methodId": "key", "name": "Sign in (key)", "type": "agent"}]
    assert "agentCapabilities" not in result
    assert await agent.conn.request("auth/login", {"methodId": "key"}, timeout=WAIT) == {}


async def test_auto_speaks_the_offered_version(spawn: Any) -> None:
    v1 = await spawn("--protocol", "auto")
    assert (await v1.initialize(1))["protocolVersion"] == 1
    v2 = await spawn("--protocol", "auto", schema_version=2)
    assert (await v2.conn.request("initialize", V2_INIT, timeout=WAIT))["protocolVersion"] == 2


async def test_a_text_turn_is_acknowledged_then_idle(spawn: Any) -> None:
    agent = await spawn("--protocol", "2", schema_version=2)
    session = await _start(agent)
    ack = await _turn(agent, session, "echo hello; think hmm; plan a|b")
    user = [u for u in agent.updates(session) if u["sessionUpdate"] == "user_message"]
    assert user and user[0]["messageId"] == ack["messageId"]
    kinds = agent.kinds(session)
    assert kinds[0] == "user_message" or "state_update" in kinds[:2]
    assert "plan_update" in kinds and "plan" not in kinds
    assert _idle(agent, session)["stopReason"] == "end_turn"
    chunks = [u for u in agent.updates(session) if u["sessionUpdate"] == "agent_message_chunk"]
    assert chunks[0]["messageId"] and chunks[0]["content"]["text"] == "hello"


async def test_a_tool_call_with_a_diff_and_a_permission(spawn: Any) -> None:
    agent = await spawn("--protocol", "2", schema_version=2)
    session = await _start(agent)
    (agent.cwd / "a.txt").write_text("old\n")
    await _turn(agent, session, "write a.txt new")
    assert (agent.cwd / "a.txt").read_text() == "new"
    request = agent.permission_requests[0].params
    assert request["subject"]["type"] == "tool_call" and request["title"]
    kinds = agent.kinds(session)
    assert "tool_call" not in kinds and "tool_call_update" in kinds
    states = [u["state"] for u in agent.updates(session) if u["sessionUpdate"] == "state_update"]
    assert states == ["running", "requires_action", "running", "idle"]
    decoder = SessionUpdateDecoder(session)
    created = [
        n
        for u in agent.updates(session)
        if u["sessionUpdate"] == "tool_call_update"
        for n in decoder.decode(u)
    ]
    assert created[0]["sessionUpdate"] == "tool_call"
    diff = next(c for c in created[0]["content"] if c["type"] == "diff")
    assert diff["changes"][0]["operation"] == "modify"
    assert "-old" in diff["patch"]["text"] and "+new" in diff["patch"]["text"]


async def test_a_cancel_ends_idle_cancelled(spawn: Any) -> None:
    agent = await spawn("--protocol", "2", schema_version=2)
    session = await _start(agent)
    ack = await agent.prompt(session, "wait_for_cancel 10")
    assert "messageId" in ack
    await agent.until(lambda: "agent_message_chunk" in agent.kinds(session))
    await agent.cancel(session)
    await agent.until(lambda: "idle" in [u.get("state") for u in agent.updates(session)])
    assert _idle(agent, session)["stopReason"] == "cancelled"


async def test_resume_with_replay_sends_history_then_the_state(spawn: Any) -> None:
    agent = await spawn("--protocol", "2", schema_version=2)
    session = await _start(agent)
    await _turn(agent, session, "echo remembered")
    before = len(agent.updates(session))
    await agent.conn.request(
        "session/resume",
        {"sessionId": session, "cwd": str(agent.cwd), "replayFrom": {"type": "start"}},
        timeout=WAIT,
    )
    replayed = agent.updates(session)[before:]
    assert replayed[-1] == {"sessionUpdate": "state_update", "state": "idle"}
    assert any(u.get("content", {}).get("text") == "remembered" for u in replayed)
    before = len(agent.updates(session))
    await agent.conn.request(
        "session/resume", {"sessionId": session, "cwd": str(agent.cwd)}, timeout=WAIT
    )
    assert agent.updates(session)[before:] == [{"sessionUpdate": "state_update", "state": "idle"}]


async def test_v1_only_methods_are_gone(spawn: Any) -> None:
    agent = await spawn("--protocol", "2", schema_version=2)
    session = await _start(agent)
    for method, params in (
        ("session/load", {"sessionId": session, "cwd": str(agent.cwd), "mcpServers": []}),
        ("authenticate", {"methodId": "x"}),
    ):
        try:
            await agent.conn.request(method, params, timeout=WAIT)
        except Exception as exc:  # AgentRequestError
            assert getattr(exc, "rpc_code", None) == -32601
        else:
            raise AssertionError(f"{method} answered")


async def test_prompt_usage_rides_on_the_ending_idle_state(spawn: Any) -> None:
    agent = await spawn("--protocol", "2", "--prompt-usage", schema_version=2)
    session = await _start(agent)
    ack = await _turn(agent, session, "echo hi")
    assert "usage" not in ack  # the v2 acknowledgement has no usage
    idle = _idle(agent, session)
    usage = idle["usage"]
    assert usage["totalTokens"] == usage["inputTokens"] + usage["outputTokens"]
    # The unstable v2 draft defines it there (the stable part lets it through as an extra).
    validate_in(V2_UNSTABLE, "SessionUpdate", idle)
    states = [u for u in agent.updates(session) if u["sessionUpdate"] == "state_update"]
    assert all("usage" not in u for u in states if u["state"] != "idle")


async def test_no_prompt_usage_no_usage_on_idle(spawn: Any) -> None:
    agent = await spawn("--protocol", "2", schema_version=2)
    session = await _start(agent)
    await _turn(agent, session, "echo hi")
    assert "usage" not in _idle(agent, session)
