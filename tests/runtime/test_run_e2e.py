"""The runtime turn path end to end, against the bundled scripted agent over real pipes."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from baton.journal import Journal
from baton.runtime.runtime import RunRequest, RunResult, Runtime
from baton.runtime.turns.events import RunEvent
from baton.runtime.turns.turn import Turn
from baton.wire.version import ProtocolChoice

AGENT = [sys.executable, "-m", "baton.agents.scripted"]

#: The scripted agent's flags per ACP version: every turn test runs against both (issue 21).
#: Baton offers 1 (auto, issue 29) with both layouts; the v1 agent answers 1, the v2 agent
#: (which speaks only the draft) answers 2, which auto accepts.
PROTOCOL_FLAGS = {"v1": (), "v2": ("--protocol", "2")}

#: How long an interrupted turn waits for the agent's `cancelled` answer in these tests: long
#: enough for a loaded machine (2 s was not, with the suite on two workers beside other work:
#: an idle-bound turn ended FAILED instead of INTERRUPTED).
INTERRUPT_SECONDS = 5.0

#: The flags of the version the current test runs with (set by the ``protocol`` fixture).
_protocol_flags: tuple[str, ...] = ()


@pytest.fixture(params=sorted(PROTOCOL_FLAGS), autouse=True)
def protocol(request: pytest.FixtureRequest) -> str:
    """Run each test once per ACP version; tests marked ``v1_only`` skip v2."""
    global _protocol_flags
    name = str(request.param)
    if name != "v1" and request.node.get_closest_marker("v1_only") is not None:
        pytest.skip("v1 only: " + str(request.node.get_closest_marker("v1_only").args[0]))
    _protocol_flags = PROTOCOL_FLAGS[name]
    return name


def agent(*flags: str) -> list[str]:
    return [*AGENT, *_protocol_flags, *flags]


@pytest.fixture
async def runtime(tmp_path: Path) -> AsyncIterator[Runtime]:
    rt = Runtime(
        data_dir=tmp_path / "data",
        environ=dict(os.environ),
        interrupt_timeout=INTERRUPT_SECONDS,
    )
    await rt.open()
    yield rt
    await rt.close()


async def run(
    rt: Runtime,
    prompt: str,
    cwd: Path,
    *,
    flags: tuple[str, ...] = (),
    on_turn: Callable[[Turn], None] | None = None,
    **kwargs: Any,
) -> tuple[RunResult, list[RunEvent]]:
    events: list[RunEvent] = []
    request = RunRequest(prompt=prompt, agent_command=agent(*flags), cwd=str(cwd), **kwargs)
    result = await rt.run(request, on_event=events.append, on_turn=on_turn)
    return result, events


async def warm(rt: Runtime, cwd: Path) -> None:
    """Start the lane with a trivial turn, so a short bound under test covers only the turn.

    Setup (the agent's start, initialize, session/new) runs within the turn budget too; on a
    loaded machine a Python agent's start alone can outlast a sub-second bound.
    """
    result, _ = await run(rt, "echo warm", cwd)
    assert result.status == "COMPLETED"


def texts(events: list[RunEvent]) -> str:
    return "".join(e.data["text"] for e in events if e.type == "text")


async def test_a_text_turn_completes_and_streams(runtime: Runtime, tmp_path: Path) -> None:
    result, events = await run(runtime, "echo hello there; stream 3", tmp_path)
    assert result.status == "COMPLETED"
    assert result.stop_reason == "end_turn"
    assert result.exit_code == 0
    assert texts(events) == "hello therechunk 1\nchunk 2\nchunk 3\n"
    assert events[0].type == "run_started" and events[-1].type == "result"
    assert runtime.store is not None
    record = runtime.store.get_run(result.run_id)
    assert record.status == "COMPLETED" and record.prompt_ref is not None


async def test_the_turn_speaks_the_parametrized_version(
    runtime: Runtime, tmp_path: Path, protocol: str
) -> None:
    result, events = await run(runtime, "echo hi", tmp_path)
    assert result.status == "COMPLETED" and result.stop_reason == "end_turn"
    states = [e.data["state"] for e in events if e.type == "state"]
    # v2 ends the turn with an idle state after running; v1 has no session states.
    assert states == (["running", "idle"] if protocol == "v2" else [])
    lane = next(iter(runtime.lanes.values()))
    assert lane.client is not None and lane.client.codec.version == int(protocol[1])


@pytest.mark.v1_only("the agent under test echoes the offered version in the v1 layout")
async def test_an_agent_echoing_the_offer_in_the_v1_layout_works_by_default(
    runtime: Runtime, tmp_path: Path
) -> None:
    # Issue 29 (a regression): the official Python SDK's echo agent and fast-agent echo the
    # offered number in the v1 layout; auto offers the stable 1, so the default run completes.
    result, _ = await run(runtime, "echo hi", tmp_path, flags=("--protocol-version", "echo"))
    assert (result.status, result.error_code) == ("COMPLETED", None)
    lane = next(iter(runtime.lanes.values()))
    assert lane.client is not None and lane.client.codec.version == 1
    # Pinned to 2, the same agent answers 2 in the v1 layout: refused naming the way out.
    pinned, _ = await run(
        runtime,
        "echo hi",
        tmp_path,
        flags=("--protocol-version", "echo"),
        protocol=ProtocolChoice(2),
    )
    assert (pinned.status, pinned.error_code) == ("FAILED", "AGENT_PROTOCOL_MISLABELLED")
    assert pinned.message is not None and "--protocol auto" in pinned.message


async def test_a_failed_turn_is_an_agent_error_in_both_versions(
    runtime: Runtime, tmp_path: Path, protocol: str
) -> None:
    # models_update needs the grok profile: the scripted agent fails the turn it started (v1:
    # a JSON-RPC error answer; v2: idle with the error stop reason after the acknowledgement).
    result, _ = await run(runtime, "echo first; models_update", tmp_path)
    assert result.status == "FAILED" and result.error_code == "AGENT_ERROR"
    assert result.message is not None and "-32602" in result.message
    assert result.stop_reason == (None if protocol == "v1" else "error")


async def test_a_prompt_refused_for_sign_in_is_authentication_required_in_both_versions(
    runtime: Runtime, tmp_path: Path, protocol: str
) -> None:
    # v1: a -32000 error answer. v2: the acknowledgement, then idle with the error stop reason
    # carrying -32000, which is what claude-agent-acp 0.101.0 sends signed out under v2
    # (tests/fixtures/adapters/claude-agent-acp-0.101.0/features.protocol-auto.json).
    result, _ = await run(runtime, "echo hi", tmp_path, flags=("--auth-required", "turn"))
    assert (result.status, result.error_code) == ("FAILED", "AUTHENTICATION_REQUIRED")
    assert result.exit_code == 4
    assert result.message is not None and "-32000" in result.message
    assert result.stop_reason == (None if protocol == "v1" else "error")


async def test_auto_edits_writes_an_in_worktree_file(runtime: Runtime, tmp_path: Path) -> None:
    result, events = await run(
        runtime,
        "write notes/hello.txt hi from baton",
        tmp_path,
        policy="auto-edits",
        allow_unattended=True,
    )
    assert result.status == "COMPLETED"
    assert (tmp_path / "notes" / "hello.txt").read_text() == "hi from baton"
    permission = next(e for e in events if e.type == "permission")
    assert permission.data["optionId"] == "allow"
    assert permission.data["chosenBy"] == "policy"
    assert runtime.store is not None
    [interaction] = runtime.store.list_interactions(result.run_id)
    assert interaction.choice == "allow" and interaction.chosen_by == "policy"


async def test_ask_without_a_user_answers_cancelled_and_writes_nothing(
    runtime: Runtime, tmp_path: Path
) -> None:
    result, events = await run(runtime, "write hello.txt nope", tmp_path)
    assert result.status == "COMPLETED"
    assert not (tmp_path / "hello.txt").exists()
    permission = next(e for e in events if e.type == "permission")
    assert permission.data["outcome"] == "cancelled"
    assert permission.data["chosenBy"] == "default"
    assert runtime.store is not None
    [interaction] = runtime.store.list_interactions(result.run_id)
    assert interaction.state == "CANCELLED"


async def test_an_ad_hoc_agent_cannot_use_unattended_policies_without_the_flag(
    runtime: Runtime, tmp_path: Path
) -> None:
    from baton.errors import PolicyNotAvailable

    with pytest.raises(PolicyNotAvailable):
        await run(runtime, "echo hi", tmp_path, policy="full")


async def test_reserved_delivery_commands_are_never_auto_approved(
    runtime: Runtime, tmp_path: Path
) -> None:
    result, events = await run(
        runtime,
        "shell git push --force origin main",
        tmp_path,
        policy="full",
        allow_unattended=True,
    )
    permission = next(e for e in events if e.type == "permission")
    assert permission.data["outcome"] == "cancelled"
    assert result.status == "COMPLETED"


@pytest.mark.parametrize(
    ("reason", "status", "code"),
    [
        ("max_tokens", "FAILED", 1),
        ("refusal", "FAILED", 1),
        ("max_turn_requests", "FAILED", 1),
        ("something_new", "FAILED", 1),
        ("cancelled", "INTERRUPTED", 130),
    ],
)
async def test_stop_reasons(
    runtime: Runtime, tmp_path: Path, reason: str, status: str, code: int
) -> None:
    result, _ = await run(runtime, f"stop {reason}", tmp_path)
    assert (result.status, result.stop_reason, result.exit_code) == (status, reason, code)


async def test_a_turn_that_ends_without_a_stop_reason(
    runtime: Runtime, tmp_path: Path, protocol: str
) -> None:
    # v2: `stop none` goes idle without a stop reason (STOP_UNREPORTED); v1 must answer one,
    # so there "none" is an unknown reason.
    result, _ = await run(runtime, "echo hi; stop none", tmp_path)
    assert result.status == "FAILED" and result.exit_code == 1
    if protocol == "v2":
        assert (result.error_code, result.stop_reason) == ("STOP_UNREPORTED", None)
    else:
        assert (result.error_code, result.stop_reason) == ("STOP_UNKNOWN", "none")


async def test_an_empty_end_turn_is_a_valid_completion(runtime: Runtime, tmp_path: Path) -> None:
    result, events = await run(runtime, "stop end_turn", tmp_path)
    assert result.status == "COMPLETED"
    assert texts(events) == ""


async def test_a_turn_longer_than_the_control_timeout_completes(tmp_path: Path) -> None:
    """session/prompt has no RPC deadline: the control limit applies to setup only.

    The lane is warmed up first (a slow machine may take longer than the short limit to start
    Python), then the turn outlives the limit by a wide margin.
    """
    async with Runtime(data_dir=tmp_path / "d", request_limit=1.0) as rt:
        warm, _ = await run(rt, "echo warm", tmp_path)
        assert warm.status == "COMPLETED"
        result, _ = await run(rt, "slow 2.5; echo still here", tmp_path)
    assert result.status == "COMPLETED", result.message
    assert result.text == "still here"


async def test_an_idle_bound_cancels_the_turn_and_names_the_bound(
    runtime: Runtime, tmp_path: Path
) -> None:
    await warm(runtime, tmp_path)
    result, _ = await run(runtime, "wait_for_cancel 0", tmp_path, idle_timeout=0.5)
    assert result.status == "INTERRUPTED"
    assert result.stop_reason == "cancelled"
    assert result.bound == "idle"
    assert result.exit_code == 3


async def test_an_absolute_bound_trips_a_streaming_turn(runtime: Runtime, tmp_path: Path) -> None:
    await warm(runtime, tmp_path)
    result, events = await run(runtime, "wait_for_cancel 20", tmp_path, idle_timeout=5, timeout=0.6)
    assert result.bound == "absolute"
    assert result.exit_code == 3
    assert "waiting for cancel" in texts(events)


async def test_a_user_interrupt_cancels_the_turn(runtime: Runtime, tmp_path: Path) -> None:
    turns: list[Turn] = []
    started = asyncio.Event()

    def on_turn(turn: Turn) -> None:
        turns.append(turn)
        started.set()

    async def interrupt_soon() -> None:
        await started.wait()
        await asyncio.sleep(0.3)
        turns[0].interrupt("user")

    task = asyncio.create_task(interrupt_soon())
    result, _ = await run(runtime, "wait_for_cancel 20", tmp_path, on_turn=on_turn)
    await task
    assert (result.status, result.exit_code) == ("INTERRUPTED", 130)


async def test_an_agent_that_ignores_cancel_becomes_recovery_required(
    runtime: Runtime, tmp_path: Path
) -> None:
    await warm(runtime, tmp_path)
    result, _ = await run(runtime, "ignore_cancel 20", tmp_path, timeout=0.5)
    assert result.status == "RECOVERY_REQUIRED"
    assert result.error_code == "INTERRUPT_DEADLINE_EXPIRED"
    assert result.exit_code == 6
    assert runtime.store is not None
    assert runtime.store.get_run(result.run_id).status == "RECOVERY_REQUIRED"


async def test_a_crash_mid_turn_is_recovery_required_never_replayed(
    runtime: Runtime, tmp_path: Path
) -> None:
    result, _ = await run(runtime, "echo before; crash 3", tmp_path)
    assert result.status == "RECOVERY_REQUIRED"
    assert result.exit_code == 6
    assert runtime.store is not None
    record = runtime.store.get_run(result.run_id)
    assert record.recovery_reason and "will not replay" in record.recovery_reason
    prompts = [
        r
        for server in runtime.store.list_server_instances()
        for r in Journal.in_data_dir(runtime.data_dir).records(server.id)
        if r.metadata.method == "session/prompt"
    ]
    assert len(prompts) == 1


async def test_512_deltas_are_512_journal_entries_and_one_item_write(
    runtime: Runtime, tmp_path: Path
) -> None:
    result, events = await run(runtime, "stream 512", tmp_path)
    assert result.status == "COMPLETED"
    assert runtime.store is not None
    items = runtime.store.list_items(result.run_id)
    text_items = [i for i in items if i.kind == "text"]
    assert len(text_items) == 1
    assert text_items[0].coalesced_events == 512
    assert text_items[0].content["text"].count("\n") == 512
    item_events = [e for e in events if e.type == "item" and e.data["kind"] == "text"]
    assert [e.data["coalescedEvents"] for e in item_events] == [512]
    server = runtime.store.get_run(result.run_id).server_instance_id
    assert server is not None
    chunks = [
        r
        for r in Journal.in_data_dir(runtime.data_dir).records(server)
        if r.metadata.method == "session/update" and "agent_message_chunk" in r.raw
    ]
    assert len(chunks) == 512


async def test_late_updates_are_attributed_to_the_session_not_the_next_run(
    runtime: Runtime, tmp_path: Path
) -> None:
    result, events = await run(runtime, "echo first; late_update a late word", tmp_path)
    assert result.status == "COMPLETED"
    assert "a late word" not in texts(events)


async def test_a_flood_of_stderr_never_blocks(runtime: Runtime, tmp_path: Path) -> None:
    result, _ = await run(runtime, "stderr_flood 2MiB; echo done", tmp_path)
    assert result.status == "COMPLETED"
    assert result.text == "done"


async def test_garbage_is_counted_on_the_run(runtime: Runtime, tmp_path: Path) -> None:
    result, _ = await run(runtime, "garbage 7; echo ok", tmp_path)
    assert result.status == "COMPLETED"
    assert result.skipped_frames == 7
    assert runtime.store is not None
    assert runtime.store.get_run(result.run_id).skipped_frames == 7


async def test_client_requests_for_fs_get_method_not_found(
    runtime: Runtime, tmp_path: Path
) -> None:
    result, events = await run(runtime, "client_request fs/read_text_file", tmp_path)
    assert "error -32601" in texts(events)
    assert result.status == "COMPLETED"


async def test_authentication_required_is_exit_4(runtime: Runtime, tmp_path: Path) -> None:
    result, _ = await run(runtime, "echo hi", tmp_path, flags=("--auth-required", "new"))
    assert result.error_code == "AUTHENTICATION_REQUIRED"
    assert result.exit_code == 4


async def test_settings_are_applied_with_the_adapters_spelling(
    runtime: Runtime, tmp_path: Path, protocol: str
) -> None:
    result, _ = await run(
        runtime,
        "echo hi",
        tmp_path,
        mode="plan",
        model="scripted-large[1m]",
        effort="MAX",
        config={"thinking": "true"},
    )
    assert result.status == "COMPLETED"
    assert runtime.store is not None
    observations = runtime.store.list_observations(session_id=result.session_id)
    kinds = [o.kind for o in observations]
    assert kinds[0] == "PROVIDER_REPORTED" and "BATON_RESOLUTION" in kinds
    resolved = next(o for o in observations if o.kind == "BATON_RESOLUTION").payload
    values = {o["id"]: o["currentValue"] for o in resolved["configOptions"]}
    assert values["effort"] == "max"
    assert values["model"] == "scripted-large[1m]"
    assert values["thinking"] is True
    if protocol == "v1":
        assert resolved["modes"]["currentModeId"] == "plan"
    else:
        # v2 has no modes object (nor session/set_mode): the mode is its config option.
        assert resolved["modes"] is None and values["mode"] == "plan"


async def test_an_effort_the_session_did_not_advertise_fails_listing_the_choices(
    runtime: Runtime, tmp_path: Path
) -> None:
    result, _ = await run(runtime, "echo hi", tmp_path, effort="galactic")
    assert result.status == "FAILED"
    assert result.error_code == "CHOICE_NOT_ADVERTISED"
    assert result.message is not None and "ultra" in result.message
    assert result.exit_code == 2


async def test_sessions_share_one_lane(runtime: Runtime, tmp_path: Path) -> None:
    first, _ = await run(runtime, "echo one", tmp_path)
    second, _ = await run(runtime, "echo two", tmp_path)
    assert first.status == second.status == "COMPLETED"
    assert len(runtime.lanes) == 1
    assert runtime.store is not None
    assert (
        runtime.store.get_run(first.run_id).server_instance_id
        == runtime.store.get_run(second.run_id).server_instance_id
    )


async def test_the_session_controls_are_projected_with_a_revision(
    runtime: Runtime, tmp_path: Path
) -> None:
    _, events = await run(runtime, "echo hi", tmp_path, effort="high")
    [controls] = [e for e in events if e.type == "controls"]
    by_id = {c["id"]: c for c in controls.data["controls"]}
    assert len(controls.data["revision"]) == 64
    assert by_id["config:effort"]["value"] == "high"
    assert by_id["config:thinking"]["type"] == "BOOLEAN"
    assert "ultra" in [choice["value"] for choice in by_id["config:effort"]["choices"]]


async def test_a_kept_sessions_controls_can_be_changed_with_their_revision(
    runtime: Runtime, tmp_path: Path
) -> None:
    from baton.errors import ControlChoiceNotAdvertised, ControlRevisionStale, ControlUnknown

    result, _ = await run(runtime, "echo hi", tmp_path, keep_session=True)
    assert result.session_id is not None
    controls = runtime.controls(result.session_id)
    with pytest.raises(ControlChoiceNotAdvertised):
        await runtime.apply_control(
            result.session_id, "config:effort", "galactic", controls.revision
        )
    with pytest.raises(ControlUnknown):
        await runtime.apply_control(result.session_id, "config:nope", "x", controls.revision)
    changed = await runtime.apply_control(
        result.session_id, "config:effort", "ultra", controls.revision
    )
    by_id = {c.id: c for c in changed.controls}
    assert by_id["config:effort"].value == "ultra"
    assert changed.revision != controls.revision
    with pytest.raises(ControlRevisionStale):
        await runtime.apply_control(result.session_id, "config:thinking", True, controls.revision)
    toggled = await runtime.apply_control(
        result.session_id, "config:thinking", True, changed.revision
    )
    assert {c.id: c for c in toggled.controls}["config:thinking"].value is True
    assert runtime.store is not None
    kinds = [o.kind for o in runtime.store.list_observations(session_id=result.session_id)]
    assert kinds.count("BATON_RESOLUTION") >= 2


async def test_controls_are_refused_while_a_run_is_active(runtime: Runtime, tmp_path: Path) -> None:
    from baton.errors import ControlBusy

    first, _ = await run(runtime, "echo hi", tmp_path, keep_session=True)
    assert first.session_id is not None
    [lane] = runtime.lanes.values()
    session = next(s for s in lane.sessions.values() if s.session_id == first.session_id)
    session.last_status = "RECOVERY_REQUIRED"
    controls = runtime.controls(first.session_id)
    with pytest.raises(ControlBusy):
        await runtime.apply_control(first.session_id, "config:effort", "ultra", controls.revision)


async def test_pending_output_is_published_while_the_agent_is_silent(
    runtime: Runtime, tmp_path: Path
) -> None:
    """Text is published at the 75 ms boundary even when no further delta arrives (an agent
    that says something and then works silently)."""
    turns: list[Turn] = []
    deltas_seen_when_published: list[int] = []

    def on_event(event: RunEvent) -> None:
        if event.type == "text" and "working" in event.data["text"]:
            deltas_seen_when_published.append(turns[0].buffer.stats.deltas)

    # The second echo lands within the same 75 ms as the first: only the boundary (not a
    # later delta) can publish it before the pause ends.
    request = RunRequest(
        prompt="echo first ; echo working on it ; slow 1.5; echo done",
        agent_command=AGENT,
        cwd=str(tmp_path),
    )
    result = await runtime.run(request, on_event=on_event, on_turn=turns.append)
    assert result.status == "COMPLETED"
    # Published during the pause: before the third delta ("done") arrived.
    assert deltas_seen_when_published == [2]


#: An agent that answers a prompt with two bursts of session/updates, each one write: the first
#: primes the journal's record bodies (its shapes are new, so it is journaled one by one), the
#: second (the same shapes) arrives in one read and is journaled, routed and buffered as one
#: batch, with a tool call update in its middle.
_BURST_AGENT = r"""
import json, sys, time
def update(u):
    return json.dumps({"jsonrpc": "2.0", "method": "session/update",
                       "params": {"sessionId": "s-1", "update": u}}) + "\n"
def text(t):
    return update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": t}})
call = {"sessionUpdate": "tool_call", "toolCallId": "call_1", "title": "Read", "kind": "read",
        "status": "pending"}
progress = {"sessionUpdate": "tool_call_update", "toolCallId": "call_1", "status": "in_progress"}
for raw in sys.stdin:
    msg = json.loads(raw)
    if "id" not in msg:
        continue
    method, result = msg["method"], {}
    if method == "initialize":
        result = {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}
    elif method == "session/new":
        result = {"sessionId": "s-1"}
    elif method == "session/prompt":
        sys.stdout.write(text("a1 ") + update(call) + text("a2 ") + update(progress) + text("a3 "))
        sys.stdout.flush()
        time.sleep(0.3)
        burst = text("b1 ") + text("b2 ") + update(progress) + text("b3 ") + text("b4 ")
        sys.stdout.write(burst + json.dumps({"jsonrpc": "2.0", "id": msg["id"],
                                             "result": {"stopReason": "end_turn"}}) + "\n")
        sys.stdout.flush()
        continue
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n")
    sys.stdout.flush()
"""


async def test_a_batch_with_a_tool_call_in_its_middle_keeps_the_order(
    runtime: Runtime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from baton.runtime.lanes.lane import Lane

    batches: list[int] = []
    route = Lane._route_updates

    def spy(self: Lane, generation: int, messages: Any, refs: Any) -> Any:
        batches.append(len(messages))
        return route(self, generation, messages, refs)

    monkeypatch.setattr(Lane, "_route_updates", spy)
    script = tmp_path / "burst_agent.py"
    script.write_text(_BURST_AGENT)
    events: list[RunEvent] = []
    request = RunRequest(
        prompt="go", agent_command=[sys.executable, str(script)], cwd=str(tmp_path)
    )
    result = await runtime.run(request, on_event=events.append)
    assert result.status == "COMPLETED", result
    assert 5 in batches, batches  # the second burst came as one batch of five updates
    order = [
        e.data["text"].strip() if e.type == "text" else e.data["status"]
        for e in events
        if e.type in ("text", "tool_call")
    ]
    flat = " ".join(order).split()
    assert flat == [
        "a1",
        "pending",
        "a2",
        "in_progress",
        "a3",
        "b1",
        "b2",
        "in_progress",
        "b3",
        "b4",
    ]
    tool_events = [e for e in events if e.type == "tool_call"]
    assert {e.data["title"] for e in tool_events} == {"Read"}  # merged by the tracker
    assert texts(events) == "a1 a2 a3 b1 b2 b3 b4 "


async def test_text_thought_text_keep_their_order_and_counts(
    runtime: Runtime, tmp_path: Path
) -> None:
    # Issue 16 item 10: only consecutive deltas merge; a part's events add up to its item.
    result, events = await run(runtime, "echo E1; think T1; echo E2", tmp_path)
    assert result.status == "COMPLETED", result
    output = [(e.type, e.data["text"]) for e in events if e.type in ("text", "thought")]
    assert output == [("text", "E1"), ("thought", "T1"), ("text", "E2")]
    for kind in ("text", "thought"):
        published = sum(e.data["coalescedEvents"] for e in events if e.type == kind)
        (item,) = [e for e in events if e.type == "item" and e.data["kind"] == kind]
        assert published == item.data["coalescedEvents"] > 0


def started(events: list[RunEvent]) -> dict[str, Any]:
    (event,) = [e for e in events if e.type == "run_started"]
    return event.data


async def test_the_default_idle_bound_applies_when_nothing_configures_one(
    runtime: Runtime, tmp_path: Path
) -> None:
    from baton.wire.budget import DEFAULT_IDLE_TIMEOUT_SECONDS

    result, events = await run(runtime, "echo hi", tmp_path)
    assert result.status == "COMPLETED"
    assert started(events)["idleTimeout"] == DEFAULT_IDLE_TIMEOUT_SECONDS == 600.0
    assert started(events)["idleTimeoutSource"] == "default"


async def test_a_silent_agent_ends_at_the_config_files_idle_bound(tmp_path: Path) -> None:
    # Issue 15 class 1: a silent agent under a configured idle bound ends with the documented
    # budget-expiry outcome (INTERRUPTED, bound idle, exit 3), not a hang.
    async with Runtime(data_dir=tmp_path / "d", idle_timeout=0.5, interrupt_timeout=2.0) as rt:
        # Warm without a bound: the start of a Python agent may outlast 0.5 s on a loaded
        # machine, and setup runs within a configured budget.
        warmed, _ = await run(rt, "echo warm", tmp_path, idle_timeout="off")
        assert warmed.status == "COMPLETED"
        result, events = await run(rt, "wait_for_cancel 0", tmp_path)
    assert (result.status, result.bound, result.exit_code) == ("INTERRUPTED", "idle", 3)
    assert result.error_code == "BUDGET_EXPIRED"
    assert (started(events)["idleTimeout"], started(events)["idleTimeoutSource"]) == (
        0.5,
        "config",
    )


async def test_an_idle_bound_that_ends_setup_is_named_like_a_turns(tmp_path: Path) -> None:
    # An agent that never answers initialize: the configured idle bound ends the run during
    # setup, and the result names that bound exactly as a turn's expiry does.
    async with Runtime(data_dir=tmp_path / "d", idle_timeout=0.3) as rt:
        request = RunRequest(
            prompt="hello", agent_command=["/bin/sh", "-c", "exec sleep 30"], cwd=str(tmp_path)
        )
        result = await rt.run(request)
    assert (result.error_code, result.bound, result.exit_code) == ("BUDGET_EXPIRED", "idle", 3)


async def test_the_runs_off_overrides_a_configured_idle_bound(tmp_path: Path) -> None:
    async with Runtime(data_dir=tmp_path / "d", idle_timeout=0.05) as rt:
        result, events = await run(rt, "slow 0.3; echo done", tmp_path, idle_timeout="off")
    assert result.status == "COMPLETED", result
    assert (started(events)["idleTimeout"], started(events)["idleTimeoutSource"]) == (None, "run")


async def test_an_invalid_idle_bound_is_refused_with_a_stable_code(
    runtime: Runtime, tmp_path: Path
) -> None:
    from baton.errors import ConfigurationError

    with pytest.raises(ConfigurationError) as caught:
        await run(runtime, "echo hi", tmp_path, idle_timeout=-1.0)
    assert caught.value.code == "TURN_BOUND_INVALID"


#: An agent whose plan entry, usage cost and tool call nest DEPTH levels (issue 15 class 4).
_DEEP_AGENT = r"""
import json, sys
sys.setrecursionlimit(20000)
DEPTH = int(sys.argv[1])
def nest(n):
    v = "leaf"
    for _ in range(n):
        v = {"k": v}
    return v
def update(u):
    return json.dumps({"jsonrpc": "2.0", "method": "session/update",
                       "params": {"sessionId": "s-1", "update": u}}) + "\n"
for raw in sys.stdin:
    msg = json.loads(raw)
    if "id" not in msg:
        continue
    method, result = msg["method"], {}
    if method == "initialize":
        result = {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}
    elif method == "session/new":
        result = {"sessionId": "s-1"}
    elif method == "session/prompt":
        sys.stdout.write(update({"sessionUpdate": "plan",
                                 "entries": [{"content": nest(DEPTH), "status": "pending"}]}))
        sys.stdout.write(update({"sessionUpdate": "usage_update", "used": 1, "size": 2,
                                 "cost": nest(DEPTH)}))
        sys.stdout.write(update({"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "t",
                                 "kind": nest(DEPTH), "status": "pending",
                                 "content": [{"type": "diff", "oldText": nest(3)}]}))
        result = {"stopReason": "end_turn"}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n")
    sys.stdout.flush()
"""


@pytest.mark.parametrize("depth", [252, 600])
async def test_deeply_nested_agent_data_is_bounded_and_the_turn_completes(
    tmp_path: Path, depth: int
) -> None:
    from baton.wire.bounded import MAX_PROJECTION_DEPTH, TRUNCATED_MARKER

    script = tmp_path / "deep_agent.py"
    script.write_text(_DEEP_AGENT)
    events: list[RunEvent] = []
    request = RunRequest(
        prompt="go", agent_command=[sys.executable, str(script), str(depth)], cwd=str(tmp_path)
    )
    async with Runtime(data_dir=tmp_path / "d") as rt:
        result = await rt.run(request, on_event=events.append)
        lines = [event.to_json() for event in events]  # every event encodes
    assert (result.status, result.exit_code) == ("COMPLETED", 0), result
    assert events[-1].type == "result"
    kinds = {e.type: e for e in events}
    for kind in ("plan", "tool_call"):
        assert TRUNCATED_MARKER in kinds[kind].to_json().decode(), kind
    # Usage is parsed into its schema fields (issue 20): a cost nested DEPTH levels is not a
    # Cost, so it is not carried at all; used and size are.
    assert kinds["usage"].data == {"used": 1, "size": 2}
    assert all(line.count(b"{") <= MAX_PROJECTION_DEPTH + 8 for line in lines)
    # Reopened later, the completed turn stays completed (not RECOVERY_REQUIRED).
    async with Runtime(data_dir=tmp_path / "d") as rt:
        assert rt.store is not None
        record = rt.store.get_run(result.run_id)
        assert record.status == "COMPLETED"
        stored = {item.kind: item.content for item in rt.store.list_items(result.run_id)}
    assert {"plan", "usage", "tool_call"} <= set(stored)
    assert TRUNCATED_MARKER in str(stored["plan"])


# --- cancellation safety of Runtime.run, Runtime.events and Runtime.apply_control -----------


async def test_cancelling_run_mid_turn_is_recovery_required_and_the_lane_stays_usable(
    runtime: Runtime, tmp_path: Path
) -> None:
    streaming = asyncio.Event()
    events: list[RunEvent] = []

    def on_event(event: RunEvent) -> None:
        events.append(event)
        if event.type == "text":
            streaming.set()

    request = RunRequest(prompt="wait_for_cancel 50", agent_command=AGENT, cwd=str(tmp_path))
    task = asyncio.ensure_future(runtime.run(request, on_event=on_event))
    await streaming.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert runtime.store is not None
    record = runtime.store.get_run(events[0].run_id)
    assert (record.status, record.error_code) == ("RECOVERY_REQUIRED", "CALLER_CANCELLED")
    assert "cancelled the run with the prompt outstanding" in (record.recovery_reason or "")
    assert "text" in [item.kind for item in runtime.store.list_items(record.id)]
    again, _ = await run(runtime, "echo again", tmp_path)
    assert (again.status, again.text) == ("COMPLETED", "again")


async def test_cancelling_run_during_setup_interrupts_it_and_sends_no_prompt(
    runtime: Runtime, tmp_path: Path
) -> None:
    started = asyncio.Event()
    events: list[RunEvent] = []

    def on_event(event: RunEvent) -> None:
        events.append(event)
        if event.type == "run_started":
            started.set()

    slow_start = ["/bin/sh", "-c", f"sleep 30; exec {sys.executable} -m baton.agents.scripted"]
    request = RunRequest(prompt="echo hi", agent_command=slow_start, cwd=str(tmp_path))
    task = asyncio.ensure_future(runtime.run(request, on_event=on_event))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert runtime.store is not None
    record = runtime.store.get_run(events[0].run_id)
    assert (record.status, record.error_code) == ("INTERRUPTED", "CALLER_CANCELLED")
    assert record.prompt_ref is None


async def test_closing_the_event_iterator_early_cancels_the_run(
    runtime: Runtime, tmp_path: Path
) -> None:
    request = RunRequest(prompt="wait_for_cancel 50", agent_command=AGENT, cwd=str(tmp_path))
    iterator = runtime.events(request)
    run_id = ""
    async for event in iterator:
        run_id = event.run_id
        if event.type == "text":
            break
    await iterator.aclose()  # type: ignore[attr-defined]
    assert runtime.store is not None
    assert runtime.store.get_run(run_id).status == "RECOVERY_REQUIRED"


#: An agent whose session has two modes and that never answers session/set_mode.
_STUCK_MODE_AGENT = r"""
import json, sys
modes = {"currentModeId": "a", "availableModes": [{"id": "a", "name": "A"},
                                                   {"id": "b", "name": "B"}]}
for raw in sys.stdin:
    msg = json.loads(raw)
    if "id" not in msg:
        continue
    method = msg["method"]
    if method == "session/set_mode":
        continue
    result = {}
    if method == "initialize":
        result = {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}
    elif method == "session/new":
        result = {"sessionId": "s-1", "modes": modes}
    elif method == "session/prompt":
        result = {"stopReason": "end_turn"}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n")
    sys.stdout.flush()
"""


async def test_cancelling_apply_control_in_flight_quarantines_the_lane(
    runtime: Runtime, tmp_path: Path
) -> None:
    script = tmp_path / "stuck_mode_agent.py"
    script.write_text(_STUCK_MODE_AGENT)
    request = RunRequest(
        prompt="go",
        agent_command=[sys.executable, str(script)],
        cwd=str(tmp_path),
        keep_session=True,
    )
    result = await runtime.run(request)
    assert result.status == "COMPLETED" and result.session_id is not None
    (lane,) = runtime.lanes.values()
    generation = lane.generation
    controls = runtime.controls(result.session_id)
    change = asyncio.ensure_future(
        runtime.apply_control(result.session_id, "mode", "b", controls.revision)
    )
    await asyncio.sleep(0.2)  # the change is sent (or not yet: the outcome is the same)
    change.cancel()
    with pytest.raises(asyncio.CancelledError):
        await change
    assert lane.generation != generation, "the generation with the unknown change is gone"
