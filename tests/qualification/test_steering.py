"""Issue 29: a real steering answer from the newest claude-agent-acp and codex-acp.

The mock model holds the turn open (``[[slow:SECONDS]]`` streams a chunk every quarter
second), as the subagent captures did with their scripted turns; while the first text has
arrived and the stream still runs, Baton steers the turn through the library
(``Conversations.steer``: the profile's ``acp-steering/session-steering@v1`` extension,
``_session/steering`` with ``idleBehavior: promptRequired``) and the adapter's answer is
checked and, with ``BATON_QUALIFY_RECORD=1``, saved as the fixture
``tests/fixtures/adapters/<adapter>-<version>/steering.jsonl`` (the request and its answer, as
journaled, redacted; tests/connection/test_steering_fixtures.py replays it). The turn then ends
normally: steering is never a cancel.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any, Final

import pytest
from qualify_drivers import ClaudeSpec, CodexSpec, Rig, reap
from qualify_installs import CLAUDE_NEWEST, CODEX_NEWEST, Pin
from qualify_mocks import MockServer

from baton.journal import Journal
from baton.runtime.conversations import Conversations, NewConversation, SteerResult
from baton.runtime.runtime import RunResult, Runtime
from baton.runtime.turns.events import RunEvent
from baton.wire.extensions import steering

FIXTURES: Final = Path(__file__).parents[1] / "fixtures" / "adapters"
#: A turn the mock keeps streaming for this long (seconds), then ends with a text.
PROMPT: Final = "[[slow:8]][[text:the steered turn is done]]"
STEER_TEXT: Final = "Also mention the word pineapple."
#: Seconds to wait for the first streamed text, and for the turn's end.
FIRST_TEXT_SECONDS: Final = 90.0
TURN_SECONDS: Final = 180.0
#: What replaces the rig's temporary root in the fixture.
ROOT_PLACEHOLDER: Final = "/capture"


class NewestClaude(ClaudeSpec):
    """The newest claude-agent-acp with the pinned one's mock environment."""

    pin = CLAUDE_NEWEST


class NewestCodex(CodexSpec):
    """The newest codex-acp with the pinned one's mock provider."""

    pin = CODEX_NEWEST


async def _steered_turn(rig: Rig) -> tuple[SteerResult, RunResult]:
    """One slow turn of a new session, steered once its first text arrived."""
    runtime = Runtime(data_dir=rig.data, environ=dict(rig.env), interrupt_timeout=5.0)
    await runtime.open()
    try:
        conversations = Conversations(runtime)
        await conversations.create(
            NewConversation(name="steer", agent=rig.profile, cwd=str(rig.work))
        )
        streaming = asyncio.Event()

        def emit(event: RunEvent) -> None:
            if event.type == "text":
                streaming.set()

        turn = asyncio.create_task(conversations.prompt("steer", PROMPT, on_event=emit))
        await asyncio.wait_for(streaming.wait(), FIRST_TEXT_SECONDS)
        answer = await conversations.steer("steer", STEER_TEXT)
        result = await asyncio.wait_for(turn, TURN_SECONDS)
    finally:
        await runtime.close()
    return answer, result


def _steering_frames(data_dir: Path) -> list[dict[str, Any]]:
    """The ``_session/steering`` request and its answer, as journaled (redacted)."""
    journal = Journal.in_data_dir(data_dir)
    frames: list[dict[str, Any]] = []
    request_id: object = None
    for server in journal.servers():
        for record in journal.records(server):
            message = record.message()
            if not isinstance(message, dict):
                continue
            if record.direction == "outbound" and message.get("method") == steering.METHOD:
                request_id = message.get("id")
                frames.append({"direction": "outbound", "message": message})
            elif (
                record.direction == "inbound"
                and request_id is not None
                and message.get("id") == request_id
                and "method" not in message
            ):
                frames.append({"direction": "inbound", "message": message})
    return frames


def _fixture_text(frames: list[dict[str, Any]], root: Path) -> str:
    lines = [json.dumps(frame, sort_keys=True) for frame in frames]
    return "".join(line.replace(str(root), ROOT_PLACEHOLDER) + "\n" for line in lines)


def _steer(pin: Pin, rig: Rig, mock: MockServer) -> None:
    try:
        answer, result = asyncio.run(_steered_turn(rig))
    finally:
        reap(pin, rig.home)
    frames = _steering_frames(rig.data)
    assert [f["direction"] for f in frames] == ["outbound", "inbound"], frames
    request, response = (f["message"] for f in frames)
    assert request["params"]["_meta"] == {"steering": {"idleBehavior": "promptRequired"}}
    assert "result" in response, response
    assert answer.outcome == response["result"]["outcome"], (answer, response)
    # The text reached the running turn, and the turn ended as a turn, not as a cancel.
    assert answer.outcome == steering.INJECTED, (answer, response)
    assert result.status == "COMPLETED" and result.stop_reason == "end_turn", result
    bodies = [json.dumps(r.body) for r in mock.posts()]
    assert any("pineapple" in body for body in bodies), "the steered text never reached the model"
    fixture = FIXTURES / pin.key / "steering.jsonl"
    if os.environ.get("BATON_QUALIFY_RECORD") == "1":
        fixture.write_text(_fixture_text(frames, rig.root))
    recorded = [json.loads(line) for line in fixture.read_text().splitlines()]
    assert recorded[1]["message"]["result"]["outcome"] == response["result"]["outcome"]


@pytest.mark.qualify(
    CLAUDE_NEWEST.key,
    "steering: a running turn steered (_session/steering answered injected; the model saw it)",
)
def test_newest_claude_steers_a_running_turn(tmp_path: Path, mocks: dict[str, MockServer]) -> None:
    mock = mocks["anthropic"]
    mock.clear()
    rig = NewestClaude().rig(tmp_path / "claude-newest", mock.url)
    _steer(CLAUDE_NEWEST, rig, mock)


@pytest.mark.qualify(
    CODEX_NEWEST.key,
    "steering: a running turn steered (_session/steering answered injected; the model saw it)",
)
def test_newest_codex_steers_a_running_turn(tmp_path: Path, mocks: dict[str, MockServer]) -> None:
    mock = mocks["responses"]
    mock.clear()
    rig = NewestCodex().rig(tmp_path / "codex-newest", mock.url)
    _steer(CODEX_NEWEST, rig, mock)
