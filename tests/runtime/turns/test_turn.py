"""The turn as a unit: built over a real connection on in-memory pipes, with the agent's side
written by the test, a stand-in lane and recorder, and no subprocess. Covers the phase
sequence of each ending and the interrupt that races the agent's answer, and a real
claude-agent-acp subagent capture replayed through the connection (the parent link)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest

from baton.connection import Connection, memory_pipe
from baton.connection.client import AcpClient
from baton.connection.streams import MemoryReader, MemoryWriter
from baton.errors import BatonError, StoreUnavailable, TransportClosed
from baton.redaction import SecretValues
from baton.runtime.lanes.lane import LaneSession
from baton.runtime.lanes.loss import LossCause, cause_of
from baton.runtime.permissions.ask import NoUserAsker
from baton.runtime.permissions.correlation import TOOL_CALL_UPDATES, ToolCallTracker
from baton.runtime.permissions.engine import PermissionSettings
from baton.runtime.permissions.local_policy import LocalContext
from baton.runtime.turns.events import RunEvent
from baton.runtime.turns.outcome import TurnOutcome
from baton.runtime.turns.phase import TurnPhase
from baton.runtime.turns.streaming import StreamMemory
from baton.runtime.turns.turn import Turn
from baton.wire.extensions import claude as claude_extension
from baton.wire.framing import FrameDecoder

SESSION = "session-1"


class Agent:
    """The agent's side of the pipes: reads what Baton sent, writes what the test says."""

    def __init__(self, reader: MemoryReader, writer: MemoryWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.decoder = FrameDecoder(1024 * 1024)
        self.pending: list[bytes] = []

    def send(self, message: dict[str, Any]) -> None:
        self.writer.write(orjson.dumps({"jsonrpc": "2.0", **message}) + b"\n")

    async def recv(self) -> dict[str, Any]:
        while not self.pending:
            chunk = await self.reader.read(65536)
            assert chunk, "Baton closed its side"
            self.pending.extend(line for line in self.decoder.feed(chunk) if line)
        message: dict[str, Any] = orjson.loads(self.pending.pop(0))
        return message

    async def answer(self, method: str, result: Any) -> dict[str, Any]:
        request = await self.recv()
        assert request["method"] == method, request
        self.send({"id": request["id"], "result": result})
        return request


@dataclass
class Spec:
    terminal_failure_text: str | None = None
    extensions: frozenset[str] = frozenset()


@dataclass
class StandInLane:
    """What a turn uses of its lane: generation, secrets, redaction and quarantine."""

    generation: int = 1
    secrets: SecretValues = field(default_factory=lambda: SecretValues([]))
    spec: Spec = field(default_factory=Spec)
    quarantined: list[str] = field(default_factory=list)
    turn: Turn | None = None

    def redact(self, text: str) -> str:
        return text

    async def quarantine(self, reason: str | LossCause, generation: int | None = None) -> None:
        text = reason if isinstance(reason, str) else reason.describe()
        self.quarantined.append(text)
        if self.turn is not None:
            self.turn.on_lost(TransportClosed(text))

    async def loss_cause(self, error: BaseException | None) -> LossCause:
        return cause_of(error)


@dataclass
class StandInRecorder:
    """Keeps what the turn records; ``on_status`` runs as a status is recorded."""

    statuses: list[str] = field(default_factory=list)
    submitted: list[object] = field(default_factory=list)
    items_written: list[Any] = field(default_factory=list)
    on_status: Any = None
    #: Item appends that fail as a shared store's outage would (the first ones commit first).
    items_cut: int = 0
    items_after: list[int | None] = field(default_factory=list)
    #: Each count of open questions written (runtime/turns/questions.py).
    questions: list[int] = field(default_factory=list)

    async def prompt_submitted(self, run_id: str, prompt_ref: object) -> None:
        self.submitted.append(prompt_ref)

    async def run_status(self, run_id: str, status: str, **fields: Any) -> None:
        self.statuses.append(status)
        if self.on_status is not None:
            await self.on_status(status)

    async def interaction(self, *args: Any) -> None:
        return None

    async def pending_questions(self, run_id: str, count: int) -> None:
        self.questions.append(count)

    def items(self, run_id: str, items: Any, *, after: int | None = None) -> None:
        self.items_after.append(after)
        present = len(self.items_written) - (after or 0)
        self.items_written.extend(items[present:])  # as the store: what is there is skipped
        if self.items_cut:
            self.items_cut -= 1
            raise StoreUnavailable("the connection was lost inside a transaction")

    async def items_off_loop(self, run_id: str, items: Any, *, after: int | None = None) -> None:
        self.items(run_id, items, after=after)


@dataclass
class Rig:
    connection: Connection
    client: AcpClient
    agent: Agent
    lane: StandInLane
    recorder: StandInRecorder
    events: list[RunEvent]

    def turn(self, *, interrupt_timeout: float = 5.0) -> Turn:
        session = LaneSession(
            session_id="ses-1",
            provider_id=SESSION,
            cwd="/tmp",
            tracker=ToolCallTracker(SESSION),
        )
        turn = Turn(
            run_id="run-1",
            lane=self.lane,  # type: ignore[arg-type]
            session=session,
            client=self.client,
            recorder=self.recorder,  # type: ignore[arg-type]
            permissions=PermissionSettings(
                policy="ask",
                allow_remembered=False,
                context=LocalContext(worktree="/tmp", network_allowed=False),
            ),
            asker=NoUserAsker(),
            clock=None,
            memory=StreamMemory(),
            emit=self.events.append,
            interrupt_timeout=interrupt_timeout,
        )
        self.lane.turn = turn
        return turn


@pytest.fixture
async def rig() -> AsyncIterator[Rig]:
    to_agent_r, to_agent_w = memory_pipe()
    to_client_r, to_client_w = memory_pipe()
    connection = Connection(to_client_r, to_agent_w)
    connection.start()
    agent = Agent(to_agent_r, to_client_w)
    client = AcpClient(connection)
    initialized = asyncio.ensure_future(client.initialize())
    await agent.answer("initialize", {"protocolVersion": 1, "agentCapabilities": {}})
    await initialized
    opened = asyncio.ensure_future(client.new_session("/tmp"))
    await agent.answer("session/new", {"sessionId": SESSION})
    await opened
    yield Rig(connection, client, agent, StandInLane(), StandInRecorder(), [])
    await connection.close()


PROMPT = [{"type": "text", "text": "hi"}]


async def run_turn(turn: Turn) -> asyncio.Future[TurnOutcome]:
    return asyncio.ensure_future(turn.execute(PROMPT))


async def test_a_completed_turn_goes_through_submitting_and_streaming(rig: Rig) -> None:
    turn = rig.turn()
    assert turn.phase is TurnPhase.CREATED
    running = await run_turn(turn)
    request = await rig.agent.recv()
    assert request["method"] == "session/prompt"
    turn.on_updates(
        [{"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi "}}]
    )
    rig.agent.send({"id": request["id"], "result": {"stopReason": "end_turn"}})
    outcome = await running
    assert outcome.status == "COMPLETED" and outcome.text == "hi "
    assert turn.phases.history == [
        TurnPhase.CREATED,
        TurnPhase.SUBMITTING,
        TurnPhase.STREAMING,
        TurnPhase.FINISHING,
        TurnPhase.FINISHED,
    ]
    assert [item.kind for item in rig.recorder.items_written] == ["text"]
    assert rig.recorder.submitted, "the submission was recorded"


async def test_output_cut_off_by_a_store_outage_is_written_once_when_it_is_back(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    from baton.store import outage

    monkeypatch.setattr(outage, "OUTAGE_PAUSE_SECONDS", 0.0)
    rig.recorder.items_cut = 2  # the first two tries commit, then lose their connection
    turn = rig.turn()
    running = await run_turn(turn)
    request = await rig.agent.recv()
    turn.on_updates(
        [{"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}]
    )
    rig.agent.send({"id": request["id"], "result": {"stopReason": "end_turn"}})
    outcome = await running
    assert (outcome.status, outcome.error_code) == ("COMPLETED", None)
    assert [item.kind for item in rig.recorder.items_written] == ["text"]  # not doubled
    assert rig.recorder.items_after == [0, 0, 0]  # each try named what the run held before
    assert not rig.lane.quarantined


async def test_an_interrupt_sends_cancel_and_the_cancelled_answer_interrupts(rig: Rig) -> None:
    turn = rig.turn()
    running = await run_turn(turn)
    request = await rig.agent.recv()
    turn.interrupt("user")
    cancel = await rig.agent.recv()
    assert cancel["method"] == "session/cancel"
    rig.agent.send({"id": request["id"], "result": {"stopReason": "cancelled"}})
    outcome = await running
    assert (outcome.status, outcome.interrupted_by) == ("INTERRUPTED", "user")
    assert TurnPhase.CANCELLING in turn.phases.history
    assert rig.recorder.statuses == ["INTERRUPTING"]


async def test_an_interrupt_as_the_agent_answers_reads_the_answer_once(rig: Rig) -> None:
    # The known bug: the prompt's first wait took the answer while session/cancel was being
    # sent, and a second wait on the same request failed "request N is not pending".
    turn = rig.turn()
    running = await run_turn(turn)
    request = await rig.agent.recv()

    async def answer_now(status: str) -> None:
        rig.agent.send({"id": request["id"], "result": {"stopReason": "end_turn"}})
        for _ in range(20):  # let the connection read the answer and the first wait take it
            await asyncio.sleep(0)

    rig.recorder.on_status = answer_now
    turn.interrupt("user")
    outcome = await running
    assert outcome.status == "COMPLETED", outcome
    assert outcome.error_code is None
    assert turn.phase is TurnPhase.FINISHED


async def test_an_interrupt_with_no_answer_in_time_is_recovery_required(rig: Rig) -> None:
    turn = rig.turn(interrupt_timeout=0.05)
    running = await run_turn(turn)
    await rig.agent.recv()
    turn.interrupt("user")
    assert (await rig.agent.recv())["method"] == "session/cancel"
    outcome = await running
    assert (outcome.status, outcome.error_code) == (
        "RECOVERY_REQUIRED",
        "INTERRUPT_DEADLINE_EXPIRED",
    )
    assert rig.lane.quarantined == ["the interrupt deadline expired"]
    # A v1 session is not told about v2's idle state.
    assert outcome.recovery_reason is not None
    assert outcome.recovery_reason.startswith("session/cancel got no prompt answer within")
    assert "v2" not in outcome.recovery_reason


async def test_a_loss_mid_turn_is_ambiguous_and_later_losses_change_nothing(rig: Rig) -> None:
    turn = rig.turn()
    running = await run_turn(turn)
    await rig.agent.recv()
    turn.on_lost(TransportClosed("the agent exited"))
    assert turn.phase is TurnPhase.LOST
    outcome = await running
    assert (outcome.status, outcome.error_code) == ("RECOVERY_REQUIRED", "AGENT_MUTATION_AMBIGUOUS")
    assert turn.phases.history[-3:] == [TurnPhase.LOST, TurnPhase.FINISHING, TurnPhase.FINISHED]
    turn.on_lost(TransportClosed("again"))
    assert turn.phase is TurnPhase.FINISHED


async def test_a_loss_before_submission_sends_nothing_and_fails(rig: Rig) -> None:
    turn = rig.turn()
    turn.on_lost(TransportClosed("gone before the prompt"))
    outcome = await turn.execute(PROMPT)
    assert (outcome.status, outcome.error_code) == ("FAILED", "TRANSPORT_CLOSED")
    assert turn.phases.history == [
        TurnPhase.CREATED,
        TurnPhase.LOST,
        TurnPhase.FINISHING,
        TurnPhase.FINISHED,
    ]
    assert rig.recorder.submitted == []


async def test_updates_after_the_turn_are_not_the_turns(rig: Rig) -> None:
    turn = rig.turn()
    running = await run_turn(turn)
    request = await rig.agent.recv()
    rig.agent.send({"id": request["id"], "result": {"stopReason": "end_turn"}})
    await running
    turn.on_updates(
        [{"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "late"}}]
    )
    assert not [e for e in rig.events if e.type == "text"]


async def test_a_turn_runs_once(rig: Rig) -> None:
    turn = rig.turn()
    running = await run_turn(turn)
    request = await rig.agent.recv()
    rig.agent.send({"id": request["id"], "result": {"stopReason": "end_turn"}})
    await running
    with pytest.raises(BatonError) as raised:
        await turn.execute(PROMPT)
    assert raised.value.code == "TURN_PHASE_INVALID"


#: The real claude-agent-acp 0.101.0's journal of a prompt whose subagent made a nested tool
#: call (recorded against the qualification mock model; tests/qualification/
#: test_claude_subagent.py, the fixture's README says how).
SUBAGENT_CAPTURE = (
    Path(__file__).parents[2]
    / "fixtures"
    / "adapters"
    / "claude-agent-acp-0.101.0"
    / "subagent.jsonl"
)


async def test_a_real_subagent_capture_records_the_parent_link(rig: Rig) -> None:
    records = [json.loads(line) for line in SUBAGENT_CAPTURE.read_text().splitlines()]
    raws = [str(r["raw"]) for r in records if r["direction"] == "inbound"]
    *updates, answer = raws
    rig.lane.spec = Spec(extensions=frozenset({claude_extension.EXTENSION}))
    turn = rig.turn()

    def route(message: dict[str, Any], _ref: object) -> None:
        # What the lane does with an owned session's update (v1: no decoding).
        update = message["params"]["update"]
        if update.get("sessionUpdate") in TOOL_CALL_UPDATES:
            turn.session.tracker.observe(update)
        turn.on_updates([update])

    rig.connection.on_notification("session/update", route)
    running = await run_turn(turn)
    request = await rig.agent.recv()
    assert request["method"] == "session/prompt"
    # The agent's side is the capture, byte for byte, through Baton's framing and JSON-RPC
    # decoding; only the prompt answer's id is the one this connection sent.
    for raw in updates:
        rig.agent.writer.write(raw.encode() + b"\n")
    rig.agent.send({"id": request["id"], "result": json.loads(answer)["result"]})
    outcome = await running
    assert outcome.status == "COMPLETED" and outcome.stop_reason == "end_turn"

    calls = [e.data for e in rig.events if e.type == "tool_call"]
    agent_ids = {c["toolCallId"] for c in calls if c.get("name") == "Agent"}
    nested = [c for c in calls if c.get("name") == "Bash"]
    assert len(agent_ids) == 1 and nested, calls
    (agent_id,) = agent_ids
    assert {c["toolCallId"] for c in nested} == set(turn.projection.tool_parents)
    assert set(turn.projection.tool_parents.values()) == {agent_id}
    assert all(c["parentToolCallId"] == agent_id for c in nested), nested
    assert not any("parentToolCallId" in c for c in calls if c["toolCallId"] == agent_id)
    assert nested[-1]["status"] == "completed"
    items = [i.content for i in rig.recorder.items_written if i.kind == "tool_call"]
    assert [i.get("parentToolCallId") for i in items if i.get("name") == "Bash"] == [agent_id]
    # The capture carries usage: usage_update (context window, cost) and the answer's tokens.
    usage = [e.data for e in rig.events if e.type == "usage"]
    assert usage and usage[-1]["used"] == 32 and usage[-1]["size"] == 1000000, usage
    assert outcome.usage is not None and outcome.usage["turn"]["totalTokens"] == 64


async def test_the_subagent_capture_without_the_claude_contract_links_nothing(rig: Rig) -> None:
    records = [json.loads(line) for line in SUBAGENT_CAPTURE.read_text().splitlines()]
    updates = [
        json.loads(str(r["raw"]))["params"]["update"]
        for r in records
        if r["direction"] == "inbound" and '"session/update"' in str(r["raw"])
    ]
    turn = rig.turn()  # a profile without claude-agent-acp/subagent-parent@v1
    running = await run_turn(turn)
    request = await rig.agent.recv()
    turn.on_updates(updates)
    rig.agent.send({"id": request["id"], "result": {"stopReason": "end_turn"}})
    await running
    calls = [e.data for e in rig.events if e.type == "tool_call"]
    assert any(c.get("name") == "Bash" for c in calls)
    assert not turn.projection.tool_parents and not any("parentToolCallId" in c for c in calls)
