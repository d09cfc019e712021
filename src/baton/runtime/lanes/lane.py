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
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final, Protocol

from baton.connection import Connection, InboundRequest
from baton.connection.client import AcpClient
from baton.errors import (
    BatonError,
    CapabilityNotAdvertised,
    ExtensionPayloadInvalid,
    LaneFenced,
    LaneLost,
    ProtocolViolation,
    SandboxNotApplied,
    TransportClosed,
)
from baton.journal import Journal, JournalRef, JournalTap
from baton.redaction import SecretValues, redact_text
from baton.runtime.agents.launch import LaunchSpec
from baton.runtime.agents.review_lane import check_sandbox_applied
from baton.runtime.lanes.child import LaneChild, Spawn, spawn_agent_process
from baton.runtime.lanes.extensions import LaneExtensions, extensions_for
from baton.runtime.lanes.loss import (
    ForeignSession,
    LossCause,
    ProtocolBroken,
    Quarantined,
    cause_of,
)
from baton.runtime.lanes.phase import LanePhase, LanePhases
from baton.runtime.lanes.recorder import Recorder
from baton.runtime.permissions.correlation import TOOL_CALL_UPDATES, ToolCallTracker
from baton.runtime.permissions.elicitations import NO_ACTIVE_PROMPT as ELICITATION_NO_ACTIVE_PROMPT
from baton.runtime.permissions.elicitations import refuse_elicitation
from baton.runtime.permissions.engine import Resolution, refuse
from baton.runtime.permissions.records import NO_ACTIVE_PROMPT, STALE_GENERATION, UNKNOWN_SESSION
from baton.runtime.processes.process import FAILURE_SIGTERM_GRACE_SECONDS, ShutdownResult
from baton.store import new_id
from baton.store.models import RunStatus
from baton.wire.budget import BudgetClock
from baton.wire.capabilities import NO_ELICITATION, ElicitationOffer, InitializeResult
from baton.wire.codec import SessionUpdateDecoder, is_idle
from baton.wire.elicitation import CREATE_METHOD as ELICITATION_CREATE
from baton.wire.extensions import steering
from baton.wire.jsonrpc import Message, Skipped

#: Notifications that arrive beside the initialize answer (before a session exists) are kept,
#: at most this many, until the lane's initialized state is durable, then recorded in order.
MAX_STARTUP_NOTIFICATIONS: Final = 256

#: Updates of a session whose run ended, kept on the session (they are also journaled and
#: recorded as observations); the oldest are dropped past this.
MAX_LATE_UPDATES_PER_SESSION: Final = 256

#: Replayed history kept from one session/load (apart from live output).
MAX_REPLAYED_UPDATES: Final = 4096

#: How long a stopped generation's output may take to reach its end after the child was shut
#: down. Expiry means bytes may still be in flight from a child Baton cannot account for, so
#: the lane is fenced for good (no replacement until Baton restarts).
DRAIN_WAIT_SECONDS: Final = 5.0

#: How long a lane whose connection closed waits for its child's exit status before it names
#: the loss (an agent that closed its output but lives on is a closed transport instead).
EXIT_STATUS_WAIT_SECONDS: Final = 0.5

#: Characters of the child's stderr tail kept in a stopped server's diagnostics (the store row
#: stays small; the whole bounded tail is in the lane's last exit).
MAX_DIAGNOSTIC_STDERR_CHARS: Final = 2000


class TurnHandler(Protocol):
    """What a lane hands a session's active run: its updates and permission requests."""

    def on_updates(self, updates: list[dict[str, Any]]) -> None:
        """Consecutive updates of the session, in order (a plain call; it never waits)."""

    async def on_permission(self, request: InboundRequest) -> Resolution: ...

    async def on_elicitation(self, request: InboundRequest) -> dict[str, Any]:
        """Answer an ``elicitation/create`` of the session (see permissions/elicitations)."""
        ...

    def on_lost(self, reason: BatonError) -> None: ...

    def on_steered(self, view: dict[str, Any]) -> None:
        """A steering request reached the agent during this run (``{text, outcome,
        reason?}``, redacted): shown as a ``steer`` event."""
        ...


@dataclass
class LaneSession:
    """A provider session the lane owns. Its advertised state (modes, config options, models)
    has one owner, the lane's :class:`~baton.connection.client.AcpClient`
    (``client.session_state(provider_id)``), which checks every mutation against it and which
    the turn's mode and config updates change."""

    session_id: str  # Baton's id (store)
    provider_id: str  # the agent's sessionId
    cwd: str
    tracker: ToolCallTracker
    active: TurnHandler | None = None
    replaying: bool = False
    replayed: list[dict[str, Any]] = field(default_factory=list)
    late_updates: list[dict[str, Any]] = field(default_factory=list)
    #: The status of the session's last run (a kept session's controls check it).
    last_status: RunStatus | None = None
    #: The wire codec's per-session update decoder (v2), set when the lane adopts the
    #: session; None reads updates as sent (v1).
    decoder: SessionUpdateDecoder | None = None

    def decoded(self, update: dict[str, Any]) -> list[dict[str, Any]]:
        """The normalized updates of one wire ``update`` (v1: itself)."""
        if self.decoder is None:
            return [update]
        return self.decoder.decode(update)


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
        spawn: Spawn = spawn_agent_process,
    ) -> None:
        self.spec = spec
        self._spawn = spawn
        #: The lane's phase, moved only through the table of :mod:`baton.runtime.lanes.phase`.
        self.phases = LanePhases()
        self._stopped = asyncio.Event()  # set while no stop sequence is under way
        self._stopped.set()
        self.journal = journal
        self.recorder = recorder
        self.request_limit = request_limit
        self.secrets = SecretValues(spec.secrets)
        self.generation = 0
        self.server_id: str | None = None
        self.process: LaneChild | None = None
        self._last_process: LaneChild | None = None
        self.connection: Connection[JournalRef] | None = None
        self.client: AcpClient | None = None
        self.initialized: InitializeResult | None = None
        self.sessions: dict[str, LaneSession] = {}
        #: Provider session ids this lane opened earlier that are no longer active.
        self.inactive: set[str] = set()
        self.fenced_messages = 0
        #: The elicitation modes the current generation's ``initialize`` advertised: chosen by
        #: whoever starts the generation (a run with an answerer offers its modes; anything
        #: else offers none). Advertisement is per process, not per session: each run is still
        #: answered by its own elicitor (see Turn.on_elicitation).
        self.advertised: ElicitationOffer = NO_ELICITATION
        self._start_lock = asyncio.Lock()
        self._settled: asyncio.Event = asyncio.Event()
        self._settled.set()
        self._callbacks: set[asyncio.Task[Any]] = set()
        self._on_quarantine = on_quarantine
        self._setups_in_flight = 0
        #: The generation a read-loop quarantine task was scheduled for (one task each).
        self._quarantine_scheduled: int | None = None
        #: The profile's protocol extensions (Grok's models catalog, Cursor's model picker,
        #: or none): the one place this lane's provider-specific behaviour lives.
        self.extensions: LaneExtensions = extensions_for(spec)
        #: The discovery fingerprint of the executable this lane runs (None for ad-hoc agents).
        self.fingerprint: tuple[object, ...] | None = None
        #: Notifications that arrived beside the initialize answer (journaled; kept for
        #: profile-gated extensions that read them once the initialized state is durable).
        self.startup_notifications: list[tuple[Message, object]] = []
        self._early: dict[str, list[tuple[Message, object]]] = {}

    @property
    def phase(self) -> LanePhase:
        """The lane's phase (IDLE, STARTING, RUNNING, STOPPING, FENCED)."""
        return self.phases.phase

    @property
    def fence(self) -> str | None:
        """Why the lane is fenced, or None."""
        return self.phases.fence

    @property
    def busy(self) -> bool:
        """True while a session of this lane has an active prompt or a start is in progress."""
        return self._start_lock.locked() or any(
            s.active is not None for s in self.sessions.values()
        )

    def redact(self, text: str) -> str:
        """Redact ``text`` with this lane's secrets and the credential patterns."""
        return redact_text(text, self.secrets)

    # --- steering (a profile-gated extension) ------------------------------------------------

    @property
    def steering_supported(self) -> bool:
        """True when the profile reads the steering contract (its ``extensions``) and the
        running generation's agent advertised it (``initialize`` ``_meta.steering``)."""
        client = self.client
        return (
            self.running
            and client is not None
            and steering.EXTENSION in self.spec.extensions
            and steering.advertised(client.initialize_result)
        )

    async def steer(self, session: LaneSession, text: str) -> steering.SteerAnswer:
        """Send ``_session/steering`` for ``session`` and hand the outcome to its active run
        (a ``steer`` event). Bounded by the request limit; cancelling it gives the request up
        at the agent (``$/cancel_request``). Raises CapabilityNotAdvertised where steering is
        not supported (nothing is sent), INVALID_ARGUMENT for empty or oversized text,
        AGENT_EXTENSION_INVALID for an answer without an outcome."""
        params = steering.steer_params(session.provider_id, text)
        client = self.client
        if client is None or not self.steering_supported:
            raise CapabilityNotAdvertised(
                "_meta.steering.supported (read by profiles with the "
                f"{steering.EXTENSION} extension)",
                "steering a running turn",
            )
        answer = steering.parse_steer_result(
            await client.connection.request(steering.METHOD, params)
        )
        active = session.active
        if active is not None:
            active.on_steered({"text": self.redact(text), **answer.to_json()})
        return answer

    # --- start -----------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        """True while a generation's child is connected."""
        return self.connection is not None and not self.connection.is_closed

    async def ensure_started(
        self, budget: BudgetClock | None, *, elicitation: ElicitationOffer = NO_ELICITATION
    ) -> AcpClient:
        """The connected client, starting the child (and initializing it) if needed; a new
        generation advertises ``elicitation`` (a running one keeps what it advertised)."""
        async with self._start_lock:
            if self.fence is not None:
                raise LaneFenced(self.fence)
            if self.client is not None and self.running:
                return self.client
            # A replacement waits for the prior client's accepted callbacks to settle.
            await self._settled.wait()
            if self.phase in (LanePhase.STARTING, LanePhase.RUNNING):
                # The child went away and its watcher has not stopped it yet: stop it now.
                await self.quarantine(self._closed_cause(), self.generation)
            while self.phase is LanePhase.STOPPING:
                await self._stopped.wait()
            if self.fence is not None:
                raise LaneFenced(self.fence)
            return await self._start(budget, elicitation)

    async def _start(self, budget: BudgetClock | None, elicitation: ElicitationOffer) -> AcpClient:
        self.phases.move(LanePhase.STARTING)
        self.advertised = elicitation
        self.generation += 1
        generation = self.generation
        server_id = new_id("srv")
        try:
            journal = await self.journal.open_server(server_id, secrets=self.secrets)
        except BaseException:
            self.phases.move(LanePhase.IDLE)
            raise
        self.recorder.server_starting(server_id, self.spec, generation)
        try:
            process = await self._spawn(self.spec, self.redact)
        except BaseException:
            self.phases.move(LanePhase.IDLE)
            await journal.close()
            self.recorder.server_state(server_id, "FAILED", "the agent could not be launched")
            raise
        self.server_id = server_id
        self.process = process
        self.recorder.server_pid(server_id, process.pid)
        startup: list[tuple[Message, object]] = []
        initializing = True

        # A plain call per batch of updates (no coroutine in a flood).
        on_updates = functools.partial(self._route_updates, generation)

        def on_other(message: Message, ref: object) -> None:
            if generation != self.generation:
                self.fenced_messages += 1
                return
            if initializing:
                if len(startup) < MAX_STARTUP_NOTIFICATIONS:
                    startup.append((message, ref))
                return
            try:
                self.extensions.notified(message)
            except ExtensionPayloadInvalid as exc:
                self._quarantine_soon(
                    ProtocolBroken(f"model catalog update: {exc.code}"), generation
                )
            # Everything else: journal-only telemetry (already journaled by the tap).

        async def on_permission(request: InboundRequest) -> Any:
            return await self._route_permission(generation, request)

        async def on_elicitation(request: InboundRequest) -> Any:
            return await self._route_elicitation(generation, request)

        def on_violation(violation: ProtocolViolation) -> None:
            self._quarantine_later(ProtocolBroken(violation.kind), generation)

        connection = Connection(
            process.stdout,
            process.stdin,
            max_frame_bytes=self.spec.max_frame_bytes,
            tap=JournalTap(journal, on_skipped=functools.partial(self._on_skipped, generation)),
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
            initialize_transform=self.extensions.initialize_transform(),
            protocol=self.spec.protocol,
            elicitation=elicitation,
        )
        self._watch(generation, connection)
        try:
            self.initialized = await client.initialize(budget)
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
            self.extensions.started(client, [message for message, _ref in startup])
        except ExtensionPayloadInvalid:
            await self._stop_generation(generation, "FAILED", failure=True)
            raise
        if generation != self.generation:
            # Quarantined while starting (a violation during initialize): never handed out.
            raise TransportClosed("the agent was lost while it was starting")
        self.phases.move(LanePhase.RUNNING)
        self.client = client
        return client

    def _watch(self, generation: int, connection: Connection[JournalRef]) -> None:
        async def watch() -> None:
            reason = await connection.drained()
            if generation != self.generation:
                return
            # The child went away on its own: every active run of the lane is ambiguous.
            process = self.process
            returncode: int | None = None
            if process is not None:
                with contextlib.suppress(TimeoutError, BatonError):
                    returncode = await asyncio.wait_for(process.wait(), EXIT_STATUS_WAIT_SECONDS)
            if generation != self.generation:
                return
            await self.quarantine(cause_of(reason, returncode), generation)

        self._spawn_callback(watch())

    async def loss_cause(self, error: BaseException | None) -> LossCause:
        """Why this lane lost a run's generation, for the run's diagnosis: the cause a
        :class:`LaneLost` carries, else ``error`` classified, with the child's exit status when
        it exited (waiting at most :data:`EXIT_STATUS_WAIT_SECONDS` for it). Cancellation-safe:
        it only waits."""
        if isinstance(error, LaneLost):
            cause: LossCause = error.cause  # the errors home types it loosely
            return cause
        process = self.process or self._last_process
        returncode: int | None = None
        if process is not None and type(error) is TransportClosed:
            with contextlib.suppress(TimeoutError, BatonError):
                returncode = await asyncio.wait_for(process.wait(), EXIT_STATUS_WAIT_SECONDS)
        return cause_of(error, returncode)

    def _closed_cause(self) -> LossCause:
        """The cause of a generation whose connection closed before its watcher stopped it."""
        connection = self.connection
        reason = connection.close_reason if connection is not None else None
        process = self.process
        return cause_of(reason, process.returncode if process is not None else None)

    def _on_skipped(self, generation: int, _skipped: Skipped) -> None:
        """A line that is not ACP was journaled: in strict mode the lane is quarantined."""
        if self.spec.strict_mode:
            self._quarantine_later(
                ProtocolBroken("strict mode: a line that is not ACP"), generation
            )

    def _quarantine_later(self, cause: LossCause, generation: int) -> None:
        """Schedule a quarantine of ``generation`` from the read loop, at most once per
        generation: an agent that floods violations (100,000 pipelined requests) costs one task,
        not one per frame. The generation stays valid until the task runs."""
        if generation != self.generation or self._quarantine_scheduled == generation:
            return
        self._quarantine_scheduled = generation
        self._spawn_callback(self.quarantine(cause, generation))

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
        self, generation: int, messages: list[Message], refs: Sequence[object]
    ) -> None:
        """The one router of session updates, for a run of them read together (a single update
        is a run of one); a plain call from the read loop, so it never waits for anything.

        Updates of owned sessions with an active run are handed to their turns in order,
        consecutive ones of one session together (a tool-call update after the tracker saw it,
        and before it sees the next). Any other update takes :meth:`_route_one`. A generation
        that is no longer current (a fenced one) only counts its messages."""
        if generation != self.generation:
            self.fenced_messages += len(messages)
            return
        sessions = self.sessions
        owner: LaneSession | None = None
        owner_id: object = None  # the provider id of ``owner`` (checked once per change)
        updates: list[dict[str, Any]] = []
        for index, message in enumerate(messages):
            params = message.get("params")
            provider_id = params.get("sessionId") if type(params) is dict else None
            if provider_id != owner_id or owner is None:
                if updates:
                    _hand_over(owner, updates)
                    updates = []
                session = sessions.get(provider_id) if type(provider_id) is str else None
                if session is None or session.replaying or session.active is None:
                    owner, owner_id = None, None
                    self._route_one(generation, session, provider_id, message, refs[index])
                    if generation != self.generation:
                        # The update quarantined the lane: the rest of the run is fenced.
                        self.fenced_messages += len(messages) - index - 1
                        return
                    continue
                owner, owner_id = session, provider_id
            update = params.get("update")  # type: ignore[union-attr]
            if type(update) is not dict:
                continue
            if owner.decoder is None:
                if update.get("sessionUpdate") in TOOL_CALL_UPDATES:
                    # The tracker sees a tool call after the turn saw everything before it.
                    if updates:
                        _hand_over(owner, updates)
                        updates = []
                    owner.tracker.observe(update)
                updates.append(update)
                continue
            for normalized in owner.decoded(update):
                if normalized.get("sessionUpdate") in TOOL_CALL_UPDATES:
                    if updates:
                        _hand_over(owner, updates)
                        updates = []
                    owner.tracker.observe(normalized)
                updates.append(normalized)
            if is_idle(update):
                # v2: the idle state ends the run; what follows in this read is the session's
                # (the owner is looked up again, and finds no active run).
                _hand_over(owner, updates)
                updates = []
                owner, owner_id = None, None
        if updates:
            _hand_over(owner, updates)

    def _route_one(
        self,
        generation: int,
        session: LaneSession | None,
        provider_id: object,
        message: Message,
        ref: object,
    ) -> None:
        """An update that is not for an active run: early (a session being set up), inactive
        (ignored), foreign (quarantines the lane, invalidating it at once), replayed history,
        or late (the session's: recorded by a task)."""
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
            self._quarantine_soon(ForeignSession("an update"), generation)
            return
        raw = message["params"].get("update")
        if type(raw) is not dict:
            return
        for update in session.decoded(raw):
            self._route_session_update(session, update, ref)

    def _route_session_update(
        self, session: LaneSession, update: dict[str, Any], ref: object
    ) -> None:
        """One normalized update of an owned session, off the hot path."""
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
        self._spawn_callback(self.recorder.late_update(session.session_id, update, ref))

    async def _route_permission(self, generation: int, request: InboundRequest) -> Any:
        client = self.client
        if client is not None and client.codec.normalizes:
            # A v2 request, read into the normalized shape (its subject feeds the decoder).
            _provider_id, owner = self._session_for(request.params)
            params = client.codec.permission_params(
                request.params, request.id, owner.decoder if owner is not None else None
            )
            request = replace(request, params=params)
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
                self.quarantine(ForeignSession("a permission request"), generation)
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
            self._route_updates(self.generation, [message], (ref,))

    def adopt(self, session: LaneSession) -> list[tuple[Message, object]]:
        """Register an opened session; return updates that arrived before its id was known.
        The session gets the negotiated codec's update decoder (v2) here."""
        if session.decoder is None and self.client is not None:
            session.decoder = self.client.codec.session_decoder(session.provider_id)
        self.sessions[session.provider_id] = session
        self.inactive.discard(session.provider_id)
        return self._early.pop(session.provider_id, [])

    def release(self, provider_id: str) -> None:
        """The session is no longer attached here; its later traffic is inactive traffic."""
        if self.sessions.pop(provider_id, None) is not None:
            self.inactive.add(provider_id)

    # --- loss, quarantine, shutdown --------------------------------------------------------

    async def quarantine(self, reason: str | LossCause, generation: int | None = None) -> None:
        """Invalidate the generation first, then shut its child down, drain what was accepted,
        and mark every active run of the lane for recovery (their turns are told a
        :class:`LaneLost` naming the cause; a plain ``reason`` is a :class:`Quarantined` cause).
        Idempotent per generation.
        Never await it from the connection's read loop (it drains that loop): a read-loop
        handler calls :meth:`_quarantine_soon`."""
        cause = reason if isinstance(reason, LossCause) else Quarantined(reason)
        bad_generation = self._invalidate(cause, generation)
        if bad_generation is not None:
            await self._finish_quarantine(bad_generation, cause)

    def _quarantine_soon(self, cause: LossCause, generation: int) -> None:
        """:meth:`quarantine` for the read loop: the generation is invalidated (and its active
        runs told) now; the stop sequence runs as a task of its own."""
        bad_generation = self._invalidate(cause, generation)
        if bad_generation is not None:
            self._spawn_callback(self._finish_quarantine(bad_generation, cause))

    def _invalidate(self, cause: LossCause, generation: int | None) -> int | None:
        """The synchronous first step of a quarantine: the generation it stops (None when
        there is nothing to stop)."""
        if generation is not None and generation != self.generation:
            return None
        if self.connection is None and self.process is None:
            return None
        bad_generation = self.generation
        self.generation += 1  # invalidate before anything can await
        self._settled.clear()
        try:
            loss = LaneLost(cause)
            for session in [s for s in self.sessions.values() if s.active is not None]:
                assert session.active is not None
                session.active.on_lost(loss)
        except BaseException:
            self._settled.set()
            raise
        return bad_generation

    async def _finish_quarantine(self, bad_generation: int, cause: LossCause) -> None:
        reason = self.redact(cause.describe())
        try:
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
        if self.process is None and self.connection is None:
            return None  # already stopped: keep the state it was recorded with (LOST stays)
        self.phases.move(LanePhase.STOPPING)
        self._stopped.clear()
        try:
            return await self._stop_child(generation, state, failure, reason)
        finally:
            if self.phase is LanePhase.STOPPING:
                # Interrupted (cancelled) before the child's end was certain.
                self.phases.move(LanePhase.FENCED, fence="the agent's stop was interrupted")
            self._stopped.set()

    async def _stop_child(
        self, generation: int, state: str, failure: bool, reason: str | None
    ) -> ShutdownResult | None:
        """The stop sequence of :meth:`_stop_generation` (the lane is STOPPING): shut the child
        down, drain its output, then IDLE, or FENCED when the child's end is not certain."""
        process, connection, server_id = self.process, self.connection, self.server_id
        # Kept for a start failure's diagnostic (see last_exit): the generation is gone by the
        # time the caller reports it.
        self._last_process = process or self._last_process
        self.process = self.connection = self.client = None
        self.server_id = None
        self.extensions.lost("shutdown" if state == "EXITED" else "process_lost")
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
                await asyncio.wait_for(connection.drained(), timeout=DRAIN_WAIT_SECONDS)
            except TimeoutError:
                drained = False
            await connection.close()
        if result is not None and result.survived:
            self.phases.move(LanePhase.FENCED, fence="the agent's process group survived SIGKILL")
        elif not drained:
            self.phases.move(LanePhase.FENCED, fence="the agent's output could not be drained")
        else:
            self.phases.move(LanePhase.IDLE)
        if server_id is not None:
            diagnostics = reason
            if process is not None:
                tail = process.stderr_tail()
                if tail:
                    diagnostics = f"{reason or ''}\n{tail[-MAX_DIAGNOSTIC_STDERR_CHARS:]}".strip()
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
