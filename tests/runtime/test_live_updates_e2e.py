"""Usage, notices, compaction and tool-call names end to end: the scripted agent sends them,
the runtime projects them into events, the result and the run's items (issue 20)."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from baton.errors import CapabilityNotAdvertised
from baton.runtime.agents.environment import CLAUDE_ENVIRONMENT
from baton.runtime.agents.profiles import EXT_CLAUDE_SUBAGENT_PARENT, LaunchProbe, Profile
from baton.runtime.permissions.elicitations import ElicitationReply
from baton.runtime.runtime import RunRequest, RunResult, Runtime
from baton.runtime.turns.events import RunEvent
from baton.wire.capabilities import ElicitationOffer
from baton.wire.version import parse_protocol_choice

AGENT = [sys.executable, "-m", "baton.agents.scripted"]


@pytest.fixture
async def runtime(tmp_path: Path) -> AsyncIterator[Runtime]:
    rt = Runtime(data_dir=tmp_path / "data", environ=dict(os.environ), interrupt_timeout=2.0)
    await rt.open()
    yield rt
    await rt.close()


async def run(rt: Runtime, prompt: str, cwd: Path, *flags: str) -> tuple[RunResult, list[RunEvent]]:
    events: list[RunEvent] = []
    request = RunRequest(prompt=prompt, agent_command=[*AGENT, *flags], cwd=str(cwd))
    result = await rt.run(request, on_event=events.append)
    return result, events


def of(events: list[RunEvent], kind: str) -> list[dict[str, object]]:
    return [e.data for e in events if e.type == kind]


async def test_usage_with_cost_and_turn_tokens(runtime: Runtime, tmp_path: Path) -> None:
    result, events = await run(runtime, "echo hi; cost 250 EUR", tmp_path, "--prompt-usage")
    assert result.status == "COMPLETED"
    usage_events = of(events, "usage")
    assert usage_events[0] == {
        "used": 42,
        "size": 200000,
        "cost": {"amount": 2.5, "currency": "EUR"},
    }
    turn = usage_events[-1]["turn"]
    assert (
        isinstance(turn, dict) and turn["totalTokens"] == turn["inputTokens"] + turn["outputTokens"]
    )
    assert "thoughtTokens" not in turn  # not sent: not invented
    assert result.usage == usage_events[-1]
    assert events[-1].type == "result" and events[-1].data["usage"] == result.usage
    assert runtime.store is not None
    [item] = [i for i in runtime.store.list_items(result.run_id) if i.kind == "usage"]
    assert item.content == result.usage


async def test_v2_turn_usage_from_the_ending_idle_state(runtime: Runtime, tmp_path: Path) -> None:
    # Under v2 the end-of-turn usage rides on the idle state_update (the draft's unstable
    # IdleStateUpdate.usage), not on the prompt's acknowledgement.
    events: list[RunEvent] = []
    request = RunRequest(
        prompt="echo hi; cost 250 EUR",
        agent_command=[*AGENT, "--protocol", "2", "--prompt-usage"],
        cwd=str(tmp_path),
        protocol=parse_protocol_choice("2"),
    )
    result = await runtime.run(request, on_event=events.append)
    assert result.status == "COMPLETED"
    assert of(events, "state")  # it really was a v2 turn
    usage_events = of(events, "usage")
    assert usage_events[0] == {
        "used": 42,
        "size": 200000,
        "cost": {"amount": 2.5, "currency": "EUR"},
    }
    turn = usage_events[-1]["turn"]
    assert (
        isinstance(turn, dict) and turn["totalTokens"] == turn["inputTokens"] + turn["outputTokens"]
    )
    assert "thoughtTokens" not in turn
    assert result.usage == usage_events[-1] and result.usage["cost"] == usage_events[0]["cost"]
    assert events[-1].type == "result" and events[-1].data["usage"] == result.usage
    assert runtime.store is not None
    [item] = [i for i in runtime.store.list_items(result.run_id) if i.kind == "usage"]
    assert item.content == result.usage


async def test_v2_without_turn_usage_keeps_the_usage_update(
    runtime: Runtime, tmp_path: Path
) -> None:
    request = RunRequest(
        prompt="echo hi; usage 7 100",
        agent_command=[*AGENT, "--protocol", "2"],
        cwd=str(tmp_path),
        protocol=parse_protocol_choice("2"),
    )
    events: list[RunEvent] = []
    result = await runtime.run(request, on_event=events.append)
    assert result.status == "COMPLETED"
    assert result.usage == {"used": 7, "size": 100}


async def test_no_usage_is_none(runtime: Runtime, tmp_path: Path) -> None:
    result, events = await run(runtime, "echo hi", tmp_path)
    assert result.usage is None and not of(events, "usage")


async def test_notices_and_compaction(runtime: Runtime, tmp_path: Path) -> None:
    result, events = await run(
        runtime,
        "notice warning Rate limited|Retrying soon; compact completed Kept the plan; echo done",
        tmp_path,
    )
    assert result.status == "COMPLETED"
    assert of(events, "notice") == [
        {"severity": "warning", "title": "Rate limited", "description": "Retrying soon"}
    ]
    compactions = of(events, "compaction")
    assert compactions[0]["status"] == "in_progress"
    assert compactions[-1]["status"] == "completed"
    assert compactions[-1]["summary"] == "Kept the plan "
    assert runtime.store is not None
    kinds = [i.kind for i in runtime.store.list_items(result.run_id)]
    assert kinds.count("notice") == 1 and kinds.count("compaction") == 1
    # Events keep arrival order: the notice before the compaction before the text.
    order = [e.type for e in events if e.type in ("notice", "compaction", "text")]
    assert order.index("notice") < order.index("compaction") < order.index("text")


async def test_tool_names_in_events_and_items(runtime: Runtime, tmp_path: Path) -> None:
    result, events = await run(runtime, "subagent Look around", tmp_path)
    calls = of(events, "tool_call")
    assert {c["name"] for c in calls} == {"Task", "Read"}
    # An ad-hoc agent is not the claude profile: the parent link is ignored.
    assert not any("parentToolCallId" in c for c in calls)
    assert runtime.store is not None
    items = [i.content for i in runtime.store.list_items(result.run_id) if i.kind == "tool_call"]
    assert sorted(str(i["name"]) for i in items) == ["Read", "Task"]


def _claude_like_profile() -> Profile:
    return Profile(
        id="scripted-claude",
        display_name="Scripted with Claude's subagent contract (test)",
        executables=("baton-scripted-test-agent",),
        override_env="BATON_SCRIPTED_CLAUDE_TEST_BIN",
        launch_argv=(),
        version_argv=None,
        probe=LaunchProbe(("--help",), (re.compile(r"deterministic ACP v1 agent"),)),
        environment=CLAUDE_ENVIRONMENT,
        allowed_policies=("ask",),
        extensions=frozenset({EXT_CLAUDE_SUBAGENT_PARENT}),
    )


async def test_the_claude_contract_records_the_parent_link(tmp_path: Path) -> None:
    exe = tmp_path / "agent.sh"
    exe.write_text(f'#!/bin/sh\nexec {sys.executable} -m baton.agents.scripted "$@"\n')
    exe.chmod(0o755)
    env = {**os.environ, "BATON_SCRIPTED_CLAUDE_TEST_BIN": str(exe)}
    profiles = {"scripted-claude": _claude_like_profile()}
    async with Runtime(data_dir=tmp_path / "data", environ=env, profiles=profiles) as rt:
        events: list[RunEvent] = []
        result = await rt.run(
            RunRequest(prompt="subagent", agent="scripted-claude", cwd=str(tmp_path)),
            on_event=events.append,
        )
        assert result.status == "COMPLETED"
        calls = of(events, "tool_call")
        task = next(c for c in calls if c["name"] == "Task")
        read = next(c for c in calls if c["name"] == "Read")
        assert read["parentToolCallId"] == task["toolCallId"]
        assert "parentToolCallId" not in task
        assert rt.store is not None
        items = [i.content for i in rt.store.list_items(result.run_id) if i.kind == "tool_call"]
        assert any(i.get("parentToolCallId") == task["toolCallId"] for i in items)


async def test_headless_elicitation_is_declined_and_recorded(
    runtime: Runtime, tmp_path: Path
) -> None:
    result, events = await run(runtime, "elicit form; elicit url", tmp_path)
    assert result.status == "COMPLETED"
    answers = of(events, "elicitation")
    assert [a["action"] for a in answers] == ["decline", "decline"]
    assert {a["reasonCode"] for a in answers} == {"mode_not_offered"}
    assert result.text.count('elicitation answer: {"action":"decline"}') == 2
    assert runtime.store is not None
    kinds = [i.kind for i in runtime.store.list_items(result.run_id)]
    assert kinds.count("elicitation") == 2


class _Person:
    """An elicitor that accepts forms with one answer (a credential-looking token too)."""

    offer = ElicitationOffer(form=True, url=True)

    async def ask(self, request: Any) -> ElicitationReply:
        return ElicitationReply(
            "accept", {"name": "ghp_" + "A1b2C3d4E5" * 3 + "F6g7H8", "replicas": 2}
        )


async def test_an_elicitor_answers_and_secrets_are_redacted(tmp_path: Path) -> None:
    async with Runtime(
        data_dir=tmp_path / "data", environ=dict(os.environ), elicitor=_Person()
    ) as rt:
        result, events = await run(rt, "elicit form", tmp_path)
        assert result.status == "COMPLETED"
        [answer] = of(events, "elicitation")
        assert answer["action"] == "accept" and answer["chosenBy"] == "user", answer
        content = answer["content"]
        assert isinstance(content, dict) and content["replicas"] == 2
        assert "A1b2C3d4E5" not in str(content["name"])  # redacted in the event
        # The agent got the answer (it reports it; the report is redacted like any text).
        assert "elicitation answer:" in result.text and "A1b2C3d4E5" not in result.text
        assert rt.store is not None
        [item] = [i for i in rt.store.list_items(result.run_id) if i.kind == "elicitation"]
        assert "A1b2C3d4E5" not in str(item.content)


async def test_permission_records_carry_the_tool_name(runtime: Runtime, tmp_path: Path) -> None:
    result, events = await run(runtime, "shell ls", tmp_path)
    [permission] = of(events, "permission")
    assert permission["toolName"] == "Bash"
    assert runtime.store is not None
    [interaction] = runtime.store.list_interactions(result.run_id)
    assert interaction.tool_call["name"] == "Bash"


async def test_logout_sends_only_when_advertised(tmp_path: Path) -> None:
    async with Runtime(data_dir=tmp_path / "data", environ=dict(os.environ)) as rt:
        await rt.logout(agent_command=AGENT)
        [lane] = rt._lanes.values()
        assert lane.connection is not None
        assert lane.connection.frames_out == 2  # initialize, logout
    async with Runtime(data_dir=tmp_path / "data2", environ=dict(os.environ)) as rt:
        with pytest.raises(CapabilityNotAdvertised) as caught:
            await rt.logout(agent_command=[*AGENT, "--cap", "auth.logout=omit"])
        assert caught.value.capability == "auth.logout"
        [lane] = rt._lanes.values()
        assert lane.connection is not None and lane.connection.frames_out == 1
