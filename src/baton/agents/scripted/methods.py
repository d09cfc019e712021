"""The ACP methods the scripted agent answers (everything but session/cancel, which is a
notification, and the agent's own requests).

Each handler takes the request id and its params object and returns the result, raises
:class:`RpcFailure` to answer with a JSON-RPC error, or returns :data:`DEFERRED` when the answer
is written later (session/prompt, answered by its turn).
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import orjson

from baton.agents.scripted import frames
from baton.agents.scripted.script import parse_prompt
from baton.agents.scripted.session import ConfigError, Session, StreamRecord
from baton.agents.scripted.setup_params import SetupRefused, read_setup
from baton.errors import BatonError, ScriptError
from baton.wire import fork
from baton.wire.extensions import steering
from baton.wire.jsonrpc import (
    AUTH_REQUIRED,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    RESOURCE_NOT_FOUND,
    RequestId,
)

if TYPE_CHECKING:
    from baton.agents.scripted.agent import ScriptedAgent

#: Sessions per session/list page.
LIST_PAGE_SIZE: Final = 50

#: Cursor's pre-session model list method (served by the ``cursor`` profile only).
CURSOR_LIST_MODELS: Final = "cursor/list_available_models"
#: The steering extension's request (``--steering``).
STEERING_METHOD: Final = steering.METHOD

#: The ``clientCapabilities._meta`` flag a client sets to use Cursor's model picker.
CURSOR_PICKER_FLAG: Final = "parameterizedModelPicker"

#: Methods that need an advertised capability, and the capability's dotted path.
CAPABILITY_OF_METHOD: Final = {
    "session/load": "loadSession",
    "session/resume": "sessionCapabilities.resume",
    "session/list": "sessionCapabilities.list",
    "session/close": "sessionCapabilities.close",
    "session/delete": "sessionCapabilities.delete",
    "session/fork": "sessionCapabilities.fork",
    "logout": "auth.logout",
}


class RpcFailure(Exception):
    """Answer the current request with this JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class _Deferred:
    """A request whose answer is written later (session/prompt)."""


DEFERRED: Final = _Deferred()

Params = dict[str, Any]
MethodHandler = Callable[[RequestId, Params], Awaitable[Any]]


def _str_param(params: Params, key: str) -> str:
    value = params.get(key)
    if not isinstance(value, str):
        raise RpcFailure(INVALID_PARAMS, f"Invalid params: {key} must be a string")
    return value


def _cwd_param(params: Params) -> str:
    cwd = _str_param(params, "cwd")
    if not cwd.startswith("/"):
        raise RpcFailure(INVALID_PARAMS, "Invalid params: cwd must be an absolute path")
    return cwd


def _mcp_param(params: Params, *, required: bool = True) -> None:
    servers = params.get("mcpServers")
    if servers is None and not required:
        return
    if not isinstance(servers, list):
        raise RpcFailure(INVALID_PARAMS, "Invalid params: mcpServers must be an array")


class AcpMethods:
    """The method handlers, over the agent's sessions, options and output."""

    def __init__(self, agent: ScriptedAgent) -> None:
        self._agent = agent
        self.options = agent.options
        self.out = agent.out
        self.shape = agent.shape
        self.store = agent.store
        #: False while ``--auth-required`` holds and authenticate has not succeeded.
        self.authenticated = agent.options.auth_required == "off"
        #: True once the client's initialize set ``clientCapabilities._meta.
        #: parameterizedModelPicker`` (Cursor's picker is served only then).
        self.model_picker = False
        #: The ``clientCapabilities`` of the client's initialize (``offered`` reports them).
        self.client_capabilities: dict[str, Any] = {}

    def table(self) -> Mapping[str, MethodHandler]:
        """Handlers by method name."""
        return {
            "initialize": self._initialize,
            "authenticate": self._authenticate,
            "logout": self._logout,
            "session/new": self._session_new,
            "session/load": self._session_load,
            "session/resume": self._session_resume,
            "session/fork": self._session_fork,
            "session/list": self._session_list,
            "session/close": self._session_close,
            "session/delete": self._session_delete,
            "session/set_mode": self._set_mode,
            "session/set_config_option": self._set_config_option,
            "session/set_model": self._set_model,
            "session/prompt": self._prompt,
            CURSOR_LIST_MODELS: self._list_available_models,
            STEERING_METHOD: self._steer,
        }

    def _require_auth(self, stage: str) -> None:
        if self.options.auth_required == stage and not self.authenticated:
            raise RpcFailure(AUTH_REQUIRED, "Authentication required")

    def _session(self, params: Params) -> Session:
        session_id = _str_param(params, "sessionId")
        session = self.store.get(session_id)
        if session is None:
            raise RpcFailure(
                RESOURCE_NOT_FOUND, f"Session not found: {session_id}", {"sessionId": session_id}
            )
        return session

    def _idle_session(self, params: Params) -> Session:
        session = self._session(params)
        if self._agent.is_busy(session.session_id):
            raise RpcFailure(INVALID_PARAMS, f"session {session.session_id} has a prompt running")
        return session

    async def _initialize(self, _id: RequestId, params: Params) -> Any:
        requested = params.get("protocolVersion")
        version = self.options.protocol_version
        if version is None:
            valid = isinstance(requested, int) and not isinstance(requested, bool)
            version = requested if valid else 1
        capabilities = params.get("clientCapabilities")
        meta = capabilities.get("_meta") if isinstance(capabilities, dict) else None
        self.model_picker = isinstance(meta, dict) and meta.get(CURSOR_PICKER_FLAG) is True
        self.client_capabilities = dict(capabilities) if isinstance(capabilities, dict) else {}
        result: dict[str, Any] = {
            "protocolVersion": version,
            "agentCapabilities": self.options.capabilities,
            "authMethods": list(self.options.auth_methods),
            "agentInfo": self.options.agent_info,
        }
        if self.options.model_extension == "grok":
            result["_meta"] = {"modelState": self.shape.grok_model_state()}
        if self.options.steering:
            result.setdefault("_meta", {})["steering"] = {"supported": True}
        return result

    async def _steer(self, _id: RequestId, params: Params) -> Any:
        """``_session/steering`` (``--steering``): the text joins the running turn (it is
        reported there as ``steered: TEXT``) and the answer is ``injected``; with no turn
        running, ``promptRequired`` when the client opted in to own the text, else
        ``failed`` (this agent never starts a turn on its own)."""
        if not self.options.steering:
            raise RpcFailure(METHOD_NOT_FOUND, f"Method not found: {STEERING_METHOD}")
        session = self._session(params)
        prompt = params.get("prompt")
        if not isinstance(prompt, list) or not prompt:
            raise RpcFailure(INVALID_PARAMS, "steering needs a non-empty prompt array")
        text = "".join(str(block.get("text", "")) for block in prompt if isinstance(block, dict))
        if self._agent.steer_running_turn(session.session_id, text):
            return {"outcome": "injected"}
        meta = params.get("_meta")
        steering = meta.get("steering") if isinstance(meta, dict) else None
        if isinstance(steering, dict) and steering.get("idleBehavior") == "promptRequired":
            return {"outcome": "promptRequired", "reason": "noRunningTurn"}
        return {"outcome": "failed", "reason": "noRunningTurn"}

    async def _authenticate(self, _id: RequestId, params: Params) -> Any:
        method_id = _str_param(params, "methodId")
        advertised = self.options.auth_method_ids
        if method_id not in advertised:
            raise RpcFailure(
                INVALID_PARAMS,
                f"unknown auth method {method_id!r}; advertised: {', '.join(advertised) or 'none'}",
            )
        self.authenticated = True
        return {}

    async def _logout(self, _id: RequestId, _params: Params) -> Any:
        self.authenticated = self.options.auth_required == "off"
        return {}

    def _setup(self, params: Params) -> dict[str, Any]:
        try:
            return read_setup(params, self.options.capabilities)
        except SetupRefused as exc:
            raise RpcFailure(exc.code, str(exc)) from None

    async def _session_new(self, _id: RequestId, params: Params) -> Any:
        cwd = _cwd_param(params)
        _mcp_param(params)
        self._require_auth("new")
        setup = self._setup(params)
        session = self.shape.initial(self.store.new_id(), cwd)
        session.setup = setup
        self.store.put(session)
        return {"sessionId": session.session_id, **self.shape.describe(session)}

    async def _session_load(self, _id: RequestId, params: Params) -> Any:
        cwd = _cwd_param(params)
        _mcp_param(params)
        self._require_auth("new")
        setup = self._setup(params)
        session = self._idle_session(params)
        session.cwd = cwd
        session.setup = setup
        await self._replay(session)
        self.store.put(session)
        return self.shape.describe(session)

    async def _replay(self, session: Session) -> None:
        dialect = self._agent.dialect
        message_id = dialect.agent_message_id(session.session_id) if dialect else None
        blob = frames.StreamBlob(session.session_id, message_id)
        for entry in session.history:
            if isinstance(entry, StreamRecord):
                await self.out.write_all(data for _n, data in blob.batches(1, entry.count + 1))
            else:
                self.out.send(frames.session_update(session.session_id, entry))

    async def _session_resume(self, _id: RequestId, params: Params) -> Any:
        cwd = _cwd_param(params)
        _mcp_param(params, required=False)
        self._require_auth("new")
        setup = self._setup(params)
        session = self._idle_session(params)
        session.cwd = cwd
        session.setup = setup
        self.store.put(session)
        return self.shape.describe(session)

    async def _session_fork(self, _id: RequestId, params: Params) -> Any:
        cwd = _cwd_param(params)
        _mcp_param(params, required=False)
        self._require_auth("new")
        source = self._session(params)
        try:
            at_turn = fork.requested_at_turn(params)
        except BatonError as exc:
            raise RpcFailure(INVALID_PARAMS, f"Invalid params: {exc.message}") from None
        if at_turn is not None and not self._fork_at_turn_advertised():
            raise RpcFailure(
                INVALID_PARAMS,
                f"Invalid params: _meta.{fork.AT_TURN_META_KEY} is not advertised",
            )
        session = source.copy_as(self.store.new_id(), cwd)
        if at_turn is not None:
            turns = session.turns()
            if at_turn > turns:
                raise RpcFailure(
                    INVALID_PARAMS,
                    f"Invalid params: session {source.session_id} has {turns} turns, "
                    f"cannot fork at turn {at_turn}",
                )
            session.keep_turns(at_turn)
        self.store.put(session)
        return {"sessionId": session.session_id, **self.shape.describe(session)}

    def _fork_at_turn_advertised(self) -> bool:
        session_caps = self.options.capabilities.get("sessionCapabilities")
        return isinstance(session_caps, dict) and fork.fork_at_turn_advertised(
            session_caps.get("fork")
        )

    async def _session_list(self, _id: RequestId, params: Params) -> Any:
        # Signed out, codex-acp 2.6.0 answers session/list -32000 as it does session/new.
        self._require_auth("new")
        cwd = params.get("cwd")
        cursor = params.get("cursor")
        offset = 0
        if cursor is not None:
            if not isinstance(cursor, str) or not cursor.isdigit():
                raise RpcFailure(INVALID_PARAMS, "Invalid params: unknown cursor")
            offset = int(cursor)
        sessions = [s for s in self.store.all() if cwd is None or s.cwd == cwd]
        page = sessions[offset : offset + LIST_PAGE_SIZE]
        result: dict[str, Any] = {
            "sessions": [
                {"sessionId": s.session_id, "cwd": s.cwd}
                | ({"title": s.title} if s.title is not None else {})
                for s in page
            ]
        }
        if offset + LIST_PAGE_SIZE < len(sessions):
            result["nextCursor"] = str(offset + LIST_PAGE_SIZE)
        return result

    async def _session_close(self, _id: RequestId, params: Params) -> Any:
        session = self._session(params)
        self._agent.cancel_session(session.session_id)
        self.store.forget(session.session_id)
        return {}

    async def _session_delete(self, _id: RequestId, params: Params) -> Any:
        session = self._idle_session(params)
        self.store.delete(session.session_id)
        return {}

    async def _set_mode(self, _id: RequestId, params: Params) -> Any:
        if not self.options.modes:
            raise RpcFailure(METHOD_NOT_FOUND, "Method not found: session/set_mode")
        session = self._session(params)
        try:
            self.shape.set_mode(session, _str_param(params, "modeId"))
        except ConfigError as exc:
            raise RpcFailure(INVALID_PARAMS, f"Invalid params: {exc}") from exc
        self.store.save(session)
        return {}

    async def _set_config_option(self, _id: RequestId, params: Params) -> Any:
        if not self.options.config_options:
            raise RpcFailure(METHOD_NOT_FOUND, "Method not found: session/set_config_option")
        session = self._session(params)
        config_id = _str_param(params, "configId")
        try:
            self.shape.set_option(session, config_id, params.get("value"), params.get("type"))
        except ConfigError as exc:
            raise RpcFailure(INVALID_PARAMS, f"Invalid params: {exc}") from exc
        self.store.save(session)
        return {"configOptions": self.shape.config_options(session)}

    async def _set_model(self, _id: RequestId, params: Params) -> Any:
        if not self.shape.legacy_models():
            raise RpcFailure(METHOD_NOT_FOUND, "Method not found: session/set_model")
        session = self._session(params)
        effort: object = None
        meta = params.get("_meta")
        if self.options.model_extension == "grok" and isinstance(meta, dict):
            effort = meta.get("reasoningEffort")
        try:
            self.shape.set_model(session, _str_param(params, "modelId"), effort)
        except ConfigError as exc:
            raise RpcFailure(INVALID_PARAMS, f"Invalid params: {exc}") from exc
        self.store.save(session)
        return {}

    async def _list_available_models(self, _id: RequestId, _params: Params) -> Any:
        if self.options.model_extension != "cursor":
            raise RpcFailure(METHOD_NOT_FOUND, f"Method not found: {CURSOR_LIST_MODELS}")
        if not self.model_picker:
            raise RpcFailure(
                METHOD_NOT_FOUND,
                f"Method not found: {CURSOR_LIST_MODELS} (the client did not set "
                f"clientCapabilities._meta.{CURSOR_PICKER_FLAG} in initialize)",
            )
        self._require_auth("new")
        return {"models": self.shape.catalog_model_entries()}

    async def _prompt(self, request_id: RequestId, params: Params) -> Any:
        self._require_auth("prompt")
        session = self._session(params)
        blocks = params.get("prompt")
        if not isinstance(blocks, list):
            raise RpcFailure(INVALID_PARAMS, "Invalid params: prompt must be an array")
        text = "\n".join(
            str(block.get("text", ""))
            for block in blocks
            if isinstance(block, dict) and block.get("type") == "text"
        )
        if self.options.prompt_log is not None:
            log_prompt(self.options.prompt_log, session.session_id, text)
        try:
            script = parse_prompt(text)
        except ScriptError as exc:
            raise RpcFailure(
                INVALID_PARAMS,
                f"Invalid params: {exc.message}",
                {"code": exc.code, "reason": exc.reason, "line": exc.line},
            ) from exc
        signed_out = self.options.auth_required == "turn" and not self.authenticated
        self._agent.start_turn(session, request_id, text, script, signed_out=signed_out)
        return DEFERRED


def log_prompt(path: Path, session_id: str, text: str) -> None:
    """Append one received prompt to ``path`` as a JSON line (one write of a line under
    O_APPEND, so agents of several processes can share the file)."""
    line = orjson.dumps({"pid": os.getpid(), "sessionId": session_id, "text": text}) + b"\n"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)
