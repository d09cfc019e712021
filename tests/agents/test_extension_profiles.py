"""The grok and cursor profiles speak the profile-gated model extensions, through a real pipe,
read back with Baton's own parsers (baton.wire.extensions) and controls (baton.runtime.turns.controls).
"""

from __future__ import annotations

from typing import Any

import pytest

from baton.connection.client import AcpClient
from baton.errors import AgentRequestError, ExtensionPayloadInvalid
from baton.runtime.turns import controls as c
from baton.runtime.turns.settings import RequestedSettings, apply_settings
from baton.wire.capabilities import initialize_params
from baton.wire.extensions import cursor, grok
from baton.wire.session_state import parse_session_state

WAIT = 20.0


async def call(agent: Any, method: str, params: dict[str, Any]) -> Any:
    return await agent.conn.request(method, params, timeout=WAIT)


async def rpc_error(agent: Any, method: str, params: dict[str, Any]) -> int:
    with pytest.raises(AgentRequestError) as caught:
        await call(agent, method, params)
    return caught.value.rpc_code


def updates_of(agent: Any) -> list[dict[str, Any]]:
    return [n for n in agent.notifications if n.get("method") == grok.MODELS_UPDATE_METHOD]


# --- grok ------------------------------------------------------------------------------------


async def test_grok_catalogs(spawn: Any) -> None:
    agent = await spawn("--profile", "grok")
    result = await call(agent, "initialize", initialize_params(1))
    before = grok.parse_initialize_model_state(result)
    assert before is not None
    assert before.ids() == ("grok-build", "grok-4.5", "grok-code-fast-1")
    assert before.current_model_id == "grok-build"
    assert before.current.effort_values() == ("low", "medium", "high", "xhigh")
    assert before.current.current_effort == "high"
    assert before.model("grok-code-fast-1") is not None
    assert before.model("grok-code-fast-1").efforts == ()  # type: ignore[union-attr]
    opened = await agent.new_session()
    session = grok.parse_session_models(opened)
    assert session == before
    state = parse_session_state(opened)
    assert state.modes is None and state.config_options == ()
    assert state.models is not None and state.models.ids() == before.ids()


async def test_grok_set_model_honours_reasoning_effort(spawn: Any) -> None:
    agent = await spawn("--profile", "grok")
    sid = await agent.start()
    params = grok.set_model_params(sid, "grok-4.5", reasoning_effort="low")
    assert await call(agent, "session/set_model", params) == {}
    resumed = await call(agent, "session/resume", {"sessionId": sid, "cwd": str(agent.cwd)})
    models = grok.parse_session_models(resumed, "session/resume")
    assert models is not None and models.current_model_id == "grok-4.5"
    assert models.current.current_effort == "low"
    # The same model without an effort keeps it; unadvertised efforts and models are refused.
    assert await call(agent, "session/set_model", grok.set_model_params(sid, "grok-4.5")) == {}
    for bad in (
        grok.set_model_params(sid, "grok-4.5", reasoning_effort="xhigh"),
        grok.set_model_params(sid, "grok-code-fast-1", reasoning_effort="low"),
        grok.set_model_params(sid, "grok-9"),
    ):
        assert await rpc_error(agent, "session/set_model", bad) == -32602
    again = await call(agent, "session/resume", {"sessionId": sid, "cwd": str(agent.cwd)})
    kept = grok.parse_session_models(again)
    assert kept is not None and kept.current.current_effort == "low"
    # Another model starts at its own default effort.
    await call(agent, "session/set_model", grok.set_model_params(sid, "grok-build"))
    moved = grok.parse_session_models(
        await call(agent, "session/resume", {"sessionId": sid, "cwd": str(agent.cwd)})
    )
    assert moved is not None and moved.current.current_effort == "high"


async def test_grok_models_update_replaces_the_catalog(spawn: Any) -> None:
    agent = await spawn("--profile", "grok")
    sid = await agent.start()
    await call(agent, "session/set_model", grok.set_model_params(sid, "grok-code-fast-1"))
    result = await agent.prompt(sid, "models_update")
    assert result["stopReason"] == "end_turn"
    await agent.until(lambda: len(updates_of(agent)) == 1)
    catalog = grok.apply_models_update(updates_of(agent)[0]["params"])
    # The default update drops the last model and adds grok-next.
    assert catalog.ids() == ("grok-build", "grok-4.5", "grok-next")
    assert catalog.model("grok-code-fast-1") is None
    assert catalog.current_model_id == "grok-build"
    assert (
        await rpc_error(agent, "session/set_model", grok.set_model_params(sid, "grok-code-fast-1"))
        == -32602
    )
    # The session's model was removed: it moved to the new default.
    resumed = grok.parse_session_models(
        await call(agent, "session/resume", {"sessionId": sid, "cwd": str(agent.cwd)})
    )
    assert resumed is not None and resumed.ids() == catalog.ids()
    assert resumed.current_model_id == "grok-build"
    # Explicit ids; a later session starts from the new catalog's default.
    await agent.prompt(sid, "models_update grok-4.5 grok-5")
    await agent.until(lambda: len(updates_of(agent)) == 2)
    second = grok.apply_models_update(updates_of(agent)[1]["params"])
    assert second.ids() == ("grok-4.5", "grok-5") and second.current_model_id == "grok-4.5"
    fresh = grok.parse_session_models(await agent.new_session())
    assert fresh == second


async def test_grok_malformed_update(spawn: Any) -> None:
    agent = await spawn("--profile", "grok")
    sid = await agent.start()
    await agent.prompt(sid, "models_update !malformed")
    await agent.until(lambda: len(updates_of(agent)) == 1)
    with pytest.raises(ExtensionPayloadInvalid):
        grok.apply_models_update(updates_of(agent)[0]["params"])
    # Nothing changed on the agent's side.
    unchanged = grok.parse_session_models(await agent.new_session())
    assert unchanged is not None and "grok-code-fast-1" in unchanged.ids()


async def test_models_update_needs_the_grok_profile(spawn: Any) -> None:
    agent = await spawn()
    sid = await agent.start()
    with pytest.raises(AgentRequestError) as caught:
        await agent.prompt(sid, "models_update")
    assert caught.value.rpc_code == -32602
    assert "grok profile" in caught.value.agent_message
    assert updates_of(agent) == []
    assert "_meta" not in await call(agent, "initialize", initialize_params(1))


async def test_grok_controls_round_trip(spawn: Any) -> None:
    agent = await spawn("--profile", "grok")
    await call(agent, "initialize", initialize_params(1))
    opened = await agent.new_session()
    sid = opened["sessionId"]
    state, models = parse_session_state(opened), grok.parse_session_models(opened)
    view = c.project_controls(sid, state, grok_models=models)
    assert view.ids() == ("model", "effort")
    change = c.resolve_control(view, "effort", "medium", view.revision)
    answer = await call(agent, change.method, dict(change.params))
    confirmed = c.confirm_mutation(change, state, answer, grok_models=models)
    after = c.project_controls(sid, confirmed.state, grok_models=confirmed.grok_models)
    assert after.control("effort").value == "medium"  # type: ignore[union-attr]
    resumed = await call(agent, "session/resume", {"sessionId": sid, "cwd": str(agent.cwd)})
    provider = c.project_controls(
        sid, parse_session_state(resumed), grok_models=grok.parse_session_models(resumed)
    )
    # What Baton projected after the confirmed change is what the provider now reports.
    assert provider.to_json() == after.to_json()
    with pytest.raises(c.ControlRevisionStale):
        c.resolve_control(after, "effort", "low", view.revision)


# --- cursor ----------------------------------------------------------------------------------


async def test_cursor_list_needs_the_initialize_flag(spawn: Any) -> None:
    agent = await spawn("--profile", "cursor")
    await call(agent, "initialize", initialize_params(1))
    assert await rpc_error(agent, cursor.LIST_MODELS_METHOD, cursor.list_models_params()) == -32601


async def test_cursor_list_is_cursor_only(spawn: Any) -> None:
    agent = await spawn("--profile", "grok")
    await call(agent, "initialize", cursor.with_model_picker(initialize_params(1)))
    assert await rpc_error(agent, cursor.LIST_MODELS_METHOD, {}) == -32601


async def test_cursor_list_available_models(spawn: Any) -> None:
    agent = await spawn("--profile", "cursor")
    await call(agent, "initialize", cursor.with_model_picker(initialize_params(1)))
    models = cursor.parse_list_available_models(
        await call(agent, cursor.LIST_MODELS_METHOD, cursor.list_models_params())
    )
    assert models.values() == ("default", "gpt-5", "sonnet-4.5", "composer-1")
    assert models.auto.name == "Auto"
    assert models.require("gpt-5", "high")[1] == "high"
    gpt = models.model("gpt-5")
    assert gpt is not None and gpt.thought_level() is not None
    assert gpt.effort_values() == ("low", "medium", "high")
    sonnet = models.model("sonnet-4.5")
    assert sonnet is not None and sonnet.effort_values() == ("off", "high")
    assert models.model("composer-1").config_options == ()  # type: ignore[union-attr]
    # Auto starts the session, with no reasoning selector.
    state = parse_session_state(await agent.new_session())
    assert [o.id for o in state.config_options] == ["model"]
    assert state.config_option("model").current_value == "default"  # type: ignore[union-attr]


async def test_cursor_model_change_replaces_the_config_catalog(spawn: Any) -> None:
    agent = await spawn("--profile", "cursor")
    await call(agent, "initialize", cursor.with_model_picker(initialize_params(1)))
    opened = await agent.new_session()
    sid = opened["sessionId"]
    state = parse_session_state(opened)
    view = c.project_controls(sid, state)
    assert view.ids() == ("mode", "model")
    change = c.resolve_control(view, "model", "gpt-5", view.revision)
    confirmed = c.confirm_mutation(
        change, state, await call(agent, change.method, dict(change.params))
    )
    gpt_view = c.project_controls(sid, confirmed.state)
    assert gpt_view.ids() == ("mode", "model", "config:reasoning")
    reasoning = gpt_view.control("config:reasoning")
    assert reasoning is not None and reasoning.group == "thought_level"
    assert reasoning.value == "medium"
    # Switching again replaces the catalog: the old selector is gone, the new one is there.
    switch = c.resolve_control(gpt_view, "model", "sonnet-4.5", gpt_view.revision)
    replaced = c.confirm_mutation(
        switch, confirmed.state, await call(agent, switch.method, dict(switch.params))
    )
    sonnet_view = c.project_controls(sid, replaced.state)
    assert sonnet_view.ids() == ("mode", "model", "config:thinking_level")
    with pytest.raises(c.ControlUnknown):
        c.resolve_control(sonnet_view, "config:reasoning", "high", sonnet_view.revision)
    with pytest.raises(c.ControlRevisionStale):
        c.resolve_control(sonnet_view, "config:thinking_level", "high", gpt_view.revision)
    # A value of the old model's selector is refused by the agent too.
    assert (
        await rpc_error(
            agent,
            "session/set_config_option",
            {"sessionId": sid, "configId": "reasoning", "value": "high"},
        )
        == -32602
    )


async def test_cursor_settings_apply_model_then_effort(spawn: Any) -> None:
    agent = await spawn("--profile", "cursor")
    client = AcpClient(agent.conn)
    await client.initialize()
    opened = await client.new_session(str(agent.cwd))
    state, sent = await apply_settings(
        client, opened.session_id, RequestedSettings(model="gpt-5", effort="High")
    )
    assert sent == 2
    assert state.config_option("model").current_value == "gpt-5"  # type: ignore[union-attr]
    assert state.config_option("reasoning").current_value == "high"  # type: ignore[union-attr]
    # The effort is validated against the replaced catalog: sonnet-4.5 has off/high only.
    state, sent = await apply_settings(
        client, opened.session_id, RequestedSettings(model="sonnet-4.5", effort="high")
    )
    assert sent == 2 and state.config_option("reasoning") is None
    assert state.config_option("thinking_level").current_value == "high"  # type: ignore[union-attr]
