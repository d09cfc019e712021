"""initialize, authentication, session/* methods and config options, through a real pipe."""

from __future__ import annotations

from typing import Any

import pytest

from baton.errors import AgentRequestError, AuthenticationRequired

WAIT = 20.0


async def call(agent: Any, method: str, params: dict[str, Any]) -> Any:
    return await agent.conn.request(method, params, timeout=WAIT)


async def test_default_initialize(spawn: Any) -> None:
    agent = await spawn()
    result = await agent.initialize()
    assert result["protocolVersion"] == 1
    assert result["agentCapabilities"] == {
        "loadSession": True,
        "promptCapabilities": {"image": False, "audio": False, "embeddedContext": False},
        "mcpCapabilities": {"http": False, "sse": False},
        "sessionCapabilities": {"list": {}, "resume": {}, "close": {}, "delete": {}},
        "auth": {"logout": {}},
    }
    assert result["agentInfo"]["name"] == "baton-scripted"
    assert [m["id"] for m in result["authMethods"]] == ["scripted-login"]


async def test_capability_forms_and_protocol_version(spawn: Any) -> None:
    agent = await spawn(
        "--cap",
        "loadSession=false",
        "--cap",
        "sessionCapabilities.resume=omit",
        "--cap",
        "sessionCapabilities.list=true",
        "--cap",
        "promptCapabilities={}",
        "--cap",
        '_meta.vendor={"x": 1}',
        "--protocol-version",
        "7",
        schema_checks=False,  # list=true is a form the schema does not allow: on purpose
    )
    result = await agent.initialize(version=2)
    assert result["protocolVersion"] == 7
    caps = result["agentCapabilities"]
    assert caps["loadSession"] is False
    assert caps["sessionCapabilities"] == {"list": True, "close": {}, "delete": {}}
    assert caps["promptCapabilities"] == {}
    assert caps["_meta"] == {"vendor": {"x": 1}}
    session = (await agent.new_session())["sessionId"]
    # What is not advertised is not served.
    for method, params in [
        ("session/load", {"sessionId": session, "cwd": str(agent.cwd), "mcpServers": []}),
        ("session/resume", {"sessionId": session, "cwd": str(agent.cwd)}),
    ]:
        with pytest.raises(AgentRequestError) as caught:
            await call(agent, method, params)
        assert caught.value.rpc_code == -32601
    assert (await call(agent, "session/list", {}))["sessions"][0]["sessionId"] == session


async def test_protocol_version_echo(spawn: Any) -> None:
    agent = await spawn("--protocol-version", "echo")
    assert (await agent.initialize(version=3))["protocolVersion"] == 3


async def test_serve_unadvertised(spawn: Any) -> None:
    agent = await spawn("--cap", "sessionCapabilities.resume=omit", "--serve-unadvertised")
    session = await agent.start()
    assert "modes" in await call(
        agent, "session/resume", {"sessionId": session, "cwd": str(agent.cwd)}
    )


@pytest.mark.parametrize("stage", ["new", "prompt"])
async def test_auth_required_until_authenticate(spawn: Any, stage: str) -> None:
    agent = await spawn(
        "--auth-required", stage, "--auth-method", "key:env_var", "--auth-method", "sso"
    )
    result = await agent.initialize()
    assert result["authMethods"] == [
        {"id": "key", "name": "Sign in (key)", "type": "env_var"},
        {"id": "sso", "name": "Sign in (sso)"},
    ]
    if stage == "new":
        with pytest.raises(AuthenticationRequired):
            await agent.new_session()
    else:
        session = (await agent.new_session())["sessionId"]
        with pytest.raises(AuthenticationRequired):
            await agent.prompt(session, "echo hi")
    with pytest.raises(AgentRequestError) as caught:
        await call(agent, "authenticate", {"methodId": "nope"})
    assert caught.value.rpc_code == -32602
    assert await call(agent, "authenticate", {"methodId": "sso"}) == {}
    session = (await agent.new_session())["sessionId"]
    assert await agent.prompt(session, "echo hi") == {"stopReason": "end_turn"}


@pytest.mark.off_schema_outbound  # malformed set_config_option params on purpose
async def test_config_options_select_and_boolean(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    result = await call(
        agent,
        "session/set_config_option",
        {"sessionId": session, "configId": "effort", "value": "ultra"},
    )
    by_id = {o["id"]: o for o in result["configOptions"]}
    assert list(by_id) == ["mode", "model", "effort", "thinking"]
    assert by_id["effort"]["currentValue"] == "ultra"
    assert [o["value"] for o in by_id["effort"]["options"]] == [
        "low",
        "medium",
        "high",
        "max",
        "ultra",
    ]
    assert by_id["effort"]["category"] == "thought_level"
    result = await call(
        agent,
        "session/set_config_option",
        {"sessionId": session, "configId": "thinking", "type": "boolean", "value": True},
    )
    assert {o["id"]: o["currentValue"] for o in result["configOptions"]} == {
        "mode": "default",
        "model": "scripted-small",
        "effort": "ultra",
        "thinking": True,
    }
    result = await call(
        agent,
        "session/set_config_option",
        {"sessionId": session, "configId": "mode", "value": "plan"},
    )
    assert result["configOptions"][0]["currentValue"] == "plan"
    bad = [
        {"configId": "thinking", "value": True},  # boolean without type
        {"configId": "effort", "value": "xhigh"},  # not advertised
        {"configId": "effort", "type": "boolean", "value": True},
        {"configId": "nope", "value": "x"},
    ]
    for params in bad:
        with pytest.raises(AgentRequestError) as caught:
            await call(agent, "session/set_config_option", {"sessionId": session, **params})
        assert caught.value.rpc_code == -32602


async def test_set_mode_updates_the_mode_option(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    assert await call(agent, "session/set_mode", {"sessionId": session, "modeId": "plan"}) == {}
    resumed = await call(agent, "session/resume", {"sessionId": session, "cwd": str(agent.cwd)})
    assert resumed["modes"]["currentModeId"] == "plan"
    assert resumed["configOptions"][0]["currentValue"] == "plan"
    with pytest.raises(AgentRequestError):
        await call(agent, "session/set_mode", {"sessionId": session, "modeId": "yolo"})


async def test_config_id_key_and_legacy_models(spawn: Any) -> None:
    # Options keyed by configId are the off-schema quirk some adapters have: on purpose.
    agent = await spawn("--config-key", "configId", "--models", "both", schema_checks=False)
    await agent.initialize()
    result = await agent.new_session()
    assert all("configId" in o and "id" not in o for o in result["configOptions"])
    assert result["models"] == {
        "availableModels": [
            {
                "modelId": "scripted-small",
                "name": "Scripted small",
                "description": "Deterministic and fast",
            },
            {
                "modelId": "scripted-large[1m]",
                "name": "Scripted large (1M context)",
                "description": "Deterministic",
            },
        ],
        "currentModelId": "scripted-small",
    }
    session = result["sessionId"]
    await call(agent, "session/set_model", {"sessionId": session, "modelId": "scripted-large[1m]"})
    resumed = await call(agent, "session/resume", {"sessionId": session, "cwd": str(agent.cwd)})
    assert resumed["models"]["currentModelId"] == "scripted-large[1m]"
    assert resumed["configOptions"][1]["currentValue"] == "scripted-large[1m]"


@pytest.mark.off_schema_outbound  # malformed set_mode / set_config_option params on purpose
async def test_models_legacy_only_and_no_config(spawn: Any) -> None:
    agent = await spawn("--models", "legacy", "--no-config-options", "--no-modes")
    await agent.initialize()
    result = await agent.new_session()
    assert set(result) == {"sessionId", "models"}
    for method in ("session/set_config_option", "session/set_mode"):
        with pytest.raises(AgentRequestError) as caught:
            await call(agent, method, {"sessionId": result["sessionId"]})
        assert caught.value.rpc_code == -32601


async def test_load_replays_history_before_answering(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    await agent.prompt(session, "echo one; stream 3; title Named")
    await agent.prompt(session, "plain words")
    live = agent.updates(session)
    agent.notifications.clear()
    result = await call(
        agent, "session/load", {"sessionId": session, "cwd": str(agent.cwd), "mcpServers": []}
    )
    assert set(result) == {"modes", "configOptions"}
    replay = agent.updates(session)
    user = {"sessionUpdate": "user_message_chunk"}
    assert replay == [
        {**user, "content": {"type": "text", "text": "echo one; stream 3; title Named"}},
        *live[:5],
        {**user, "content": {"type": "text", "text": "plain words"}},
        live[5],
    ]
    # Replay frames arrived before the response.
    response_index = next(i for i, m in enumerate(agent.tap.inbound) if m.get("result") is result)
    assert all(agent.tap.inbound.index(n) < response_index for n in agent.notifications)


async def test_resume_does_not_replay(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    await agent.prompt(session, "echo one")
    agent.notifications.clear()
    await call(agent, "session/resume", {"sessionId": session, "cwd": str(agent.cwd)})
    assert agent.notifications == []


async def test_list_close_delete_fork(spawn: Any) -> None:
    agent = await spawn("--cap", "sessionCapabilities.fork={}", "--no-state-dir")
    await agent.initialize()
    ids = [(await agent.new_session())["sessionId"] for _ in range(52)]
    assert ids[:2] == ["session-1", "session-2"]
    await agent.prompt(ids[0], "title First")
    page = await call(agent, "session/list", {})
    assert len(page["sessions"]) == 50 and page["nextCursor"] == "50"
    assert page["sessions"][0] == {
        "sessionId": "session-1",
        "cwd": str(agent.cwd),
        "title": "First",
    }
    rest = await call(agent, "session/list", {"cursor": "50"})
    assert [s["sessionId"] for s in rest["sessions"]] == ids[50:] and "nextCursor" not in rest
    assert (await call(agent, "session/list", {"cwd": "/elsewhere"}))["sessions"] == []
    forked = await call(
        agent, "session/fork", {"sessionId": ids[0], "cwd": str(agent.cwd), "mcpServers": []}
    )
    assert forked["sessionId"] == "session-53"
    assert await call(agent, "session/close", {"sessionId": ids[1]}) == {}
    assert await call(agent, "session/delete", {"sessionId": ids[2]}) == {}
    listed = {
        s["sessionId"] for s in (await call(agent, "session/list", {"cursor": "0"}))["sessions"]
    }
    assert ids[1] not in listed and ids[2] not in listed
    with pytest.raises(AgentRequestError) as caught:
        await agent.prompt(ids[1], "echo closed")
    assert caught.value.rpc_code == -32002


async def test_fork_at_a_turn_behind_batons_extension(spawn: Any) -> None:
    agent = await spawn(
        "--cap", 'sessionCapabilities.fork={"_meta":{"baton.forkAtTurn":true}}', "--no-state-dir"
    )
    session = await agent.start()
    for text in ("echo one", "echo two"):
        await agent.prompt(session, text)
    cwd = str(agent.cwd)
    early = await call(
        agent,
        "session/fork",
        {"sessionId": session, "cwd": cwd, "_meta": {"baton.forkAtTurn": 1}},
    )
    agent.notifications.clear()
    await call(
        agent, "session/load", {"sessionId": early["sessionId"], "cwd": cwd, "mcpServers": []}
    )
    replayed = [
        n["params"]["update"]["content"]["text"]
        for n in agent.notifications
        if n["params"]["update"]["sessionUpdate"] == "user_message_chunk"
    ]
    assert replayed == ["echo one"]
    for bad in (3, 0, "1"):
        with pytest.raises(AgentRequestError) as caught:
            await call(
                agent,
                "session/fork",
                {"sessionId": session, "cwd": cwd, "_meta": {"baton.forkAtTurn": bad}},
            )
        assert caught.value.rpc_code == -32602


async def test_fork_at_a_turn_is_refused_unless_advertised(spawn: Any) -> None:
    agent = await spawn("--cap", "sessionCapabilities.fork={}", "--no-state-dir")
    session = await agent.start()
    await agent.prompt(session, "echo one")
    with pytest.raises(AgentRequestError) as caught:
        await call(
            agent,
            "session/fork",
            {"sessionId": session, "cwd": str(agent.cwd), "_meta": {"baton.forkAtTurn": 1}},
        )
    assert caught.value.rpc_code == -32602 and "not advertised" in caught.value.agent_message


async def test_close_cancels_the_running_turn(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    request_id = await agent.send_prompt(session, "wait_for_cancel 5")
    await agent.until(lambda: len(agent.updates(session)) >= 1)
    assert await call(agent, "session/close", {"sessionId": session}) == {}
    assert await agent.conn.await_response(request_id, timeout=WAIT) == {"stopReason": "cancelled"}


async def test_sessions_outlive_the_process_by_default(spawn: Any, tmp_path: Any) -> None:
    # spawn's agents use the test's own cache directory (tmp_path/cache).
    first = await spawn()
    session = await first.start()
    await first.prompt(session, "echo remembered")
    await first.shutdown()
    assert (tmp_path / "cache" / "baton" / "scripted-agent" / f"{session}.json").is_file()
    second = await spawn()
    await second.initialize()
    await call(second, "session/resume", {"sessionId": session, "cwd": str(second.cwd)})
    assert await second.prompt(session, "echo again") == {"stopReason": "end_turn"}
    memory = await spawn("--no-state-dir")
    await memory.initialize()
    assert (await memory.new_session())["sessionId"] == "session-1"
    with pytest.raises(AgentRequestError) as caught:
        await call(memory, "session/resume", {"sessionId": session, "cwd": str(memory.cwd)})
    assert caught.value.rpc_code == -32002


async def test_state_dir_carries_sessions_across_processes(spawn: Any, tmp_path: Any) -> None:
    state = tmp_path / "state"
    first = await spawn("--state-dir", str(state))
    session = await first.start()
    assert len(session) == 36  # a UUID: unique across processes
    await first.prompt(session, "echo remembered; stream 2; title Kept")
    await first.shutdown()
    second = await spawn("--state-dir", str(state))
    await second.initialize()
    listed = await call(second, "session/list", {})
    assert listed["sessions"] == [{"sessionId": session, "cwd": str(second.cwd), "title": "Kept"}]
    await call(
        second, "session/load", {"sessionId": session, "cwd": str(second.cwd), "mcpServers": []}
    )
    assert second.text(session) == "remembered" + "chunk 1\nchunk 2\n"
    assert await second.prompt(session, "write a.txt x") == {"stopReason": "end_turn"}
    assert second.updates(session)[-2]["toolCallId"] == "call_1"
    with pytest.raises(AgentRequestError) as caught:
        await call(second, "session/load", {"sessionId": "../escape", "cwd": "/", "mcpServers": []})
    assert caught.value.rpc_code == -32002


async def test_malformed_input_gets_json_rpc_errors(spawn: Any) -> None:
    agent = await spawn()
    await agent.initialize()
    assert agent.process.stdin is not None
    agent.process.stdin.write(b"not json\n[1]\n\n")
    await agent.process.stdin.drain()
    # The agent answers in order: once this is answered, so are the bad lines.
    await call(agent, "session/list", {})
    errors = [m for m in agent.tap.inbound if "error" in m]
    assert [e["error"]["code"] for e in errors] == [-32700, -32600]
    assert all(e["id"] is None for e in errors)
    # Baton sees a null-id error as an answer to no request of its own.
    assert [v.kind for v in agent.conn.violations] == ["unknown_response_id"] * 2
    # Answers to ids the agent never used are dropped (and logged).
    await agent.conn.notify("ignored/notification", {})
    agent.process.stdin.write(b'{"jsonrpc":"2.0","id":12345,"result":{}}\n')
    assert (await call(agent, "session/list", {}))["sessions"] == []
