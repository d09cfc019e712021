"""A process lane: one long-lived agent child per runtime identity, and its sessions.

The child starts lazily, when the first session is created or attached. Several sessions share
a lane; sessions never cross lanes. Each start of the child is a new *generation* with a new
server instance id, and every inbound message is handled with the generation it arrived on:
once a generation is invalid (quarantine, loss, shutdown) its late messages change nothing.

Routing (warm sessions). Updates and permission requests are checked against the sessions the
lane owns. A sessionId the lane never opened is a protocol failure that quarantines the lane;
delayed updates from a known session without an active run are attributed to that session
(recorded, never given to the next run); permission requests without a Baton-owned active
prompt are answered cancelled and recorded.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import signal
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, Final, Protocol

from baton.connection import Connection, InboundRequest, TapFrame
from baton.connection.client import AcpClient
from baton.errors import (
    BatonError,
    ExtensionPayloadInvalid,
    ProtocolViolation,
    TransportClosed,
)
from baton.journal import Journal, JournalRef, JournalTap
from baton.journal.writer import ServerJournal
from baton.redaction import SecretValues, redact_text
from baton.runtime.agents.launch import LaunchSpec
from baton.runtime.agents.review_lane import SandboxNotApplied, check_sandbox_applied
from baton.runtime.lanes import extensions
from baton.runtime.lanes.recorder import Recorder
from baton.runtime.permissions.correlation import TOOL_CALL_UPDATES, ToolCallTracker
from baton.runtime.permissions.elicitations import NO_ACTIVE_PROMPT as ELICITATION_NO_ACTIVE_PROMPT
from baton.runtime.permissions.elicitations import Elicitor, refuse_elicitation
from baton.runtime.permissions.engine import Resolution, refuse
from baton.runtime.permissions.records import NO_ACTIVE_PROMPT, STALE_GENERATION, UNKNOWN_SESSION
from baton.runtime.processes.process import (
    FAILURE_SIGTERM_GRACE_SECONDS,
    AgentProcess,
    ShutdownResult,
)
from baton.store import new_id
from baton.wire.budget import BudgetClock
from baton.wire.capabilities import NO_ELICITATION, InitializeResult
from baton.wire.elicitation import CREATE_METHOD as ELICITATION_CREATE
from baton.wire.extensions.cursor import CursorModelCatalog
from baton.wire.extensions.grok import GrokModelCatalog
from baton.wire.jsonrpc import Message
from baton.wire.session_state import SessionState

#: Notifications that arrive beside the initialize answer (before a session exists) are kept,
#: at most this many, until the lane's initialized state is durable, then recorded in order.
MAX_STARTUP_NOTIFICATIONS: Final = 256

#: Updates of a session whose run ended, kept on the session (they are also journaled and
#: recorded as observations); the oldest are dropped past this.
MAX_LATE_UPDATES_PER_SESSION: Final = 256

#: Replayed history kept from one session/load (apart from live output).
MAX_REPLAYED_UPDATES: Final = 4096


class TurnHandler(Protocol):
    """What a lane hands a session's active run: its updates and permission requests."""

    def on_updates(self, updates: list[dict[str, Any]]) -> None:
        """Consecutive updates of the session, in order (a plain call; it never waits)."""

    async def on_permission(self, request: InboundRequest) -> Resolution: ...

    async def on_elicitation(self, request: InboundRequest) -> dict[str, Any]:
        """Answer an ``elicitation/create`` of the session (see permissions/elicitations)."""
        ...

    def on_lost(self, reason: BatonError) -> None: ...


@dataclass
class LaneSession:
    """A provider session the lane owns."""

    session_id: str  # Baton's id (store)
    provider_id: str  # the agent's sessionId
    cwd: str
    state: SessionState
    tracker: ToolCallTracker
    active: TurnHandler | None = None
    replaying: bool = False
    replayed: list[dict[str, Any]] = field(default_factory=list)
    late_updates: list[dict[str, Any]] = field(default_factory=list)
    #: The status of the session's last run (a kept session's controls check it).
    last_status: str | None = None


@dataclass(frozen=True, slots=True)
class ProcessExit:
    """How a lane's child ended: ``returncode`` (negative: the signal; None: unknown) and its
    redacted stderr tail."""

    returncode: int | None
    stderr: str

    def describe(self) -> str:
        """``exited with status 3`` / ``was killed by SIGKILL`` / ``ended``."""
        code = self.returncode
        if code is None:
            return "ended"
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"was killed by {name}"
        return f"exited with status {code}"


class LaneFenced(BatonError):
    """The lane latched a safety fence (a failed drain, or a child that survived SIGKILL):
    no replacement process starts until Baton restarts."""

    code = "RUNTIME_SAFETY_FENCED"
    fault = "baton"


class Lane:
    """One agent child for one runtime identity, started lazily, replaced by generation."""

    def __init__(
        self,
        spec: LaunchSpec,
        *,
        journal: Journal,
        recorder: Recorder,
        request_limit: float,
        on_quarantine: Callable[[Lane, str], Awaitable[None]] | None = None,
    ) -> None:
        self.spec = spec
        self.journal = journal
        self.recorder = recorder
        self.request_limit = request_limit
        self.secrets = SecretValues(spec.secrets)
        self.generation = 0
        self.server_id: str | None = None
        self.process: AgentProcess | None = None
        self._last_process: AgentProcess | None = None
        self.connection: Connection | None = None
        self.client: AcpClient | None = None
        self.initialized: InitializeResult | None = None
        self.sessions: dict[str, LaneSession] = {}
        #: Provider session ids this lane opened earlier that are no longer active.
        self.inactive: set[str] = set()
        self.fence: str | None = None
        self.fenced_messages = 0
        #: Who answers elicitations on this lane's processes (set by the runtime before the
        #: first start); None: elicitation is not advertised and every request is declined.
        self.elicitor: Elicitor | None = None
        self._start_lock = asyncio.Lock()
        self._settled: asyncio.Event = asyncio.Event()
        self._settled.set()
        self._callbacks: set[asyncio.Task[Any]] = set()
        self._on_quarantine = on_quarantine
        self._setups_in_flight = 0
        #: Grok's session models catalog for the current generation (grok profile only).
        self.grok_catalog: GrokModelCatalog | None = None
        #: Cursor's model catalog, cached per process (cursor profile only).
        self.cursor_models = CursorModelCatalog()
        #: The discovery fingerprint of the executable this lane runs (None for ad-hoc agents).
        self.fingerprint: tuple[object, ...] | None = None
        #: Notifications that arrived beside the initialize answer (journaled; kept for
        #: profile-gated extensions that read them once the initialized state is durable).
        self.startup_notifications: list[tuple[Message, object]] = []
        self._early: dict[str, list[tuple[Message, object]]] = {}

    @property
    def busy(self) -> bool:
        """True while a session of this lane has an active prompt or a start is in progress."""
        return self._start_lock.locked() or any(
            s.active is not None for s in self.sessions.values()
        )

    def redact(self, text: str) -> str:
        """Redact ``text`` with this lane's secrets and the credential patterns."""
        return redact_text(text, self.secrets)

    # --- start -----------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        """True while a generation's child is connected."""
        return self.connection is not None and not self.connection.is_closed

    async def ensure_started(self, budget: BudgetClock | None) -> AcpClient:
        """The connected client, starting the child (and initializing it) if needed."""
        async with self._start_lock:
            if self.fence is not None:
                raise LaneFenced(self.fence)
            if self.client is not None and self.running:
                return self.client
            # A replacement waits for the prior client's accepted callbacks to settle.
            await self._settled.wait()
            return await self._start(budget)

    async def _start(self, budget: BudgetClock | None) -> AcpClient:
        self.generation += 1
        generation = self.generation
        server_id = new_id("srv")
        journal = await self.journal.open_server(server_id, secrets=self.secrets)
        self.recorder.server_starting(server_id, self.spec, generation)
        try:
            process = await AgentProcess.spawn(
                self.spec.argv, env=self.spec.env, redact=self.redact
            )
        except BaseException:
            await journal.close()
            self.recorder.server_state(server_id, "FAILED", "the agent could not be launched")
            raise
        self.server_id = server_id
        self.process = process
        self.recorder.server_pid(server_id, process.pid)
        startup: list[tuple[Message, object]] = []
        initializing = True

        # A plain call per batch of updates (no coroutine in a flood); slow cases return an
        # awaitable.
        on_updates = functools.partial(self._route_updates, generation)

        async def on_other(message: Message, ref: object) -> None:
            if generation != self.generation:
                self.fenced_messages += 1
                return
            if initializing:
                if len(startup) < MAX_STARTUP_NOTIFICATIONS:
                    startup.append((message, ref))
                return
            try:
                catalog = extensions.grok_update(self.spec, message)
            except ExtensionPayloadInvalid as exc:
                self.grok_catalog = None
                await self.quarantine(f"a malformed model catalog update: {exc.code}", generation)
                return
            if catalog is not None:
                self.grok_catalog = catalog
            # Everything else: journal-only telemetry (already journaled by the tap).

        async def on_permission(request: InboundRequest) -> Any:
            return await self._route_permission(generation, request)

        async def on_elicitation(request: InboundRequest) -> Any:
            return await self._route_elicitation(generation, request)

        def on_violation(violation: ProtocolViolation) -> None:
            self._spawn_callback(
                self.quarantine(f"protocol violation: {violation.kind}", generation)
            )

        connection = Connection(
            process.stdout,
            process.stdin,
            max_frame_bytes=self.spec.max_frame_bytes,
            tap=_LaneTap(journal, self, generation),
            request_limit=self.request_limit,
            on_violation=on_violation,
        )
        connection.on_notifications("session/update", on_updates)
        connection.on_any_notification(on_other)
        connection.on_request("session/request_permission", on_permission)
        connection.on_request(ELICITATION_CREATE, on_elicitation)
        connection.start()
        self.connection = connection
        client = AcpClient(
            connection,
            initialize_transform=extensions.initialize_transform(self.spec),
            elicitation=self.elicitor.offer if self.elicitor is not None else NO_ELICITATION,
        )
        self._watch(generation, connection)
        try:
            if budget is not None:
                self.initialized = await client.initialize_within(budget)
            else:
                self.initialized = await client.initialize()
        except BaseException:
            await self._stop_generation(generation, "FAILED", failure=True)
            raise
        initializing = False
        if self.spec.read_only:
            try:
                check_sandbox_applied(process.stderr_tail())
            except SandboxNotApplied:
                await self._stop_generation(generation, "FAILED", failure=True)
                raise
        self.recorder.server_ready(server_id)
        self.startup_notifications = startup
        try:
            # Applied only now that the initialized state is recorded, in arrival order.
            self.grok_catalog = extensions.grok_startup_catalog(
                self.spec, client, [message for message, _ref in startup]
            )
        except ExtensionPayloadInvalid:
            await self._stop_generation(generation, "FAILED", failure=True)
            raise
        self.client = client
        return client

    def _watch(self, generation: int, connection: Connection) -> None:
        async def watch() -> None:
            reason = await connection.drained()
            if generation != self.generation:
                return
            # The child went away on its own: every active run of the lane is ambiguous.
            await self.quarantine(f"agent connection closed: {reason.code}", generation)

        self._spawn_callback(watch())

    def _spawn_callback(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._callbacks.add(task)
        task.add_done_callback(self._callbacks.discard)

    # --- routing ---------------------------------------------------------------------------

    def _session_for(self, params: object) -> tuple[str | None, LaneSession | None]:
        if not isinstance(params, dict):
            return None, None
        provider_id = params.get("sessionId")
        if not isinstance(provider_id, str):
            return None, None
        return provider_id, self.sessions.get(provider_id)

    def _route_updates(
        self, generation: int, messages: list[Message], refs: Sequence[object], start: int
    ) -> tuple[int, Awaitable[None]] | None:
        """The hot path of :meth:`_route_update`, for a batch (see
        :data:`~baton.connection.core.BatchNotificationHandler`): updates of owned sessions
        with an active run are handed to their turns in order, consecutive ones of one session
        together (a tool-call update after the tracker saw it, and before it sees the next);
        a fenced batch is counted. Anything else stops the batch there with the full routing
        as the awaitable."""
        if generation != self.generation:
            self.fenced_messages += len(messages) - start
            return None
        sessions = self.sessions
        owner: LaneSession | None = None
        owner_id: object = None  # the provider id of ``owner`` (checked once per change)
        updates: list[dict[str, Any]] = []
        for index, message in enumerate(islice(messages, start, None), start):
            params = message.get("params")
            provider_id = params.get("sessionId") if type(params) is dict else None
            if provider_id != owner_id or owner is None:
                session = sessions.get(provider_id) if type(provider_id) is str else None
                if session is None or session.replaying or session.active is None:
                    if updates:
                        _hand_over(owner, updates)
                    return index, self._route_update(generation, message, refs[index])
                if updates:
                    _hand_over(owner, updates)
                    updates = []
                owner, owner_id = session, provider_id
            update = params.get("update")  # type: ignore[union-attr]
            if type(update) is not dict:
                continue
            if update.get("sessionUpdate") in TOOL_CALL_UPDATES:
                # The tracker sees a tool call after the turn saw everything before it.
                if updates:
                    _hand_over(owner, updates)
                    updates = []
                owner.tracker.observe(update)
            updates.append(update)
        if updates:
            _hand_over(owner, updates)
        return None

    async def _route_update(self, generation: int, message: Message, ref: object) -> None:
        if generation != self.generation:
            self.fenced_messages += 1
            return
        params = message.get("params")
        # The hot path (one call per streamed delta): the lookups of _session_for, inlined.
        provider_id = params.get("sessionId") if type(params) is dict else None
        session = self.sessions.get(provider_id) if type(provider_id) is str else None
        if session is None:
            if type(provider_id) is not str:
                provider_id = None
            if provider_id is not None and provider_id in self.inactive:
                return  # a delayed update from a known inactive session: ignored
            if provider_id is not None and self._setups_in_flight:
                early = self._early.setdefault(provider_id, [])
                if len(early) < MAX_STARTUP_NOTIFICATIONS:
                    early.append((message, ref))
                return
            await self.quarantine("an update named a session this lane does not own", generation)
            return
        assert isinstance(params, dict)
        update = params.get("update")
        if type(update) is not dict:
            return
        if update.get("sessionUpdate") in TOOL_CALL_UPDATES:
            session.tracker.observe(update)
        if session.replaying:
            if len(session.replayed) < MAX_REPLAYED_UPDATES:
                session.replayed.append(update)
            return
        if session.active is not None:
            session.active.on_updates([update])
            return
        # Between prompts, or after the prompt's answer: the session's, not the next run's.
        session.late_updates.append(update)
        if len(session.late_updates) > MAX_LATE_UPDATES_PER_SESSION:
            del session.late_updates[0]
        await self.recorder.late_update(session.session_id, update, ref)

    async def _route_permission(self, generation: int, request: InboundRequest) -> Any:
        if generation != self.generation:
            resolution = refuse(
                request.id,
                request.params,
                reason_code=STALE_GENERATION,
                reason="the request came from an invalidated process generation",
            )
            return resolution.outcome
        provider_id, session = self._session_for(request.params)
        if session is None:
            if provider_id is not None and provider_id in self.inactive:
                resolution = refuse(
                    request.id,
                    request.params,
                    reason_code=NO_ACTIVE_PROMPT,
                    reason="the request came from an inactive session of this lane",
                )
                await self.recorder.interaction(None, None, resolution, request.ref, self.secrets)
                return resolution.outcome
            resolution = refuse(
                request.id,
                request.params,
                reason_code=UNKNOWN_SESSION,
                reason="the request named a session this lane does not own",
            )
            await self.recorder.interaction(None, None, resolution, request.ref, self.secrets)
            self._spawn_callback(
                self.quarantine("a permission request named an unknown session", generation)
            )
            return resolution.outcome
        if session.active is None:
            resolution = refuse(
                request.id,
                request.params,
                reason_code=NO_ACTIVE_PROMPT,
                reason="no Baton-owned prompt is active on this session",
            )
            await self.recorder.interaction(
                session.session_id, None, resolution, request.ref, self.secrets
            )
            return resolution.outcome
        resolution = await session.active.on_permission(request)
        if generation != self.generation:
            # The lane was quarantined while the decision was pending: never an approval.
            return refuse(
                request.id,
                request.params,
                reason_code=STALE_GENERATION,
                reason="the lane was quarantined while the request was pending",
            ).outcome
        return resolution.outcome

    async def _route_elicitation(self, generation: int, request: InboundRequest) -> Any:
        """An ``elicitation/create``: the session's active run answers; anything else (a stale
        generation, a request-scoped or foreign one, no active run) is declined."""
        if generation != self.generation:
            stale = "the request came from an invalidated process generation"
            return refuse_elicitation(request.params, STALE_GENERATION, stale).answer
        _provider_id, session = self._session_for(request.params)
        if session is None or session.active is None:
            idle = "no Baton-owned prompt is active on the elicitation's session"
            return refuse_elicitation(request.params, ELICITATION_NO_ACTIVE_PROMPT, idle).answer
        return await session.active.on_elicitation(request)

    # --- sessions --------------------------------------------------------------------------

    def begin_setup(self) -> None:
        """Before session/new or an attach: until :meth:`end_setup`, updates for a session id
        not known yet are kept (bounded) instead of counting as foreign traffic. The window
        must reach :meth:`adopt`: the answer and the agent's next updates are read together,
        before the caller resumes."""
        self._setups_in_flight += 1

    def end_setup(self) -> None:
        """After the session was adopted (or the setup failed)."""
        self._setups_in_flight -= 1
        if self._setups_in_flight == 0:
            self._early.clear()

    async def deliver_early(self, updates: list[tuple[Message, object]]) -> None:
        """Route updates that arrived before their session was adopted, in arrival order."""
        for message, ref in updates:
            await self._route_update(self.generation, message, ref)

    def adopt(self, session: LaneSession) -> list[tuple[Message, object]]:
        """Register an opened session; return updates that arrived before its id was known."""
        self.sessions[session.provider_id] = session
        self.inactive.discard(session.provider_id)
        return self._early.pop(session.provider_id, [])

    def release(self, provider_id: str) -> None:
        """The session is no longer attached here; its later traffic is inactive traffic."""
        if self.sessions.pop(provider_id, None) is not None:
            self.inactive.add(provider_id)

    # --- loss, quarantine, shutdown --------------------------------------------------------

    async def quarantine(self, reason: str, generation: int | None = None) -> None:
        """Invalidate the generation first, then shut its child down, drain what was accepted,
        and mark every active run of the lane for recovery. Idempotent per generation."""
        if generation is not None and generation != self.generation:
            return
        if self.connection is None and self.process is None:
            return
        bad_generation = self.generation
        self.generation += 1  # invalidate before anything can await
        self._settled.clear()
        try:
            active = [s for s in self.sessions.values() if s.active is not None]
            loss = TransportClosed(f"the lane was quarantined: {self.redact(reason)}")
            for session in active:
                assert session.active is not None
                session.active.on_lost(loss)
            await self._stop_generation(bad_generation, "LOST", failure=True, reason=reason)
            for provider_id in list(self.sessions):
                self.release(provider_id)
            if self._on_quarantine is not None:
                await self._on_quarantine(self, reason)
        finally:
            self._settled.set()

    async def _stop_generation(
        self, generation: int, state: str, *, failure: bool = False, reason: str | None = None
    ) -> ShutdownResult | None:
        process, connection, server_id = self.process, self.connection, self.server_id
        if process is None and connection is None:
            return None  # already stopped: keep the state it was recorded with (LOST stays)
        # Kept for a start failure's diagnostic (see last_exit): the generation is gone by the
        # time the caller reports it.
        self._last_process = process or self._last_process
        self.process = self.connection = self.client = None
        self.server_id = None
        self.grok_catalog = None
        self.cursor_models.clear("shutdown" if state == "EXITED" else "process_lost")
        if generation == self.generation:
            self.generation += 1
        result: ShutdownResult | None = None
        if process is not None:
            grace = FAILURE_SIGTERM_GRACE_SECONDS if failure else None
            if grace is not None:
                result = await process.shutdown(term_grace=grace)
            else:
                result = await process.shutdown()
        drained = True
        if connection is not None:
            try:
                await asyncio.wait_for(connection.drained(), timeout=5)
            except TimeoutError:
                drained = False
            await connection.close()
        if result is not None and result.survived:
            self.fence = "the agent's process group survived SIGKILL"
        elif not drained:
            self.fence = "the agent's output could not be drained"
        if server_id is not None:
            diagnostics = reason
            if process is not None:
                tail = process.stderr_tail()
                if tail:
                    diagnostics = f"{reason or ''}\n{tail[-2000:]}".strip()
            self.recorder.server_state(
                server_id, state, self.redact(diagnostics) if diagnostics else None
            )
            writer = self.journal.writer(server_id)
            if writer is not None:
                with contextlib.suppress(BatonError, OSError):
                    await writer.close()
        return result

    async def shutdown(self) -> None:
        """Orderly shutdown: active runs are lost (ambiguous), the child is stopped."""
        # A quarantine in flight owns the old generation's process: let its ladder finish
        # (an adapter that ignores stdin EOF would otherwise outlive Baton).
        await self._settled.wait()
        if any(s.active is not None for s in self.sessions.values()):
            await self.quarantine("Baton shut down with a prompt outstanding")
            return
        await self._stop_generation(self.generation, "EXITED")
        for provider_id in list(self.sessions):
            self.release(provider_id)
        pending = list(self._callbacks)
        for task in pending:
            task.cancel()
        for task in pending:
            with contextlib.suppress(BaseException):
                await task

    async def last_exit(self, wait: float) -> ProcessExit | None:
        """How the last stopped generation's child ended (status and redacted stderr tail),
        waiting at most ``wait`` seconds for a stop in flight to reap it; None if no child
        was stopped. Cancellation-safe: it only waits."""
        process = self._last_process
        if process is None:
            return None
        with contextlib.suppress(TimeoutError, BatonError):
            await asyncio.wait_for(process.wait(), wait)
        return ProcessExit(process.returncode, process.stderr_tail())

    def stderr_tail(self) -> str:
        """The current child's redacted stderr tail (empty without a child)."""
        return self.process.stderr_tail() if self.process is not None else ""


def _hand_over(session: LaneSession | None, updates: list[dict[str, Any]]) -> None:
    """Give a session's active turn its consecutive updates (the lane checked it has one)."""
    assert session is not None and session.active is not None
    session.active.on_updates(updates)


class _LaneTap(JournalTap):
    """The journal tap of one generation; in strict mode a skipped frame quarantines."""

    def __init__(self, journal: ServerJournal, lane: Lane, generation: int) -> None:
        super().__init__(journal)
        self._lane = lane
        self._generation = generation

    def record(self, frame: TapFrame) -> Coroutine[Any, Any, JournalRef]:
        if frame.skipped is None:
            return super().record(frame)  # the common frame: no coroutine of its own
        return self._record_skipped(frame)

    async def _record_skipped(self, frame: TapFrame) -> JournalRef:
        ref = await super().record(frame)
        if self._lane.spec.strict_mode:
            self._lane._spawn_callback(
                self._lane.quarantine(
                    "strict mode: the agent wrote a line that is not ACP", self._generation
                )
            )
        return ref
