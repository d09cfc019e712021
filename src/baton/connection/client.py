"""The typed ACP client: every client-to-agent method Baton uses, over a :class:`Connection`.

Every method checks locally, *before anything is written*, that the agent (or the session)
advertised what the call needs, and raises instead of sending:
:class:`~baton.errors.CapabilityNotAdvertised` for a missing capability,
:class:`~baton.errors.ChoiceNotAdvertised` for a mode, value, model or auth method the agent did
not offer, :class:`~baton.errors.ClientStateError` before ``initialize`` or for a session this
client does not hold, :class:`~baton.errors.InvalidArgument` for malformed arguments.

Time bounds. Methods wait within the connection's fixed request limit; ``initialize`` and
``new_session`` take an optional ``budget``, a caller's :class:`~baton.wire.budget.BudgetClock`
(the prepared turn's own budget, so setup shares the turn's idle and absolute bounds), to wait
within instead. On expiry the request is abandoned
and :class:`~baton.errors.BudgetExpired` propagates. ``send_prompt`` has no deadline at all: it
returns the request id and the caller awaits ``connection.await_response``.

The client remembers the state each session advertised (from session/new, load, resume and
confirmed mutations) so later calls are checked against it. Session updates that change that
state arrive as notifications, which the runtime handles; it hands the new state back with
:meth:`AcpClient.update_session_state`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any, Literal, cast

from baton._version import __version__
from baton.connection.core import Answer, Connection
from baton.errors import (
    CapabilityNotAdvertised,
    ChoiceNotAdvertised,
    ClientStateError,
    InvalidArgument,
    LegacyMethodDisabled,
    SessionForkAtTurnUnsupported,
    SessionForkNotAdvertised,
    TerminalAuthMethod,
)
from baton.wire import fork
from baton.wire.budget import BudgetClock
from baton.wire.capabilities import (
    NO_ELICITATION,
    AgentCapabilities,
    ElicitationOffer,
    InitializeResult,
)
from baton.wire.codec import V1_CODEC, WireCodec, initialize_params, negotiate
from baton.wire.content import check_prompt
from baton.wire.mcp import ToolDeclarations, check_mcp_servers
from baton.wire.session_state import (
    BOOLEAN,
    ConfigConfirmation,
    ConfigValue,
    NewSessionResult,
    SessionList,
    SessionState,
    parse_attached_session_result,
    parse_list_sessions_result,
    parse_new_session_result,
    parse_set_config_option_response,
    require_config_value,
    require_mode,
)
from baton.wire.system_prompt import SystemPrompt
from baton.wire.version import AUTO_CHOICE, PROTOCOL_V2, ProtocolChoice

if TYPE_CHECKING:
    from baton.wire.acp_types import (
        ContentBlock,
        LoadSessionRequest,
        McpServer,
        NewSessionRequest,
        PromptRequest,
        ResumeSessionRequest,
    )

    # The session-setup requests with what Baton adds beyond the pinned stable schema (the
    # unstable ``systemPrompt``): mypy checks every field name Baton writes.
    class NewSessionParams(NewSessionRequest, total=False):
        systemPrompt: dict[str, Any]

    class LoadSessionParams(LoadSessionRequest, total=False):
        systemPrompt: dict[str, Any]

    class ResumeSessionParams(ResumeSessionRequest, total=False):
        systemPrompt: dict[str, Any]


#: What ``mcp_servers`` may be: the parsed declarations file, or ACP ``McpServer`` entries.
McpServers = ToolDeclarations | Sequence[Mapping[str, Any]] | None

AttachMethod = Literal["session/resume", "session/load"]


@dataclass(frozen=True, slots=True)
class AttachedSession:
    """The outcome of :meth:`AcpClient.attach_session`: which method attached and the state
    the agent reported. After ``session/load`` the agent has replayed the history as
    ``session/update`` notifications before answering."""

    session_id: str
    method: AttachMethod
    state: SessionState


def _absolute(path: str, what: str) -> str:
    if not isinstance(path, str) or not PurePosixPath(path).is_absolute():
        raise InvalidArgument(f"{what} must be an absolute path")
    return path


class AcpClient:
    """Typed ACP methods over one connection. Not safe to share between event loops."""

    def __init__(
        self,
        connection: Connection[Any],
        *,
        client_version: str = __version__,
        initialize_transform: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
        elicitation: ElicitationOffer = NO_ELICITATION,
        protocol: ProtocolChoice = AUTO_CHOICE,
    ) -> None:
        self.connection = connection
        self.client_version = client_version
        #: The elicitation modes advertised in ``initialize``: only when someone can answer
        #: (the caller must then serve ``elicitation/create`` on the connection).
        self.elicitation = elicitation
        #: What ``initialize`` offers and accepts (``--protocol``, the profile's field).
        self.protocol = protocol
        #: The negotiated version's codec (v1 until ``initialize`` succeeded).
        self.codec: WireCodec = V1_CODEC
        #: A profile-gated change to the initialize params (Cursor's model picker flag).
        self.initialize_transform = initialize_transform
        #: The accepted ``initialize`` answer, once :meth:`initialize` succeeded.
        self.initialized: InitializeResult | None = None
        #: The raw ``initialize`` result, for profile-gated extensions that read ``_meta``.
        self.initialize_result: object = None
        self._sessions: dict[str, SessionState] = {}
        self._state_refs: dict[str, object] = {}

    # --- state -----------------------------------------------------------------------------

    @property
    def capabilities(self) -> AgentCapabilities:
        """The agent's capabilities. Raises :class:`ClientStateError` before initialize."""
        if self.initialized is None:
            raise ClientStateError("the agent is not initialized yet (call initialize first)")
        return self.initialized.capabilities

    def session_state(self, session_id: str) -> SessionState:
        """The state this client holds for ``session_id`` (ClientStateError if none)."""
        state = self._sessions.get(session_id)
        if state is None:
            raise ClientStateError(f"no session {session_id!r} is open on this client")
        return state

    def update_session_state(self, session_id: str, state: SessionState) -> None:
        """Replace the held state of an open session (after a config or mode update)."""
        self.session_state(session_id)
        self._sessions[session_id] = state

    def forget_session(self, session_id: str) -> None:
        """Stop holding ``session_id`` (it was closed or lost); nothing is sent."""
        self._sessions.pop(session_id, None)
        self._state_refs.pop(session_id, None)

    def state_ref(self, session_id: str) -> object:
        """The tap reference of the last answer that set ``session_id``'s state (session/new,
        load, resume, a mode, config option or model change, or a :meth:`session_call`), or
        None. Kept per session: answers on other sessions of the connection never replace it."""
        return self._state_refs.get(session_id)

    async def session_call(
        self,
        session_id: str,
        method: str,
        params: dict[str, Any],
        *,
        budget: BudgetClock | None = None,
    ) -> Any:
        """Send a state-changing request of ``session_id`` (a profile extension's) and return
        its result; its answer becomes the session's :meth:`state_ref`. Same bounds and
        cancellation safety as :meth:`Connection.call`."""
        answer = await self.connection.call(method, params, budget=budget)
        self._state_refs[session_id] = answer.ref
        return answer.result

    @property
    def session_ids(self) -> tuple[str, ...]:
        """The sessions this client holds, oldest first."""
        return tuple(self._sessions)

    # --- initialize and authenticate -------------------------------------------------------

    def _initialize_params(self) -> dict[str, Any]:
        if self.initialized is not None:
            raise ClientStateError("the agent is already initialized")
        params = initialize_params(self.protocol, self.client_version, self.elicitation)
        if self.initialize_transform is not None:
            params = self.initialize_transform(params)
        return params

    async def initialize(self, budget: BudgetClock | None = None) -> InitializeResult:
        """Negotiate within ``budget``, or the fixed request limit without one. Raises
        :class:`~baton.errors.IncompatibleProtocolVersion` when the agent's version is not one
        Baton implements (the caller should then close the connection), and
        :class:`~baton.errors.BudgetExpired` when the bound elapses (the request is abandoned).

        Cancellation: the request is left pending (the connection's rule); the client stays
        uninitialized."""
        params = self._initialize_params()
        result = await self.connection.request("initialize", params, budget=budget)
        return self._initialized(result)

    def _initialized(self, result: object) -> InitializeResult:
        codec, parsed = negotiate(result, self.protocol)
        self.codec = codec
        self.initialize_result = result
        self.initialized = parsed
        return parsed

    async def authenticate(self, method_id: str) -> None:
        """Call ``authenticate`` (v2: ``auth/login``) for a method the user named explicitly;
        only for a method the agent advertised and never for a ``terminal`` one (decisions.md
        item 10)."""
        initialized = self.initialized
        if initialized is None:
            raise ClientStateError("the agent is not initialized yet (call initialize first)")
        method = initialized.auth_method(method_id)
        if method is None:
            advertised = tuple(m.id for m in initialized.auth_methods)
            raise ChoiceNotAdvertised("auth method", method_id, advertised)
        if method.is_terminal:
            raise TerminalAuthMethod(
                f"auth method {method_id!r} is a terminal method: run the agent's command in a "
                "terminal to sign in; Baton never calls authenticate for it"
            )
        await self.connection.request(self.codec.login_method, {"methodId": method_id})

    # --- session setup ---------------------------------------------------------------------

    def _setup_params(
        self,
        what: str,
        cwd: str,
        mcp_servers: McpServers,
        additional_directories: Sequence[str],
        system_prompt: SystemPrompt | None = None,
    ) -> NewSessionParams:
        """The fields session/new, load and resume share (checked against the capabilities);
        the caller adds ``sessionId`` for an attach."""
        capabilities = self.capabilities
        servers: list[dict[str, Any]]
        if mcp_servers is None:
            servers = []
        elif isinstance(mcp_servers, ToolDeclarations):
            servers = mcp_servers.to_acp()
        else:
            servers = [dict(server) for server in mcp_servers]
        check_mcp_servers(servers, capabilities, what)
        servers = self.codec.mcp_servers(servers)
        params: NewSessionParams = {
            "cwd": _absolute(cwd, "cwd"),
            "mcpServers": cast("list[McpServer]", servers),  # checked above
        }
        if additional_directories:
            capabilities.require(
                "sessionCapabilities.additionalDirectories", f"{what} with additionalDirectories"
            )
            params["additionalDirectories"] = [
                _absolute(d, "an additional directory") for d in additional_directories
            ]
        if system_prompt is not None:
            system_prompt.check(capabilities, what)
            params["systemPrompt"] = system_prompt.to_acp()
        return params

    async def new_session(
        self,
        cwd: str,
        *,
        budget: BudgetClock | None = None,
        mcp_servers: McpServers = None,
        additional_directories: Sequence[str] = (),
        system_prompt: SystemPrompt | None = None,
    ) -> NewSessionResult:
        """``session/new`` within ``budget``, or the fixed request limit without one.

        Cancellation: the request is left pending (the connection's rule); a session the agent
        opens after it is not recorded here."""
        params = self._setup_params(
            "session/new", cwd, mcp_servers, additional_directories, system_prompt
        )
        return self._opened(await self.connection.call("session/new", {**params}, budget=budget))

    def _opened(self, answer: Answer[Any]) -> NewSessionResult:
        parsed = parse_new_session_result(answer.result)
        self._sessions[parsed.session_id] = parsed.state
        self._state_refs[parsed.session_id] = answer.ref
        return parsed

    async def load_session(
        self,
        session_id: str,
        cwd: str,
        *,
        mcp_servers: McpServers = None,
        additional_directories: Sequence[str] = (),
        system_prompt: SystemPrompt | None = None,
    ) -> SessionState:
        """``session/load``; needs ``loadSession``. The agent replays the history as
        ``session/update`` notifications before it answers; nothing here prompts. In v2, which
        has no session/load, this is ``session/resume`` with ``replayFrom`` start (needs
        ``session``)."""
        if self.codec.version == PROTOCOL_V2:
            self.capabilities.require(
                "sessionCapabilities.resume", "session/resume with replayFrom"
            )
            return await self._attach(
                "session/resume",
                session_id,
                cwd,
                mcp_servers,
                additional_directories,
                system_prompt,
                replay=True,
            )
        self.capabilities.require("loadSession", "session/load")
        return await self._attach(
            "session/load", session_id, cwd, mcp_servers, additional_directories, system_prompt
        )

    async def resume_session(
        self,
        session_id: str,
        cwd: str,
        *,
        mcp_servers: McpServers = None,
        additional_directories: Sequence[str] = (),
        system_prompt: SystemPrompt | None = None,
    ) -> SessionState:
        """``session/resume`` (no replay); needs ``sessionCapabilities.resume``."""
        self.capabilities.require("sessionCapabilities.resume", "session/resume")
        return await self._attach(
            "session/resume", session_id, cwd, mcp_servers, additional_directories, system_prompt
        )

    async def _attach(
        self,
        method: AttachMethod,
        session_id: str,
        cwd: str,
        mcp_servers: McpServers,
        additional_directories: Sequence[str],
        system_prompt: SystemPrompt | None,
        *,
        replay: bool = False,
    ) -> SessionState:
        if not isinstance(session_id, str):
            raise InvalidArgument("a session id must be a string")
        shared = self._setup_params(method, cwd, mcp_servers, additional_directories, system_prompt)
        params: LoadSessionParams | ResumeSessionParams = {**shared, "sessionId": session_id}
        sent: dict[str, Any] = {**params}
        if replay:
            sent.update(self.codec.replay_params())  # v2's replayFrom (no v1 type)
        answer = await self.connection.call(method, sent)
        state = parse_attached_session_result(answer.result, method)
        self._sessions[session_id] = state
        self._state_refs[session_id] = answer.ref
        return state

    async def attach_session(
        self,
        session_id: str,
        cwd: str,
        *,
        mcp_servers: McpServers = None,
        additional_directories: Sequence[str] = (),
        system_prompt: SystemPrompt | None = None,
    ) -> AttachedSession:
        """Attach an existing session: ``session/resume`` when advertised, else
        ``session/load`` when ``loadSession`` is, else :class:`CapabilityNotAdvertised`
        (decisions.md item 5)."""
        capabilities = self.capabilities
        if capabilities.session_resume:
            state = await self.resume_session(
                session_id,
                cwd,
                mcp_servers=mcp_servers,
                additional_directories=additional_directories,
                system_prompt=system_prompt,
            )
            return AttachedSession(session_id, "session/resume", state)
        if capabilities.load_session:
            state = await self.load_session(
                session_id,
                cwd,
                mcp_servers=mcp_servers,
                additional_directories=additional_directories,
                system_prompt=system_prompt,
            )
            return AttachedSession(session_id, "session/load", state)
        raise CapabilityNotAdvertised(
            "sessionCapabilities.resume or loadSession", "attaching an existing session"
        )

    async def fork_session(
        self,
        session_id: str,
        cwd: str,
        *,
        at_turn: int | None = None,
        budget: BudgetClock | None = None,
        mcp_servers: McpServers = None,
        additional_directories: Sequence[str] = (),
    ) -> NewSessionResult:
        """``session/fork`` of ``session_id`` (unstable; needs ``sessionCapabilities.fork``):
        a new session holding its context, answered like ``session/new``. ``at_turn`` keeps
        only the parent's first N turns and needs Baton's fork extension (baton.wire.fork):
        :class:`SessionForkAtTurnUnsupported` before anything is sent otherwise
        (:class:`SessionForkNotAdvertised` without the capability at all).

        Cancellation: as :meth:`new_session` (the request is left pending; a session the
        agent opens after it is not recorded here)."""
        capabilities = self.capabilities
        if not capabilities.session_fork:
            raise SessionForkNotAdvertised()
        if not isinstance(session_id, str) or not session_id:
            raise InvalidArgument("a session id must be a non-empty string")
        # session/fork's params are session/new's plus the parent's id (unstable: no
        # generated type of its own in the pinned schema).
        params: dict[str, Any] = dict(
            self._setup_params(fork.METHOD, cwd, mcp_servers, additional_directories)
        )
        params["sessionId"] = session_id
        if at_turn is not None:
            if not capabilities.session_fork_at_turn:
                raise SessionForkAtTurnUnsupported(
                    "forking at an earlier turn needs Baton's fork extension "
                    f'(sessionCapabilities.fork._meta["{fork.AT_TURN_META_KEY}"]), which the '
                    "agent did not advertise (ACP's session/fork has no fork point); nothing was "
                    "sent. Next: fork the whole session (leave out --at-turn)"
                )
            params["_meta"] = fork.at_turn_meta(at_turn)
        return self._opened(await self.connection.call(fork.METHOD, params, budget=budget))

    async def list_sessions(
        self, *, cwd: str | None = None, cursor: str | None = None
    ) -> SessionList:
        """One page of ``session/list``; needs ``sessionCapabilities.list``."""
        self.capabilities.require("sessionCapabilities.list", "session/list")
        params: dict[str, Any] = {}
        if cwd is not None:
            params["cwd"] = _absolute(cwd, "cwd")
        if cursor is not None:
            if not isinstance(cursor, str):
                raise InvalidArgument("a session/list cursor must be a string")
            params["cursor"] = cursor
        return parse_list_sessions_result(await self.connection.request("session/list", params))

    async def close_session(self, session_id: str) -> None:
        """``session/close``; needs ``sessionCapabilities.close``. The session is forgotten
        once the agent answers."""
        self.capabilities.require("sessionCapabilities.close", "session/close")
        self.session_state(session_id)
        await self.connection.request("session/close", {"sessionId": session_id})
        self.forget_session(session_id)

    async def delete_session(self, session_id: str) -> None:
        """``session/delete`` of a session from ``session/list`` (held or not); needs
        ``sessionCapabilities.delete``. Only behind an explicit user command. A held session is
        forgotten once the agent answers."""
        self.capabilities.require("sessionCapabilities.delete", "session/delete")
        if not isinstance(session_id, str) or not session_id:
            raise InvalidArgument("a session id must be a non-empty string")
        await self.connection.request("session/delete", {"sessionId": session_id})
        self.forget_session(session_id)

    async def logout(self) -> None:
        """``logout`` (ends the agent's authenticated state); needs ``auth.logout``. Only when a
        user asks for it by name: Baton never logs out on its own."""
        self.capabilities.require("auth.logout", "logout")
        await self.connection.request("logout", {})

    # --- session controls ------------------------------------------------------------------

    async def set_mode(self, session_id: str, mode_id: str) -> None:
        """``session/set_mode`` to a mode the session advertised (exact id); v2 has no modes
        (they are config options there)."""
        self._refuse_removed("session/set_mode")
        state = self.session_state(session_id)
        require_mode(state, mode_id)
        answer = await self.connection.call(
            "session/set_mode", {"sessionId": session_id, "modeId": mode_id}
        )
        self._sessions[session_id] = state.with_current_mode(mode_id)
        self._state_refs[session_id] = answer.ref

    async def set_config_option(
        self, session_id: str, config_id: str, value: ConfigValue
    ) -> ConfigConfirmation:
        """``session/set_config_option``: the value-id form for a select option, the
        ``type: "boolean"`` form for a boolean one. Returns whether the answer's complete
        ``configOptions`` confirm ``value``; the held state follows a complete answer."""
        state = self.session_state(session_id)
        option = require_config_value(state, config_id, value)
        params = self.codec.set_config_params(
            session_id, config_id, value, boolean=option.type == BOOLEAN
        )
        answer = await self.connection.call("session/set_config_option", params)
        self._state_refs[session_id] = answer.ref
        confirmation = parse_set_config_option_response(answer.result, config_id, value)
        if confirmation.complete:
            self._sessions[session_id] = state.with_config_options(confirmation.options)
        return confirmation

    async def set_model(
        self, session_id: str, model_id: str, *, allow_legacy_set_model: bool = False
    ) -> None:
        """Legacy ``session/set_model`` (not in the stable schema): only when the caller opts
        in, and only to a model of the session's legacy ``models`` object (exact id)."""
        if not allow_legacy_set_model:
            raise LegacyMethodDisabled(
                "session/set_model is legacy and not in the stable schema; it needs "
                "allow_legacy_set_model=True (a profile opt-in). Use the model config option"
            )
        self._refuse_removed("session/set_model")
        state = self.session_state(session_id)
        if state.models is None:
            raise CapabilityNotAdvertised("models (legacy session models)", "session/set_model")
        if model_id not in state.models.ids():
            raise ChoiceNotAdvertised("model", model_id, state.models.ids())
        answer = await self.connection.call(
            "session/set_model", {"sessionId": session_id, "modelId": model_id}
        )
        self._sessions[session_id] = state.with_current_model(model_id)
        self._state_refs[session_id] = answer.ref

    def _refuse_removed(self, method: str) -> None:
        if self.codec.removed(method):
            raise CapabilityNotAdvertised(f"{method} (not in ACP v{self.codec.version})", method)

    # --- turns -----------------------------------------------------------------------------

    async def send_prompt(
        self,
        session_id: str,
        prompt: Sequence[Mapping[str, Any]],
        *,
        profile_mapped: bool = False,
    ) -> int:
        """Send ``session/prompt`` and return its request id. No deadline: await the answer
        with ``connection.await_response(id, budget=...)`` and parse it with
        :func:`baton.wire.stop.parse_prompt_result`.

        ``profile_mapped`` skips the capability check of the blocks: only for a profile-owned
        attachment mapping that knows its adapter better than its flags (grok's PNG/JPEG rule).
        """
        self.session_state(session_id)
        if not profile_mapped:
            check_prompt(self.capabilities, prompt)
        blocks = [dict(block) for block in prompt]  # checked above against the capabilities
        params: PromptRequest = {
            "sessionId": session_id,
            "prompt": cast("list[ContentBlock]", blocks),
        }
        return await self.connection.send_request("session/prompt", {**params})

    async def cancel(self, session_id: str) -> None:
        """Send the ``session/cancel`` notification. The prompt still owes its answer
        (``cancelled``); pending permission requests must be answered ``cancelled``."""
        self.session_state(session_id)
        await self.connection.notify("session/cancel", {"sessionId": session_id})
