"""The scripted agent's commands for current stable ACP: notice, compact, cost, subagent and
elicit. Every frame they send is validated against the pinned SDK 2.4.0 schema (conftest)."""

from __future__ import annotations

from typing import Any

from baton.connection import InboundRequest


async def test_notice_is_live_and_not_history(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    await agent.prompt(session, "notice warning Rate limited|Retrying in 30 s; notice info Hi")
    notices = [u for u in agent.updates(session) if u["sessionUpdate"] == "notice"]
    assert notices == [
        {
            "sessionUpdate": "notice",
            "severity": "warning",
            "title": "Rate limited",
            "description": "Retrying in 30 s",
        },
        {"sessionUpdate": "notice", "severity": "info", "title": "Hi"},
    ]
    # Not history: a load replays no notice.
    agent.notifications.clear()
    await agent.conn.request(
        "session/load", {"sessionId": session, "cwd": str(agent.cwd), "mcpServers": []}
    )
    assert "notice" not in agent.kinds(session)


async def test_compact_upserts_and_chunks(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    await agent.prompt(session, "compact completed Kept the plan")
    updates = [u for u in agent.updates(session) if u["sessionUpdate"].startswith("compaction")]
    assert [u["sessionUpdate"] for u in updates] == [
        "compaction_update",
        "compaction_summary_chunk",
        "compaction_summary_chunk",
        "compaction_summary_chunk",
        "compaction_update",
    ]
    assert {u["compactionId"] for u in updates} == {updates[0]["compactionId"]}
    assert updates[0]["status"] == "in_progress" and updates[-1]["status"] == "completed"
    await agent.prompt(session, "compact failed")
    assert agent.updates(session)[-1]["error"] == "scripted compaction failure"


async def test_cost_usage(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    await agent.prompt(session, "cost 250 EUR")
    assert agent.updates(session)[-1] == {
        "sessionUpdate": "usage_update",
        "used": 42,
        "size": 200000,
        "cost": {"amount": 2.5, "currency": "EUR"},
    }


async def test_subagent_parent_link(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    await agent.prompt(session, "subagent Look around")
    task, child, done = agent.updates(session)
    assert task["name"] == "Task" and task["title"] == "Look around"
    assert child["_meta"]["claudeCode"]["parentToolUseId"] == task["toolCallId"]
    assert done == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": task["toolCallId"],
        "status": "completed",
    }


async def test_elicit_form_reports_the_answer(spawn: Any) -> None:
    agent = await spawn()
    seen: list[dict[str, Any]] = []

    async def answer(request: InboundRequest) -> dict[str, Any]:
        seen.append(request.params)
        return {"action": "accept", "content": {"name": "web", "replicas": 2}}

    agent.conn.on_request("elicitation/create", answer)
    session = await agent.start()
    await agent.prompt(session, "elicit form")
    assert seen[0]["mode"] == "form" and seen[0]["sessionId"] == session
    assert seen[0]["requestedSchema"]["required"] == ["name", "replicas"]
    assert '"action":"accept"' in agent.text(session)


async def test_elicit_url_completes_after_an_answer(spawn: Any) -> None:
    agent = await spawn()

    async def answer(request: InboundRequest) -> dict[str, Any]:
        return {"action": "accept"}

    agent.conn.on_request("elicitation/create", answer)
    session = await agent.start()
    await agent.prompt(session, "elicit url")
    await agent.until(
        lambda: any(n.get("method") == "elicitation/complete" for n in agent.notifications)
    )


async def test_elicit_unanswered_is_reported(spawn: Any) -> None:
    agent = await spawn()  # the test client serves no elicitation/create: -32601
    session = await agent.start()
    await agent.prompt(session, "elicit")
    assert "-32601" in agent.text(session)


async def test_setup_params_only_when_advertised(spawn: Any) -> None:
    prompt = {"mode": "append", "content": [{"type": "text", "text": "Be brief."}]}
    plain = await spawn()
    await plain.initialize()
    for extra in ({"additionalDirectories": ["/tmp"]}, {"systemPrompt": prompt}):
        try:
            await plain.conn.request(
                "session/new", {"cwd": str(plain.cwd), "mcpServers": [], **extra}, timeout=20
            )
        except Exception as exc:  # the agent's -32602
            assert "Invalid params" in str(exc)
        else:
            raise AssertionError(f"{extra} was accepted without its capability")
    agent = await spawn(
        "--cap",
        "sessionCapabilities.additionalDirectories={}",
        "--cap",
        "sessionCapabilities.systemPrompt={}",
    )
    await agent.initialize()
    opened = await agent.conn.request(
        "session/new",
        {
            "cwd": str(agent.cwd),
            "mcpServers": [],
            "additionalDirectories": ["/tmp"],
            "systemPrompt": prompt,
        },
        timeout=20,
    )
    await agent.prompt(opened["sessionId"], "setup")
    assert agent.text(opened["sessionId"]) == (
        '{"additionalDirectories":["/tmp"],"systemPrompt":{"chars":9,"mode":"append"}}'
    )
    override = {**prompt, "mode": "override"}
    try:
        await agent.conn.request(
            "session/new",
            {"cwd": str(agent.cwd), "mcpServers": [], "systemPrompt": override},
            timeout=20,
        )
    except Exception as exc:
        assert "not supported" in str(exc)
    else:
        raise AssertionError("override accepted without mode.override")
