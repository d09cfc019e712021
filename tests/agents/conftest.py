"""The scripted agent as a real subprocess, driven through Baton's Connection over OS pipes.

``spawn(*flags)`` starts ``python -m baton.agents.scripted`` in the test's tmp dir and returns an
:class:`Agent`: the connection, every notification it received, every permission request, the
agent's stderr, and helpers for the ACP handshake and prompts. Every frame the agent sends is
checked against the current pinned stable ACP schema (SDK 2.4.0, tests/acp_schemas.py): the
scripted agent speaks today's ACP (notices, compaction, tool-call names), which release 1.21.0
does not define.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from acp_schemas import CURRENT, validate_in, validate_v2
from baton.connection import Connection, InboundRequest
from baton.connection.tap import Mark

#: Generous bound on any single wait in these tests (never a timing assertion).
WAIT = 20.0

#: session/update frames validated per update kind (the rest of a flood is not).
MAX_VALIDATED_PER_KIND = 50

#: The definition each inbound frame is validated against, by method or by request method.
_NOTIFICATION_DEFS = {
    "session/update": "SessionNotification",
    "elicitation/complete": "CompleteElicitationNotification",
}
_REQUEST_DEFS = {
    "session/request_permission": "RequestPermissionRequest",
    "fs/read_text_file": "ReadTextFileRequest",
    "fs/write_text_file": "WriteTextFileRequest",
    "terminal/create": "CreateTerminalRequest",
    "elicitation/create": "CreateElicitationRequest",
}
_RESPONSE_DEFS = {
    "initialize": "InitializeResponse",
    "session/new": "NewSessionResponse",
    "session/load": "LoadSessionResponse",
    "session/resume": "ResumeSessionResponse",
    "session/list": "ListSessionsResponse",
    "session/set_config_option": "SetSessionConfigOptionResponse",
    "session/set_mode": "SetSessionModeResponse",
    "session/close": "CloseSessionResponse",
}


#: The same tables for an agent speaking the v2 draft (tests/fixtures/schema/sdk-2.4.0/v2).
_V2_NOTIFICATION_DEFS = {"session/update": "UpdateSessionNotification"}
_V2_REQUEST_DEFS = {"session/request_permission": "RequestPermissionRequest"}
_V2_RESPONSE_DEFS = {
    "initialize": "InitializeResponse",
    "auth/login": "LoginAuthResponse",
    "auth/logout": "LogoutAuthResponse",
    "session/new": "NewSessionResponse",
    "session/resume": "ResumeSessionResponse",
    "session/list": "ListSessionsResponse",
    "session/set_config_option": "SetSessionConfigOptionResponse",
    "session/close": "CloseSessionResponse",
    "session/prompt": "PromptResponse",
}


def validate(definition: str, instance: Any, version: int = 1) -> None:
    """Validate ``instance`` against ``$defs/definition`` of the current pinned stable schema
    (ACP ``version`` 1: the scripted agent speaks today's updates, which release 1.21.0 does not
    define), or of the pinned v2 draft schema (``version`` 2)."""
    if version == 2:
        validate_v2(definition, instance)
    else:
        validate_in(CURRENT, definition, instance)


class SchemaTap:
    """Records every frame and validates the agent's frames against the schema of ``version``."""

    def __init__(self, version: int = 1) -> None:
        self.version = version
        self.inbound: list[dict[str, Any]] = []
        self.sent_methods: dict[Any, str] = {}
        self.errors: list[str] = []
        self._seen: dict[str, int] = {}

    def _sample(self, params: Any) -> bool:
        """Validate the first updates of each kind only: floods would make tests slow."""
        update = params.get("update") if isinstance(params, dict) else None
        kind = str(update.get("sessionUpdate")) if isinstance(update, dict) else ""
        self._seen[kind] = self._seen.get(kind, 0) + 1
        return self._seen[kind] <= MAX_VALIDATED_PER_KIND

    async def record_inbound(
        self, raws: Sequence[bytes], messages: Sequence[dict[str, Any] | None], mark: Mark = None
    ) -> list[None]:
        for message in messages:
            if message is not None:
                self._inbound(message)
        return [None] * len(raws)

    async def record_outbound(self, raw: bytes, message: dict[str, Any]) -> None:
        if "method" in message and "id" in message:
            self.sent_methods[message["id"]] = message["method"]

    def _inbound(self, message: dict[str, Any]) -> None:
        self.inbound.append(message)
        method = message.get("method")
        definition: str | None = None
        instance: Any = None
        if isinstance(method, str):
            if self.version == 2:
                table = _V2_REQUEST_DEFS if "id" in message else _V2_NOTIFICATION_DEFS
            else:
                table = _REQUEST_DEFS if "id" in message else _NOTIFICATION_DEFS
            definition, instance = table.get(method), message.get("params")
            if method == "session/update" and not self._sample(instance):
                return
        elif "result" in message:
            responses = _V2_RESPONSE_DEFS if self.version == 2 else _RESPONSE_DEFS
            definition = responses.get(self.sent_methods.get(message.get("id"), ""))
            instance = message["result"]
        if definition is not None:
            try:
                validate(definition, instance, self.version)
            except jsonschema.ValidationError as exc:
                self.errors.append(f"{definition}: {exc.message}")


PermissionAnswer = Callable[[InboundRequest], Awaitable[dict[str, Any]]]


def select_kind(kind: str) -> PermissionAnswer:
    """A permission answer that selects the first offered option of ``kind``."""

    async def answer(request: InboundRequest) -> dict[str, Any]:
        for option in request.params["options"]:
            if option["kind"] == kind:
                return {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}
        return {"outcome": {"outcome": "cancelled"}}

    return answer


async def answer_cancelled(request: InboundRequest) -> dict[str, Any]:
    """A permission answer of outcome cancelled."""
    return {"outcome": {"outcome": "cancelled"}}


class Agent:
    """One scripted agent process and a Connection to it."""

    def __init__(
        self, process: asyncio.subprocess.Process, conn: Connection, tap: SchemaTap, cwd: Path
    ) -> None:
        self.process = process
        self.conn = conn
        self.tap = tap
        self.cwd = cwd
        self.notifications: list[dict[str, Any]] = []
        self.permission_requests: list[InboundRequest] = []
        self.answer: PermissionAnswer = select_kind("allow_once")
        self.stderr = bytearray()
        #: False for agents told to send off-schema shapes on purpose.
        self.schema_checks = True
        self._changed = asyncio.Event()
        self._stderr_task: asyncio.Task[None] | None = None
        conn.on_any_notification(self._on_notification)
        conn.on_request("session/request_permission", self._on_permission)

    def _on_notification(self, message: dict[str, Any], _ref: object) -> None:
        self.notifications.append(message)
        self._changed.set()

    async def _on_permission(self, request: InboundRequest) -> dict[str, Any]:
        self.permission_requests.append(request)
        self._changed.set()
        return await self.answer(request)

    async def drain_stderr(self) -> None:
        assert self.process.stderr is not None
        while chunk := await self.process.stderr.read(65536):
            self.stderr.extend(chunk)

    def answer_selecting(self, kind: str) -> None:
        """Answer later permission requests by selecting the first option of ``kind``."""
        self.answer = select_kind(kind)

    def answer_cancelled(self) -> None:
        """Answer later permission requests with outcome cancelled."""
        self.answer = answer_cancelled

    def updates(self, session_id: str | None = None) -> list[dict[str, Any]]:
        """The ``update`` objects of every session/update received (for one session)."""
        return [
            n["params"]["update"]
            for n in self.notifications
            if n.get("method") == "session/update"
            and (session_id is None or n["params"]["sessionId"] == session_id)
        ]

    def kinds(self, session_id: str | None = None) -> list[str]:
        """The ``sessionUpdate`` of every update received."""
        return [update["sessionUpdate"] for update in self.updates(session_id)]

    def text(self, session_id: str | None = None) -> str:
        """The concatenated text of every agent_message_chunk."""
        return "".join(
            u["content"]["text"]
            for u in self.updates(session_id)
            if u["sessionUpdate"] == "agent_message_chunk"
        )

    async def until(self, predicate: Callable[[], bool], timeout: float = WAIT) -> None:
        """Wait until ``predicate()`` holds (checked after each notification or request)."""
        async with asyncio.timeout(timeout):
            while not predicate():
                self._changed.clear()
                await self._changed.wait()

    async def initialize(self, version: int = 1) -> dict[str, Any]:
        """Send initialize; return its result."""
        result: dict[str, Any] = await self.conn.request(
            "initialize",
            {
                "protocolVersion": version,
                "clientCapabilities": {
                    "fs": {"readTextFile": False, "writeTextFile": False},
                    "terminal": False,
                },
                "clientInfo": {"name": "baton-tests", "version": "0"},
            },
            timeout=WAIT,
        )
        return result

    async def new_session(self, cwd: Path | None = None) -> dict[str, Any]:
        """session/new in ``cwd`` (default: the agent's tmp dir); return the result."""
        result: dict[str, Any] = await self.conn.request(
            "session/new", {"cwd": str(cwd or self.cwd), "mcpServers": []}, timeout=WAIT
        )
        return result

    async def start(self) -> str:
        """initialize + session/new; return the session id."""
        await self.initialize()
        return str((await self.new_session())["sessionId"])

    async def send_prompt(self, session_id: str, text: str) -> int:
        """Send session/prompt without waiting; return its request id."""
        return await self.conn.send_request(
            "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
        )

    async def prompt(self, session_id: str, text: str) -> dict[str, Any]:
        """Send session/prompt and wait for its result."""
        request_id = await self.send_prompt(session_id, text)
        result: dict[str, Any] = await self.conn.await_response(request_id, timeout=WAIT)
        return result

    async def cancel(self, session_id: str) -> None:
        """Send session/cancel."""
        await self.conn.notify("session/cancel", {"sessionId": session_id})

    async def exit_code(self) -> int:
        """Wait for the process to exit; return its code."""
        return await asyncio.wait_for(self.process.wait(), WAIT)

    async def shutdown(self) -> None:
        await self.conn.close()
        if self.process.returncode is None:
            self.process.kill()
        # The process only counts as finished once its pipes reach EOF: read what is left
        # (a connection that stopped at a frame cap leaves stdout unread).
        assert self.process.stdout is not None
        while await self.process.stdout.read(1024 * 1024):
            pass
        await self.process.wait()
        if self._stderr_task is not None:
            self._stderr_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._stderr_task


Spawn = Callable[..., Awaitable[Agent]]


@pytest.fixture
def schema_validate() -> Callable[[str, Any], None]:
    """Validate an instance against a definition of the pinned ACP schema."""
    return validate


@pytest.fixture
async def spawn(tmp_path: Path) -> AsyncIterator[Spawn]:
    """Start scripted agents: ``await spawn("--profile", "codex", max_frame_bytes=...)``.

    At teardown every agent is stopped, and every frame it sent must have matched the schema
    (unless it was spawned with ``schema_checks=False``).
    """
    agents: list[Agent] = []

    async def start(
        *flags: str,
        max_frame_bytes: int = 1024 * 1024,
        drain_stderr: bool = True,
        schema_checks: bool = True,
        entry: tuple[str, ...] = ("-m", "baton.agents.scripted"),
        schema_version: int = 1,
    ) -> Agent:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            *entry,
            *flags,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=tmp_path,
            # The agent's default state directory: this test's own.
            env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")},
        )
        assert process.stdout is not None and process.stdin is not None
        tap = SchemaTap(schema_version)
        conn = Connection(process.stdout, process.stdin, max_frame_bytes=max_frame_bytes, tap=tap)
        agent = Agent(process, conn, tap, tmp_path)
        agent.schema_checks = schema_checks
        if drain_stderr:
            agent._stderr_task = asyncio.get_running_loop().create_task(agent.drain_stderr())
        conn.start()
        agents.append(agent)
        return agent

    yield start
    for agent in agents:
        await agent.shutdown()
    for agent in agents:
        if agent.schema_checks:
            assert not agent.tap.errors, agent.tap.errors
