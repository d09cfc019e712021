"""A small ACP v2 agent built on the official Python SDK (agent-client-protocol 1.0.0rc3,
``acp.experimental.v2``), for Baton's interop tests. Run it with the SDK's own interpreter:
``python py_sdk_agent.py``; it serves stdio until EOF.

Prompts are keywords: ``text`` (a reply in two chunks), ``diff`` (a tool call created by its
first update, a diff appended as a content chunk, then completed), ``permission`` (a tool call
and a permission request whose answer is reported as text), ``wait`` (ticks until
session/cancel, then ``cancelled``). Sessions keep their history in ``.sdk-agent/`` under the
session's cwd, so another process can resume them; a resume with ``replayFrom`` replays it.
Every turn is acknowledged at once and ends with ``state_update`` ``idle``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from pathlib import Path
from typing import Any

from acp.experimental.v2 import run_agent

#: The text the ``text`` keyword replies with, in two chunks.
REPLY = ("Hello from the ", "Python SDK agent.")


def _store(cwd: str) -> Path:
    path = Path(cwd) / ".sdk-agent"
    path.mkdir(exist_ok=True)
    return path


class SdkAgent:
    """The agent: its handlers are the SDK's ``Agent`` protocol methods."""

    def __init__(self) -> None:
        self.conn: Any = None
        self.cwd: dict[str, str] = {}
        self.cancelled: dict[str, asyncio.Event] = {}
        self.tasks: set[asyncio.Task[None]] = set()

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(
        self, protocol_version: int, info: Any, capabilities: Any = None, **_: Any
    ) -> Any:
        return {
            "protocolVersion": 2,
            "info": {"name": "py-sdk-agent", "version": "1.0.0rc3"},
            "capabilities": {"session": {"mcp": {"stdio": {}}}},
        }

    async def new_session(self, cwd: str, **_: Any) -> Any:
        session_id = f"py-{uuid.uuid4().hex[:12]}"
        self.cwd[session_id] = cwd
        self._save(session_id, [])
        return {"sessionId": session_id}

    async def resume_session(
        self, session_id: str, cwd: str, replay_from: Any = None, **_: Any
    ) -> Any:
        self.cwd[session_id] = cwd
        if replay_from is not None:
            for update in self._load(session_id):
                await self._send(session_id, update, record=False)
        await self._send(
            session_id, {"sessionUpdate": "state_update", "state": "idle"}, record=False
        )
        return {}

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> Any:
        text = " ".join(getattr(block, "text", "") for block in prompt).strip()
        message_id = f"user-{uuid.uuid4().hex[:8]}"
        self.cancelled[session_id] = asyncio.Event()
        task = asyncio.get_running_loop().create_task(self._turn(session_id, message_id, text))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return {"messageId": message_id}

    async def cancel_session(self, session_id: str, **_: Any) -> None:
        event = self.cancelled.get(session_id)
        if event is not None:
            event.set()

    # --- the turn ----------------------------------------------------------------------------

    async def _turn(self, session_id: str, message_id: str, text: str) -> None:
        await self._send(
            session_id,
            {
                "sessionUpdate": "user_message",
                "messageId": message_id,
                "content": [{"type": "text", "text": text}],
            },
        )
        await self._send(
            session_id, {"sessionUpdate": "state_update", "state": "running"}, record=False
        )
        reason = "end_turn"
        agent_id = f"agent-{uuid.uuid4().hex[:8]}"
        if text == "text":
            for part in REPLY:
                await self._chunk(session_id, agent_id, part)
        elif text == "diff":
            await self._diff(session_id)
            await self._chunk(session_id, agent_id, "edited a.txt")
        elif text == "permission":
            outcome = await self._permission(session_id)
            await self._chunk(session_id, agent_id, f"permission: {outcome}")
        elif text == "wait":
            reason = await self._wait(session_id, agent_id)
        else:
            await self._chunk(session_id, agent_id, f"unknown keyword {text!r}")
        await self._send(
            session_id,
            {"sessionUpdate": "state_update", "state": "idle", "stopReason": reason},
            record=False,
        )

    async def _chunk(self, session_id: str, message_id: str, text: str) -> None:
        await self._send(
            session_id,
            {
                "sessionUpdate": "agent_message_chunk",
                "messageId": message_id,
                "content": {"type": "text", "text": text},
            },
        )

    async def _diff(self, session_id: str) -> None:
        path = str(Path(self.cwd[session_id]) / "a.txt")
        await self._send(
            session_id,
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "edit-1",
                "title": "Edit a.txt",
                "kind": "edit",
                "status": "in_progress",
                "locations": [{"path": path}],
            },
        )
        patch = "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1,2 @@\n-old\n+new\n+more\n"
        await self._send(
            session_id,
            {
                "sessionUpdate": "tool_call_content_chunk",
                "toolCallId": "edit-1",
                "content": {
                    "type": "diff",
                    "changes": [{"operation": "modify", "path": path}],
                    "patch": {"format": "git_patch", "text": patch},
                },
            },
        )
        await self._send(
            session_id,
            {"sessionUpdate": "tool_call_update", "toolCallId": "edit-1", "status": "completed"},
        )

    async def _permission(self, session_id: str) -> str:
        path = str(Path(self.cwd[session_id]) / "b.txt")
        tool_call = {
            "toolCallId": "write-1",
            "title": "Write b.txt",
            "kind": "edit",
            "locations": [{"path": path}],
        }
        await self._send(session_id, {"sessionUpdate": "tool_call_update", **tool_call})
        await self._send(
            session_id, {"sessionUpdate": "state_update", "state": "requires_action"}, record=False
        )
        response = await self.conn.request_permission(
            session_id=session_id,
            title="Write b.txt?",
            subject={"type": "tool_call", "toolCall": {"toolCallId": "write-1"}},
            options=[
                {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
                {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
            ],
        )
        await self._send(
            session_id, {"sessionUpdate": "state_update", "state": "running"}, record=False
        )
        outcome = response.outcome
        option = getattr(outcome, "option_id", None)
        return f"selected {option}" if option is not None else "cancelled"

    async def _wait(self, session_id: str, message_id: str) -> str:
        event = self.cancelled[session_id]
        tick = 0
        while not event.is_set():
            tick += 1
            await self._chunk(session_id, message_id, f"tick {tick}\n")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), 0.05)
        return "cancelled"

    # --- wire and history --------------------------------------------------------------------

    async def _send(self, session_id: str, update: dict[str, Any], *, record: bool = True) -> None:
        await self.conn.session_update(session_id=session_id, update=update)
        if record:
            history = self._load(session_id)
            history.append(update)
            self._save(session_id, history)

    def _file(self, session_id: str) -> Path:
        return _store(self.cwd[session_id]) / f"{session_id}.json"

    def _load(self, session_id: str) -> list[dict[str, Any]]:
        file = self._file(session_id)
        return json.loads(file.read_text()) if file.exists() else []

    def _save(self, session_id: str, history: list[dict[str, Any]]) -> None:
        self._file(session_id).write_text(json.dumps(history))


if __name__ == "__main__":
    asyncio.run(run_agent(SdkAgent()))
