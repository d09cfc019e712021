"""AcpClient over in-memory pipes with a tiny fake agent task.

Every frame the fake agent receives is validated against both pinned stable ACP schemas
(1.21.0 and SDK 2.4.0, tests/acp_schemas.py) at teardown
(session/set_model, which the stable schema no longer has, is checked for its exact shape).
Every refusal is checked to write nothing (``frames_out`` unchanged).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest

from acp_schemas import validate_in, validate_stable
from baton._version import __version__
from baton.connection import Connection, memory_pipe
from baton.connection.client import AcpClient
from baton.connection.streams import MemoryReader, MemoryWriter
from baton.errors import (
    BudgetExpired,
    CapabilityNotAdvertised,
    ChoiceNotAdvertised,
    ClientStateError,
    IncompatibleProtocolVersion,
    InvalidArgument,
    LegacyMethodDisabled,
    MalformedResult,
    TerminalAuthMethod,
)
from baton.wire.budget import TurnBudget
from baton.wire.capabilities import ElicitationOffer
from baton.wire.content import audio_block, image_block, text_block
from baton.wire.framing import FrameDecoder
from baton.wire.mcp import http_server, parse_tool_declarations, sse_server
from baton.wire.stop import parse_prompt_result
from baton.wire.system_prompt import MAX_SYSTEM_PROMPT_CHARS, SystemPrompt

FIXTURES = Path(__file__).parents[1] / "fixtures"
CLAUDE = "claude-agent-acp-0.23.1"
CODEX = "codex-acp-0.16.0"
FAST = "fast-agent-0.10.48"

#: The schema definition each outbound method's params must satisfy.
PARAMS_DEF = {
    "initialize": "InitializeRequest",
    "authenticate": "AuthenticateRequest",
    "session/new": "NewSessionRequest",
    "session/load": "LoadSessionRequest",
    "session/resume": "ResumeSessionRequest",
    "session/list": "ListSessionsRequest",
    "session/close": "CloseSessionRequest",
    "session/set_mode": "SetSessionModeRequest",
    "session/set_config_option": "SetSessionConfigOptionRequest",
    "session/prompt": "PromptRequest",
    "session/cancel": "CancelNotification",
    "$/cancel_request": "CancelRequestNotification",
    "session/delete": "DeleteSessionRequest",
    "logout": "LogoutRequest",
}


def validate(definition: str, instance: Any) -> None:
    validate_stable(definition, instance)


def fixture_result(adapter: str, name: str) -> Any:
    return json.loads((FIXTURES / "adapters" / adapter / name).read_text())["result"]


def codex_transcript_result(request_id: int) -> Any:
    path = FIXTURES / "adapters" / CODEX / "transcript.text-shell-patch.jsonl"
    for line in path.read_text().splitlines():
        msg = json.loads(line)["msg"]
        if msg.get("id") == request_id and "result" in msg:
            return msg["result"]
    raise AssertionError(request_id)


NO_ANSWER = object()


@dataclass
class AgentError:
    code: int
    message: str


Handler = Callable[[Any], Any]


@dataclass
class FakeAgent:
    """Answers each request with its handler's return value (an AgentError answers an error,
    NO_ANSWER nothing). Records every frame it receives."""

    reader: MemoryReader
    writer: MemoryWriter
    handlers: dict[str, Handler]
    received: list[dict[str, Any]] = field(default_factory=list)

    async def run(self) -> None:
        decoder = FrameDecoder(16 * 1024 * 1024)
        while True:
            chunk = await self.reader.read(65536)
            if not chunk:
                return
            for line in decoder.feed(chunk):
                if line:
                    self._handle(orjson.loads(line))

    def _handle(self, message: dict[str, Any]) -> None:
        self.received.append(message)
        if "id" not in message:
            return
        handler = self.handlers.get(message["method"])
        if handler is None:
            answer: Any = AgentError(-32601, "Method not found")
        else:
            answer = handler(message.get("params"))
        if answer is NO_ANSWER:
            return
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        if isinstance(answer, AgentError):
            reply["error"] = {"code": answer.code, "message": answer.message}
        else:
            reply["result"] = answer
        self.writer.write(orjson.dumps(reply) + b"\n")

    def methods(self) -> list[str]:
        return [m["method"] for m in self.received]

    def last(self, method: str) -> dict[str, Any]:
        params: dict[str, Any] = [m for m in self.received if m["method"] == method][-1]["params"]
        return params


@dataclass
class Harness:
    client: AcpClient
    agent: FakeAgent
    conn: Connection

    async def settle(self) -> None:
        """Let the agent read what was written (notifications have no answer to wait for)."""
        for _ in range(20):
            await asyncio.sleep(0)

    def written(self) -> int:
        return self.conn.frames_out


def default_handlers(adapter: str) -> dict[str, Handler]:
    return {
        "initialize": lambda p: fixture_result(adapter, "initialize.json"),
        "authenticate": lambda p: {},
        "session/new": lambda p: fixture_result(adapter, "session_new.json"),
        "session/load": lambda p: {
            "modes": fixture_result(adapter, "session_new.json").get("modes")
        },
        "session/resume": lambda p: {
            "configOptions": fixture_result(adapter, "session_new.json").get("configOptions")
        },
        "session/list": lambda p: {
            "sessions": [{"sessionId": "old", "cwd": "/w", "title": "Old"}],
            "nextCursor": None,
        },
        "session/close": lambda p: {},
        "session/delete": lambda p: {},
        "logout": lambda p: {},
        "session/set_mode": lambda p: {},
        "session/set_model": lambda p: {},
        "session/prompt": lambda p: {"stopReason": "end_turn"},
    }


@pytest.fixture
async def make() -> AsyncIterator[Callable[..., Any]]:
    harnesses: list[tuple[Harness, asyncio.Task[None]]] = []

    async def factory(
        adapter: str = CODEX,
        *,
        handlers: dict[str, Handler] | None = None,
        initialize: bool = True,
        request_limit: float = 30.0,
    ) -> Harness:
        to_agent_r, to_agent_w = memory_pipe()
        to_client_r, to_client_w = memory_pipe()
        conn = Connection(to_client_r, to_agent_w, request_limit=request_limit)
        conn.start()
        merged = default_handlers(adapter)
        merged.update(handlers or {})
        agent = FakeAgent(to_agent_r, to_client_w, merged)
        task = asyncio.create_task(agent.run())
        harness = Harness(AcpClient(conn), agent, conn)
        harnesses.append((harness, task))
        if initialize:
            await harness.client.initialize()
        return harness

    yield factory
    for harness, task in harnesses:
        await harness.conn.close()
        await asyncio.wait_for(task, timeout=10)
        for message in harness.agent.received:
            method = message["method"]
            if method == "session/set_model":
                assert set(message["params"]) == {"sessionId", "modelId"}
                continue
            validate(PARAMS_DEF[method], message["params"])
            validate("ClientNotification" if "id" not in message else "ClientRequest", message)
            if "systemPrompt" in message["params"]:  # unstable: only that schema defines it
                validate_in("unstable", PARAMS_DEF[method], message["params"])


# --- initialize -------------------------------------------------------------------------------


async def test_initialize_sends_exactly_what_baton_implements(make: Any) -> None:
    # Issue 29: the offer is the stable 1 (v2 is opt-in), carrying both versions' fields so a
    # v2-only agent reads it too (this one answers 1).
    h = await make(CLAUDE)
    assert h.agent.last("initialize") == {
        "protocolVersion": 1,
        "clientCapabilities": {
            "fs": {"readTextFile": False, "writeTextFile": False},
            "terminal": False,
            "session": {"configOptions": {"boolean": {}}, "notices": {}, "compaction": {}},
        },
        "clientInfo": {"name": "baton", "version": __version__},
        "info": {"name": "baton", "version": __version__},
        "capabilities": {},
    }
    assert h.client.codec.version == 1
    assert h.client.initialized is not None
    assert h.client.capabilities.unmodeled == ()
    assert h.client.capabilities.session_fork
    before = h.written()
    with pytest.raises(ClientStateError):
        await h.client.initialize()
    assert h.written() == before


async def test_an_incompatible_version_fails_naming_both(make: Any) -> None:
    h = await make(handlers={"initialize": lambda p: {"protocolVersion": 3}}, initialize=False)
    with pytest.raises(IncompatibleProtocolVersion) as caught:
        await h.client.initialize()
    assert (caught.value.offered, caught.value.answered) == (1, 3)
    assert h.client.initialized is None


async def test_an_answer_of_2_without_info_is_malformed(make: Any) -> None:
    # With v2's capabilities (it tried v2); without them it is mislabelled (issue 29).
    h = await make(
        handlers={"initialize": lambda p: {"protocolVersion": 2, "capabilities": {}}},
        initialize=False,
    )
    with pytest.raises(MalformedResult):
        await h.client.initialize()
    assert h.client.initialized is None


async def test_nothing_is_sent_before_initialize(make: Any) -> None:
    h = await make(initialize=False)
    with pytest.raises(ClientStateError):
        await h.client.new_session("/w")
    with pytest.raises(ClientStateError):
        await h.client.authenticate("chatgpt")
    with pytest.raises(ClientStateError):
        _ = h.client.capabilities
    assert h.written() == 0


async def test_initialize_within_a_budget(make: Any) -> None:
    h = await make(handlers={"initialize": lambda p: NO_ANSWER}, initialize=False)
    loop = asyncio.get_running_loop()
    budget = TurnBudget(idle=0.05).start(loop.time())
    with pytest.raises(BudgetExpired) as caught:
        await h.client.initialize(budget)
    assert caught.value.bound == "idle"
    assert h.client.initialized is None


async def test_plain_initialize_uses_the_fixed_request_limit(make: Any) -> None:
    h = await make(
        handlers={"initialize": lambda p: NO_ANSWER}, initialize=False, request_limit=0.05
    )
    with pytest.raises(BudgetExpired) as caught:
        await h.client.initialize()
    assert caught.value.bound == "request"


async def test_initialize_within_succeeds_inside_the_budget(make: Any) -> None:
    h = await make(FAST, initialize=False)
    loop = asyncio.get_running_loop()
    result = await h.client.initialize(TurnBudget(idle=30, absolute=60).start(loop.time()))
    assert result.agent_info is not None and result.agent_info.name == "fast-agent-acp"


# --- authenticate ----------------------------------------------------------------------------


async def test_authenticate_only_an_advertised_non_terminal_method(make: Any) -> None:
    init = fixture_result(CODEX, "initialize.json")
    init["authMethods"].append({"id": "term", "name": "Terminal login", "type": "terminal"})
    h = await make(handlers={"initialize": lambda p: init})
    await h.client.authenticate("chatgpt")
    assert h.agent.last("authenticate") == {"methodId": "chatgpt"}
    before = h.written()
    with pytest.raises(ChoiceNotAdvertised) as caught:
        await h.client.authenticate("github")
    assert caught.value.advertised == ("chatgpt", "codex-api-key", "openai-api-key", "term")
    with pytest.raises(TerminalAuthMethod):
        await h.client.authenticate("term")
    assert h.written() == before


# --- session setup ---------------------------------------------------------------------------

TOOLS = parse_tool_declarations(
    json.dumps(
        {"mcpServers": [{"name": "search", "command": "/usr/bin/search", "env": {"K": "V"}}]}
    ).encode()
)


async def test_new_session_tracks_state_and_sends_declarations(make: Any) -> None:
    h = await make(CODEX)
    session = await h.client.new_session("/work/project", mcp_servers=TOOLS)
    assert session.session_id == "01a23607-3507-7921-a1cb-bdc8d4cf433a"
    assert h.agent.last("session/new") == {"cwd": "/work/project", "mcpServers": TOOLS.to_acp()}
    assert h.client.session_state(session.session_id) == session.state
    assert h.client.session_ids == (session.session_id,)
    await h.client.new_session("/w")
    assert h.agent.last("session/new")["mcpServers"] == []


async def test_new_session_refusals_write_nothing(make: Any) -> None:
    h = await make(CODEX)  # http true, sse false, no additionalDirectories
    before = h.written()
    with pytest.raises(InvalidArgument):
        await h.client.new_session("relative/dir")
    with pytest.raises(CapabilityNotAdvertised) as caught:
        await h.client.new_session("/w", additional_directories=["/extra"])
    assert caught.value.capability == "sessionCapabilities.additionalDirectories"
    with pytest.raises(CapabilityNotAdvertised) as caught:
        await h.client.new_session("/w", mcp_servers=[sse_server("s", "http://127.0.0.1:1/sse")])
    assert caught.value.capability == "mcpCapabilities.sse"
    assert h.written() == before
    await h.client.new_session("/w", mcp_servers=[http_server("h", "http://127.0.0.1:1/mcp")])
    assert h.agent.last("session/new")["mcpServers"][0]["type"] == "http"


async def test_additional_directories_when_advertised(make: Any) -> None:
    init = fixture_result(CODEX, "initialize.json")
    init["agentCapabilities"]["sessionCapabilities"]["additionalDirectories"] = {}
    h = await make(handlers={"initialize": lambda p: init})
    await h.client.new_session("/w", additional_directories=["/a", "/b"])
    assert h.agent.last("session/new")["additionalDirectories"] == ["/a", "/b"]
    with pytest.raises(InvalidArgument):
        await h.client.new_session("/w", additional_directories=["b"])


async def test_new_session_within_a_budget(make: Any) -> None:
    h = await make(FAST, handlers={"session/new": lambda p: NO_ANSWER})
    loop = asyncio.get_running_loop()
    with pytest.raises(BudgetExpired) as caught:
        await h.client.new_session("/w", budget=TurnBudget(absolute=0.05).start(loop.time()))
    assert caught.value.bound == "absolute"
    assert h.client.session_ids == ()


async def test_new_session_within_succeeds(make: Any) -> None:
    h = await make(FAST)
    loop = asyncio.get_running_loop()
    session = await h.client.new_session("/w", budget=TurnBudget(idle=30).start(loop.time()))
    assert session.session_id == "2612020908-NhGM2G"


async def test_a_malformed_new_session_answer(make: Any) -> None:
    h = await make(handlers={"session/new": lambda p: {"modes": None}})
    with pytest.raises(MalformedResult):
        await h.client.new_session("/w")


async def test_load_and_resume_need_their_capabilities(make: Any) -> None:
    init = fixture_result(FAST, "initialize.json")
    init["agentCapabilities"] = {}
    h = await make(handlers={"initialize": lambda p: init})
    before = h.written()
    with pytest.raises(CapabilityNotAdvertised) as caught:
        await h.client.load_session("s", "/w")
    assert caught.value.capability == "loadSession"
    with pytest.raises(CapabilityNotAdvertised) as caught:
        await h.client.resume_session("s", "/w")
    assert caught.value.capability == "sessionCapabilities.resume"
    with pytest.raises(CapabilityNotAdvertised):
        await h.client.attach_session("s", "/w")
    with pytest.raises(CapabilityNotAdvertised):
        await h.client.list_sessions()
    assert h.written() == before


async def test_the_same_declarations_go_to_new_load_and_resume(make: Any) -> None:
    h = await make(CODEX)
    await h.client.new_session("/w", mcp_servers=TOOLS)
    state = await h.client.load_session("old", "/w", mcp_servers=TOOLS)
    assert state.modes is not None and state.modes.current_mode_id == "read-only"
    resumed = await h.client.resume_session("old2", "/w", mcp_servers=TOOLS)
    assert [o.id for o in resumed.config_options] == ["mode", "model", "reasoning_effort"]
    for method in ("session/new", "session/load", "session/resume"):
        assert h.agent.last(method)["mcpServers"] == TOOLS.to_acp()
    assert h.agent.last("session/load")["sessionId"] == "old"
    assert h.client.session_ids[1:] == ("old", "old2")


async def test_attach_prefers_resume(make: Any) -> None:
    h = await make(CLAUDE)
    attached = await h.client.attach_session("s1", "/w")
    assert attached.method == "session/resume"
    assert "session/load" not in h.agent.methods()


async def test_attach_falls_back_to_load(make: Any) -> None:
    init = fixture_result(CODEX, "initialize.json")
    del init["agentCapabilities"]["sessionCapabilities"]["resume"]
    h = await make(handlers={"initialize": lambda p: init})
    attached = await h.client.attach_session("s1", "/w", mcp_servers=TOOLS)
    assert attached.method == "session/load"
    assert attached.session_id == "s1"
    assert "session/resume" not in h.agent.methods()


async def test_list_and_close(make: Any) -> None:
    h = await make(CODEX)
    page = await h.client.list_sessions(cwd="/w", cursor="c1")
    assert h.agent.last("session/list") == {"cwd": "/w", "cursor": "c1"}
    assert [s.session_id for s in page.sessions] == ["old"]
    await h.client.list_sessions()
    assert h.agent.last("session/list") == {}
    session = await h.client.new_session("/w")
    await h.client.close_session(session.session_id)
    assert h.agent.last("session/close") == {"sessionId": session.session_id}
    assert h.client.session_ids == ()
    before = h.written()
    with pytest.raises(ClientStateError):
        await h.client.close_session(session.session_id)
    assert h.written() == before


async def test_close_needs_its_capability(make: Any) -> None:
    h = await make(FAST)  # fast-agent does not advertise close
    session = await h.client.new_session("/w")
    before = h.written()
    with pytest.raises(CapabilityNotAdvertised) as caught:
        await h.client.close_session(session.session_id)
    assert caught.value.capability == "sessionCapabilities.close"
    assert h.written() == before


# --- session controls ------------------------------------------------------------------------


async def test_set_mode(make: Any) -> None:
    h = await make(CODEX)
    sid = (await h.client.new_session("/w")).session_id
    before = h.written()
    with pytest.raises(ChoiceNotAdvertised) as caught:
        await h.client.set_mode(sid, "Auto")
    assert caught.value.advertised == ("read-only", "auto", "full-access")
    with pytest.raises(ClientStateError):
        await h.client.set_mode("unknown-session", "auto")
    assert h.written() == before
    await h.client.set_mode(sid, "auto")
    assert h.agent.last("session/set_mode") == {"sessionId": sid, "modeId": "auto"}
    modes = h.client.session_state(sid).modes
    assert modes is not None and modes.current_mode_id == "auto"


async def test_set_config_option_select_confirmed(make: Any) -> None:
    h = await make(
        CODEX, handlers={"session/set_config_option": lambda p: codex_transcript_result(3)}
    )
    sid = (await h.client.new_session("/w")).session_id
    confirmation = await h.client.set_config_option(sid, "reasoning_effort", "low")
    assert confirmation.confirmed
    assert h.agent.last("session/set_config_option") == {
        "sessionId": sid,
        "configId": "reasoning_effort",
        "value": "low",
    }
    option = h.client.session_state(sid).config_option("reasoning_effort")
    assert option is not None and option.current_value == "low"


async def test_set_config_option_unconfirmed_is_reported(make: Any) -> None:
    h = await make(CODEX, handlers={"session/set_config_option": lambda p: {}})
    sid = (await h.client.new_session("/w")).session_id
    confirmation = await h.client.set_config_option(sid, "reasoning_effort", "high")
    assert not confirmation.confirmed and not confirmation.complete
    option = h.client.session_state(sid).config_option("reasoning_effort")
    assert option is not None and option.current_value == "medium"  # unchanged: ambiguous


async def test_set_config_option_boolean_form(make: Any) -> None:
    web = {"id": "web", "name": "Web", "type": "boolean", "currentValue": False}
    new = {"sessionId": "s", "configOptions": [web]}
    answer = {"configOptions": [{**web, "currentValue": True}]}
    h = await make(
        FAST,
        handlers={"session/new": lambda p: new, "session/set_config_option": lambda p: answer},
    )
    await h.client.new_session("/w")
    before = h.written()
    with pytest.raises(ChoiceNotAdvertised):
        await h.client.set_config_option("s", "web", "true")
    with pytest.raises(ChoiceNotAdvertised):
        await h.client.set_config_option("s", "other", True)
    assert h.written() == before
    confirmation = await h.client.set_config_option("s", "web", True)
    assert confirmation.confirmed
    assert h.agent.last("session/set_config_option") == {
        "sessionId": "s",
        "configId": "web",
        "type": "boolean",
        "value": True,
    }


async def test_set_model_is_legacy_and_opt_in(make: Any) -> None:
    h = await make(CLAUDE)
    sid = (await h.client.new_session("/w")).session_id
    before = h.written()
    with pytest.raises(LegacyMethodDisabled):
        await h.client.set_model(sid, "haiku")
    with pytest.raises(ChoiceNotAdvertised) as caught:
        await h.client.set_model(sid, "opus", allow_legacy_set_model=True)
    assert caught.value.advertised == ("default", "sonnet[1m]", "opus[1m]", "haiku")
    assert h.written() == before
    await h.client.set_model(sid, "haiku", allow_legacy_set_model=True)
    assert h.agent.last("session/set_model") == {"sessionId": sid, "modelId": "haiku"}
    models = h.client.session_state(sid).models
    assert models is not None and models.current_model_id == "haiku"


async def test_set_model_needs_a_legacy_models_object(make: Any) -> None:
    h = await make(CODEX)
    sid = (await h.client.new_session("/w")).session_id
    with pytest.raises(CapabilityNotAdvertised):
        await h.client.set_model(sid, "gpt-5.4", allow_legacy_set_model=True)


# --- turns -----------------------------------------------------------------------------------


async def test_send_prompt_returns_the_id_with_no_deadline(make: Any) -> None:
    h = await make(FAST)
    sid = (await h.client.new_session("/w")).session_id
    prompt = [image_block(h.client.capabilities, "aGk=", "image/png"), text_block("Describe.")]
    request_id = await h.client.send_prompt(sid, prompt)
    result = parse_prompt_result(await h.conn.await_response(request_id, timeout=10))
    assert result.stop_reason.is_end_turn
    assert h.agent.last("session/prompt") == {"sessionId": sid, "prompt": prompt}


async def test_send_prompt_refusals_write_nothing(make: Any) -> None:
    h = await make(FAST)  # image true, audio false
    sid = (await h.client.new_session("/w")).session_id
    before = h.written()
    with pytest.raises(CapabilityNotAdvertised) as caught:
        audio_block(h.client.capabilities, "aGk=", "audio/wav")
    assert caught.value.capability == "promptCapabilities.audio"
    with pytest.raises(CapabilityNotAdvertised):
        await h.client.send_prompt(
            sid, [{"type": "audio", "data": "aGk=", "mimeType": "audio/wav"}]
        )
    with pytest.raises(InvalidArgument):
        await h.client.send_prompt(sid, [])
    with pytest.raises(ClientStateError):
        await h.client.send_prompt("other", [text_block("x")])
    assert h.written() == before


async def test_cancel_is_a_notification(make: Any) -> None:
    h = await make(CODEX)
    sid = (await h.client.new_session("/w")).session_id
    await h.client.cancel(sid)
    await h.settle()
    last = h.agent.received[-1]
    assert last == {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}}
    with pytest.raises(ClientStateError):
        await h.client.cancel("other")


async def test_update_and_forget_session_state(make: Any) -> None:
    h = await make(CODEX)
    session = await h.client.new_session("/w")
    h.client.update_session_state(session.session_id, session.state.with_config_options(()))
    assert h.client.session_state(session.session_id).config_options == ()
    h.client.forget_session(session.session_id)
    with pytest.raises(ClientStateError):
        h.client.update_session_state(session.session_id, session.state)


# --- issue 20: elicitation offer, system prompts, delete, logout --------------------------------


async def test_elicitation_is_advertised_only_when_offered(make: Any) -> None:
    h = await make(CLAUDE)
    assert "elicitation" not in h.agent.last("initialize")["clientCapabilities"]
    to_agent_r, to_agent_w = memory_pipe()
    to_client_r, to_client_w = memory_pipe()
    conn = Connection(to_client_r, to_agent_w)
    conn.start()
    agent = FakeAgent(to_agent_r, to_client_w, default_handlers(CLAUDE))
    task = asyncio.create_task(agent.run())
    client = AcpClient(conn, elicitation=ElicitationOffer(form=True))
    await client.initialize()
    assert agent.last("initialize")["clientCapabilities"]["elicitation"] == {"form": {}}
    validate("InitializeRequest", agent.last("initialize"))
    await conn.close()
    await asyncio.wait_for(task, timeout=10)


def _with_session_capabilities(adapter: str, **extra: Any) -> dict[str, Any]:
    init: dict[str, Any] = fixture_result(adapter, "initialize.json")
    init["agentCapabilities"].setdefault("sessionCapabilities", {}).update(extra)
    return init


async def test_system_prompt_needs_its_capability(make: Any) -> None:
    h = await make(CLAUDE)
    before = h.written()
    for mode in ("append", "override"):
        prompt = SystemPrompt(mode, "Be brief.")
        with pytest.raises(CapabilityNotAdvertised) as caught:
            await h.client.new_session("/w", system_prompt=prompt)
        assert caught.value.capability == "sessionCapabilities.systemPrompt"
        with pytest.raises(CapabilityNotAdvertised):
            await h.client.attach_session("s", "/w", system_prompt=prompt)
    assert h.written() == before


async def test_system_prompt_append_only(make: Any) -> None:
    init = _with_session_capabilities(CLAUDE, systemPrompt={})
    h = await make(handlers={"initialize": lambda p: init})
    await h.client.new_session("/w", system_prompt=SystemPrompt("append", "Be brief."))
    assert h.agent.last("session/new")["systemPrompt"] == {
        "mode": "append",
        "content": [{"type": "text", "text": "Be brief."}],
    }
    before = h.written()
    with pytest.raises(CapabilityNotAdvertised) as caught:
        await h.client.new_session("/w", system_prompt=SystemPrompt("override", "Only this."))
    assert caught.value.capability == "sessionCapabilities.systemPrompt.mode.override"
    assert h.written() == before


async def test_system_prompt_override_on_new_load_and_resume(make: Any) -> None:
    init = _with_session_capabilities(CODEX, systemPrompt={"mode": {"override": {}}})
    h = await make(handlers={"initialize": lambda p: init})
    prompt = SystemPrompt("override", "Only this.")
    await h.client.new_session("/w", system_prompt=prompt)
    await h.client.load_session("old", "/w", system_prompt=prompt)
    await h.client.resume_session("old2", "/w", system_prompt=prompt)
    for method in ("session/new", "session/load", "session/resume"):
        assert h.agent.last(method)["systemPrompt"]["mode"] == "override"
    assert "systemPrompt" not in (await _new_without_prompt(h))


async def _new_without_prompt(h: Harness) -> dict[str, Any]:
    await h.client.new_session("/w")
    return h.agent.last("session/new")


@pytest.mark.parametrize("text", ["", "   ", "x" * (MAX_SYSTEM_PROMPT_CHARS + 1)])
def test_system_prompt_bounds(text: str) -> None:
    with pytest.raises(InvalidArgument):
        SystemPrompt("append", text)
    with pytest.raises(InvalidArgument):
        SystemPrompt("replace", "x")  # type: ignore[arg-type]
    assert SystemPrompt("append", "x" * MAX_SYSTEM_PROMPT_CHARS).text


async def test_delete_needs_its_capability(make: Any) -> None:
    h = await make(CODEX)  # codex advertises no delete
    before = h.written()
    with pytest.raises(CapabilityNotAdvertised) as caught:
        await h.client.delete_session("old")
    assert caught.value.capability == "sessionCapabilities.delete"
    assert h.written() == before


async def test_delete_forgets_a_held_session(make: Any) -> None:
    init = _with_session_capabilities(CODEX, delete={})
    h = await make(handlers={"initialize": lambda p: init})
    session = await h.client.new_session("/w")
    await h.client.delete_session("old")
    assert h.agent.last("session/delete") == {"sessionId": "old"}
    await h.client.delete_session(session.session_id)
    assert h.client.session_ids == ()
    before = h.written()
    with pytest.raises(InvalidArgument):
        await h.client.delete_session("")
    assert h.written() == before


async def test_logout_only_when_advertised(make: Any) -> None:
    h = await make(CODEX)  # codex advertises auth.logout
    await h.client.logout()
    assert h.agent.last("logout") == {}
    other = await make(CLAUDE)
    before = other.written()
    with pytest.raises(CapabilityNotAdvertised) as caught:
        await other.client.logout()
    assert caught.value.capability == "auth.logout"
    assert other.written() == before
