"""The runtime: Baton's library entry point.

>>> async with Runtime(data_dir="/tmp/baton") as runtime:          # doctest: +SKIP
...     result = await runtime.run(RunRequest(prompt="echo hi", agent_command="baton agent scripted"))

A :class:`Runtime` owns the data directory (journal and store), one lane per runtime identity
(profile, executable, lane), the runtime-wide stream memory bound, and the asker used by the
``ask`` policy. On start it passively reconciles what a previous process left behind (stale
servers become LOST, interrupted runs RECOVERY_REQUIRED) without starting any agent.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from baton.connection.client import AcpClient
from baton.errors import (
    AgentNotInstalled,
    BatonError,
    BudgetExpired,
    ConfigurationError,
    LaneLost,
    RuntimeNotOpen,
    SessionMutationAmbiguous,
    TransportClosed,
)
from baton.journal import Journal
from baton.redaction import SecretValues
from baton.runtime.agents.discovery import DiscoveryCache
from baton.runtime.agents.launch import CUSTOM_PROFILE_ID, LaunchSpec, from_command, from_profile
from baton.runtime.agents.profiles import BUILTIN_PROFILES, Profile
from baton.runtime.agents.review_lane import DEFAULT_LANE, check_review_root
from baton.runtime.agents.tools_file import load_tool_declarations
from baton.runtime.lanes.lane import Lane, LaneSession
from baton.runtime.lanes.loss import Quarantined
from baton.runtime.lanes.reconcile import reconcile
from baton.runtime.lanes.recorder import Recorder
from baton.runtime.permissions.ask import Asker, NoUserAsker
from baton.runtime.permissions.elicitations import Elicitor
from baton.runtime.permissions.policies import (
    PolicyName,
    available_policies,
    check_policy,
    check_run_settings,
    parse_policy,
)
from baton.runtime.run import Run, RunTable
from baton.runtime.sessions.setup import SetupEnded, SetupWindow, open_session
from baton.runtime.tracing import RunTrace, tracer_for
from baton.runtime.turns.context import RunContext
from baton.runtime.turns.controls import (
    ControlSet,
    confirm_mutation,
    project_controls,
    refuse_while,
    resolve_control,
)
from baton.runtime.turns.events import RunEvent
from baton.runtime.turns.execution import (
    execute_turn,
    record_outcome,
    record_setup_failure,
    release_session,
)
from baton.runtime.turns.outcome import (
    EXIT_CODES,
    RunOutcome,
    TurnOutcome,
    exit_code_of,
    run_outcome_of,
)
from baton.runtime.turns.request import RunRequest
from baton.runtime.turns.streaming import StreamMemory
from baton.runtime.turns.system_prompts import requested_system_prompt
from baton.runtime.turns.turn import CALLER_CANCELLED, INTERRUPT_COMPLETION_TIMEOUT_SECONDS
from baton.runtime.turns.workspace_roots import resolve_additional_directories
from baton.runtime.workspaces.tracking import ActiveWorkspace, WorkspaceTracker
from baton.runtime.workspaces.worktrees import DEFAULT_WORKTREE_DIRNAME, WorktreePlan
from baton.store import Store, prepare_data_dir, resolve_data_dir
from baton.store.location import resolve_store
from baton.store.models import RUN_STATUSES, RunStatus, WorkspaceRecord
from baton.wire.budget import (
    DEFAULT_REQUEST_LIMIT_SECONDS,
    BoundSetting,
    BudgetClock,
    TurnBudget,
    resolve_idle_bound,
)
from baton.wire.capabilities import NO_ELICITATION, ElicitationOffer
from baton.wire.extensions import steering

if TYPE_CHECKING:
    from opentelemetry.trace import TracerProvider

__all__ = [
    "AgentNotInstalled",
    "Run",
    "RunOutcome",
    "RunRequest",
    "RunResult",
    "Runtime",
    "data_dir_path",
]


@dataclass
class RunResult:
    """The outcome of a run, as `baton run` reports it in its last line."""

    run_id: str
    status: RunStatus
    stop_reason: str | None
    exit_code: int
    error_code: str | None = None
    message: str | None = None
    session_id: str | None = None
    provider_session_id: str | None = None
    tool_calls: int = 0
    duration_ms: int = 0
    text: str = ""
    permissions: list[dict[str, Any]] = field(default_factory=list)
    bound: str | None = None
    retryable: bool = False
    skipped_frames: int = 0
    violations: int = 0
    #: The class of the ending (its exit code is ``EXIT_CODES[outcome]``); None only for a
    #: result built by hand.
    outcome: RunOutcome | None = None
    #: What the agent reported of usage: ``{used, size, cost?, turn?}``, or None.
    usage: dict[str, Any] | None = None
    #: The turn's workspace comparison (counts, files without diffs, unreported paths; the
    #: diffs are in the run's ``workspace_changes`` item), or None without a workspace.
    workspace_changes: dict[str, Any] | None = None
    #: The run's workspace (``name``, ``kind``, ``path``, ``branch``, ``baseCommit``,
    #: ``compared``), or None when it had none (docs/workspaces.md).
    workspace: dict[str, Any] | None = None

    @property
    def unreported_changes(self) -> int:
        """How many of the turn's workspace changes no tool call or permission reported."""
        counts = (self.workspace_changes or {}).get("counts") or {}
        return int(counts.get("unreported", 0))

    #: The run's warnings (``{code, message}``), as its ``warning`` events said them: a native
    #: mode chosen explicitly that acts on its own, a starting mode that may bypass approvals.
    warnings: list[dict[str, str]] = field(default_factory=list)

    def to_event(self) -> RunEvent:
        """The final ``result`` event."""
        return RunEvent(
            "result",
            self.run_id,
            {
                "status": self.status,
                "stopReason": self.stop_reason,
                "exitCode": self.exit_code,
                "errorCode": self.error_code,
                "message": self.message,
                "sessionId": self.session_id,
                "providerSessionId": self.provider_session_id,
                "toolCalls": self.tool_calls,
                "permissions": len(self.permissions),
                "durationMs": self.duration_ms,
                "bound": self.bound,
                "retryable": self.retryable,
                "skippedFrames": self.skipped_frames,
                "violations": self.violations,
                "usage": self.usage,
                "workspace": self.workspace,
                "workspaceChanges": self.workspace_changes,
                "warnings": [dict(w) for w in self.warnings],
            },
        )

    @classmethod
    def from_event(
        cls,
        event: RunEvent,
        *,
        text: str = "",
        permissions: Sequence[dict[str, Any]] = (),
    ) -> RunResult:
        """The result a ``result`` event describes (the inverse of :meth:`to_event`), with
        the turn's ``text`` and ``permissions`` decisions, which the event only counts: a
        caller reads them from the run's other events.

        A missing or non-integer ``exitCode`` (a sender that predates it) is derived from the
        status, as the run's own ending would be: an absent field never reads as success. A
        status this Baton does not know (a newer sender) reads as FAILED, with the exit code
        as sent."""
        data = event.data
        sent_status = data.get("status")
        status: RunStatus = sent_status if sent_status in RUN_STATUSES else "FAILED"
        error_code, bound = data.get("errorCode"), data.get("bound")
        sent = data.get("exitCode")
        derived = run_outcome_of(status, error_code=error_code, bound=bound)
        exit_code = sent if type(sent) is int else exit_code_of(derived)
        usage = data.get("usage")
        return cls(
            event.run_id,
            status,
            data.get("stopReason"),
            exit_code,
            error_code=error_code,
            message=data.get("message"),
            session_id=data.get("sessionId"),
            provider_session_id=data.get("providerSessionId"),
            tool_calls=int(data.get("toolCalls") or 0),
            duration_ms=int(data.get("durationMs") or 0),
            text=text,
            permissions=list(permissions),
            bound=bound,
            retryable=bool(data.get("retryable")),
            skipped_frames=int(data.get("skippedFrames") or 0),
            violations=int(data.get("violations") or 0),
            outcome=_OUTCOME_OF_EXIT_CODE.get(exit_code, derived),
            usage=usage if isinstance(usage, dict) else None,
            warnings=[
                {"code": str(w.get("code")), "message": str(w.get("message"))}
                for w in data.get("warnings") or ()
                if isinstance(w, dict)
            ],
        )


#: Each exit code's outcome (:data:`EXIT_CODES` is one-to-one), for a result read back.
_OUTCOME_OF_EXIT_CODE: Final = {code: outcome for outcome, code in EXIT_CODES.items()}


def _offers_less(advertised: ElicitationOffer, wanted: ElicitationOffer) -> bool:
    """Whether a process offered ``advertised`` lacks a mode of ``wanted``."""
    return (wanted.form and not advertised.form) or (wanted.url and not advertised.url)


class Runtime:
    """Baton's core: lanes, sessions, turns, over one data directory."""

    def __init__(
        self,
        *,
        data_dir: str | os.PathLike[str] | None = None,
        store: str | None = None,
        environ: Mapping[str, str] | None = None,
        asker: Asker | None = None,
        profiles: Mapping[str, Profile] | None = None,
        config_overrides: Mapping[str, str] | None = None,
        request_limit: float = DEFAULT_REQUEST_LIMIT_SECONDS,
        interrupt_timeout: float = INTERRUPT_COMPLETION_TIMEOUT_SECONDS,
        idle_timeout: BoundSetting = None,
        elicitor: Elicitor | None = None,
        elicitation_policies: frozenset[PolicyName] | None = None,
        workspace_root: str | os.PathLike[str] | None = None,
        tracer_provider: TracerProvider | None = None,
    ) -> None:
        self.environ = dict(os.environ if environ is None else environ)
        #: The OpenTelemetry tracer runs are traced with (``tracer_provider``'s, else the
        #: global provider's when the ``otel`` extra is installed), or None: not traced.
        self.tracer = tracer_for(self.environ, tracer_provider)
        self.data_dir = resolve_data_dir(
            str(data_dir) if data_dir is not None else None, self.environ
        )
        #: The run store: a ``postgresql://`` URL (``store``, else ``BATON_STORE``) shared by
        #: hosts, else the data directory's SQLite file. The journal stays in the data
        #: directory either way (docs/fleet.md).
        self.store_location = resolve_store(store, self.environ)
        self.asker: Asker = asker or NoUserAsker()
        #: Who answers the agents' elicitations (a person at a TTY, an API): only then is
        #: elicitation advertised; None declines every request (recorded).
        self.elicitor = elicitor
        #: The policies whose runs the elicitor answers (None: every run). The service asks
        #: only under ``ask``: somebody is expected to watch those runs; an unattended run is
        #: never offered elicitation by the lane it starts, and is declined on a shared lane.
        self.elicitation_policies = elicitation_policies
        self.profiles = dict(BUILTIN_PROFILES if profiles is None else profiles)
        self.config_overrides = dict(config_overrides or {})
        self.request_limit = request_limit
        self.interrupt_timeout = interrupt_timeout
        #: Every turn's idle bound unless its run or profile sets one (the config file's
        #: ``[turns] idle_timeout``); None: the default.
        self.idle_timeout: BoundSetting = idle_timeout
        #: Workspaces (``RunRequest.workspace``): worktrees go under ``workspace_root`` (the
        #: config file's ``[workspaces] root``), else ``<data dir>/worktrees``.
        self.workspaces = WorkspaceTracker(
            str(workspace_root or Path(self.data_dir) / DEFAULT_WORKTREE_DIRNAME), self.environ
        )
        self.memory = StreamMemory()
        self._lanes: dict[tuple[str, str, str], Lane] = {}
        self.discovery = DiscoveryCache()
        self._journal: Journal | None = None
        self._store: Store | None = None
        self._recorder: Recorder | None = None
        self.reconciled: list[str] = []
        #: What preparing the data directory changed (created, tightened), for the surface to
        #: say; None when nothing changed or before :meth:`open`.
        self.data_dir_notice: str | None = None
        #: The runs this runtime drives, by run id and by provider session, from creation
        #: until their result is known (surfaces look runs up here).
        self.runs = RunTable()
        # Discovery fingerprints of the executables resolved, by lane identity.
        self._fingerprints: dict[tuple[str, str, str], tuple[object, ...] | None] = {}

    # --- lifecycle -------------------------------------------------------------------------

    async def open(self) -> None:
        """Open the journal and store, and passively reconcile a previous process's state."""
        if self._store is not None:
            return
        self.data_dir_notice = prepare_data_dir(self.data_dir).notice
        journal = Journal.in_data_dir(self.data_dir)
        url = self.store_location.url
        store = (
            Store.open(self.data_dir, flush=journal.flush_refs)
            if url is None
            else Store(url, flush=journal.flush_refs)
        )
        # Retention keeps every record the store cites (issue 15: a flood must not prune the
        # running turn's own prompt).
        journal.set_pinned_floor(store.pinned_sequence_floor)
        self._journal, self._store, self._recorder = journal, store, Recorder(store)
        self.reconciled = await reconcile(store)

    async def close(self) -> None:
        """Abandon the runs still going (see :meth:`Run.abandon
        <baton.runtime.run.Run.abandon>`: RECOVERY_REQUIRED when the prompt was outstanding),
        shut every lane down, then close files."""
        for run in self.runs:
            with contextlib.suppress(BatonError, OSError):
                await run.abandon()
        for lane in list(self._lanes.values()):
            with contextlib.suppress(BatonError, OSError):
                await lane.shutdown()
        self._lanes.clear()
        if self._journal is not None:
            await self._journal.close()
        if self._store is not None:
            self._store.close()
        self._journal = self._store = self._recorder = None

    async def __aenter__(self) -> Runtime:
        await self.open()
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()

    # --- what surfaces read ----------------------------------------------------------------

    @property
    def opened(self) -> bool:
        """Whether the journal and the store are open (:meth:`open`, not yet :meth:`close`)."""
        return self._store is not None

    @property
    def store(self) -> Store:
        """The run store, for reading runs, sessions and conversations (and for the rooms
        above the runtime to write their own records); the runtime writes its runs' records
        itself. RUNTIME_NOT_OPEN before :meth:`open` and after :meth:`close`."""
        if self._store is None:
            raise RuntimeNotOpen("the runtime is not open (open() it, or use `async with`)")
        return self._store

    @property
    def journal(self) -> Journal:
        """The protocol journal, for reading (pages, verification). RUNTIME_NOT_OPEN before
        :meth:`open` and after :meth:`close`."""
        if self._journal is None:
            raise RuntimeNotOpen("the runtime is not open (open() it, or use `async with`)")
        return self._journal

    async def agent_client(self, request: RunRequest) -> AcpClient:
        """The connected client of ``request``'s agent (its lane started when needed), for
        one request outside a run (``logout``, ``session/list``, ``session/delete``).
        Cancellation: while the agent starts, as the lane's start."""
        await self.open()
        spec = await self.resolve(request)
        lane = await self._lane_for(spec, lambda _event: None)
        return await lane.ensure_started(None)

    def _kept_by_provider_id(self, provider_session_id: str) -> tuple[Lane, LaneSession] | None:
        for lane in self._lanes.values():
            kept = lane.sessions.get(provider_session_id)
            if kept is not None and lane.running:
                return lane, kept
        return None

    def kept_session(self, provider_session_id: str) -> LaneSession | None:
        """The kept (attached) session of agent session ``provider_session_id`` whose lane
        runs in this process, else None."""
        found = self._kept_by_provider_id(provider_session_id)
        return found[1] if found is not None else None

    async def steer_kept_session(
        self, provider_session_id: str, text: str
    ) -> steering.SteerAnswer | None:
        """Send ``text`` to the running turn of a kept session through the agent's steering
        extension (issue 29): the agent's answer, or None when no lane of this process holds
        the session or its agent does not advertise steering (nothing sent). Cancellation:
        as any bounded request (cancelled at the agent)."""
        found = self._kept_by_provider_id(provider_session_id)
        if found is None or not found[0].steering_supported:
            return None
        lane, kept = found
        return await lane.steer(kept, text)

    def release_kept_session(self, provider_session_id: str) -> None:
        """Forget a kept session (the agent keeps it; nothing is sent)."""
        for lane in self._lanes.values():
            if provider_session_id in lane.sessions:
                lane.release(provider_session_id)

    async def close_kept_session(self, provider_session_id: str) -> str:
        """Close a kept session: session/close when the agent advertises it, then released and
        recorded CLOSED; what happened, as a note for the conversation's record. Never
        starts a process only to close. Cancellation: cancelled while session/close is
        outstanding, the session is still released and recorded CLOSED."""
        note = "closed locally; the agent does not advertise session/close, so it keeps it"
        for lane in list(self._lanes.values()):
            kept = lane.sessions.get(provider_session_id)
            if kept is None:
                continue
            try:
                client = lane.client if lane.running else None
                if client is not None and client.capabilities.session_close:
                    note = "closed locally; session/close was not confirmed"
                    await client.close_session(provider_session_id)
                    note = "closed with session/close"
            except BatonError as exc:
                note = f"closed locally; session/close failed: {exc.code}"
            finally:
                lane.release(provider_session_id)
                if self._recorder is not None:
                    with contextlib.suppress(BatonError):
                        self._recorder.session_state(kept.session_id, "CLOSED")
        return note

    async def logout(
        self,
        *,
        agent: str | None = None,
        agent_command: str | Sequence[str] | None = None,
        env_keys: Sequence[str] = (),
    ) -> None:
        """Send ``logout`` to an agent because a user asked for it by name (Baton never logs out
        on its own). Starts (or reuses) the agent's lane; refused with
        :class:`~baton.errors.CapabilityNotAdvertised` naming ``auth.logout`` when the agent did
        not advertise it, before anything beyond ``initialize`` is written. Cancellation: the
        request is abandoned; the lane stays as it is."""
        request = RunRequest(
            prompt="logout", agent=agent, agent_command=agent_command, env_keys=env_keys
        )
        client = await self.agent_client(request)
        await client.logout()

    # --- resolving the agent ---------------------------------------------------------------

    async def resolve(self, request: RunRequest) -> LaunchSpec:
        """The launch spec of the request's agent (discovery for a profile)."""
        if (request.agent is None) == (request.agent_command is None):
            raise ConfigurationError("name exactly one of agent (a profile) and agent_command")
        if request.lane != DEFAULT_LANE and request.agent_command is not None:
            raise ConfigurationError("the review lane needs a profile with a read-only sandbox")
        if request.agent_command is not None:
            spec = from_command(
                request.agent_command,
                self.environ,
                env_keys=request.env_keys,
                allow_unattended=request.allow_unattended,
            )
            if request.protocol is not None:
                spec = replace(spec, protocol=request.protocol.declaring_v2(False))
            return spec
        assert request.agent is not None
        profile = self.profiles.get(request.agent)
        if profile is None:
            known = ", ".join(sorted(self.profiles))
            raise ConfigurationError(f"unknown agent profile {request.agent!r}; known: {known}")
        result = await self.discovery.discover(
            profile,
            parent_env=self.environ,
            config_override=self.config_overrides.get(profile.id),
        )
        if result.selected is None:
            reasons = "; ".join(f"{r.path}: {r.reason}" for r in result.rejected) or "none found"
            raise AgentNotInstalled(
                f"no usable {profile.id} executable ({reasons}); run `baton doctor {profile.id}`"
            )
        spec = from_profile(profile, result.selected, self.environ, lane=request.lane)
        if request.protocol is not None:
            # The run's pin, with the profile's v2 declaration (``auto`` offers 2 only there).
            spec = replace(spec, protocol=request.protocol.declaring_v2(spec.protocol.v2_declared))
        self._fingerprints[spec.identity] = result.fingerprint
        return spec

    async def _lane_for(
        self,
        spec: LaunchSpec,
        emit: Callable[[RunEvent], None] | None = None,
        *,
        elicitation: ElicitationOffer = NO_ELICITATION,
    ) -> Lane:
        """The lane of ``spec``'s runtime identity, created on first use (started lazily).

        When the profile's executable changed since a lane of the same profile and lane name
        started (another path, or the same path with another file), an idle old lane is shut
        down; one with an active or ambiguous prompt is never terminated for a settings
        change: it keeps running and the change waits (a ``warning`` event says so).

        ``elicitation``: the modes the calling run can answer. A running lane whose process was
        offered fewer (another run started it) is replaced when it is idle and holds no kept
        session, so the run's agent is offered them; otherwise it keeps running and the run is
        not offered elicitation (advertisement is per process, at initialize).
        """
        fingerprint = self._fingerprints.get(spec.identity)
        for identity, old in list(self._lanes.items()):
            same_lane = identity[0] == spec.profile_id and identity[2] == spec.lane
            changed = identity != spec.identity or (
                fingerprint is not None
                and old.fingerprint is not None
                and old.fingerprint != fingerprint
            )
            if not (same_lane and changed) or spec.profile_id == CUSTOM_PROFILE_ID:
                continue
            if old.busy:
                if emit is not None:
                    emit(
                        RunEvent(
                            "warning",
                            "",
                            {
                                "code": "RUNTIME_RESTART_REQUIRED",
                                "message": "the agent's executable changed; its lane has an "
                                "active or ambiguous prompt, so it keeps running until that ends",
                            },
                        )
                    )
                continue
            await old.shutdown()
            del self._lanes[identity]
        lane = self._lanes.get(spec.identity)
        if (
            lane is not None
            and lane.running
            and _offers_less(lane.advertised, elicitation)
            and not lane.busy
            and not lane.sessions
        ):
            # Elicitation is negotiated once, at initialize: an idle lane started for a run
            # nobody answers is replaced for one somebody does (never downgraded: later
            # unattended runs on it are declined, no_answerer).
            await lane.shutdown()
            del self._lanes[spec.identity]
            lane = None
        if lane is not None and lane.spec.protocol != spec.protocol and not lane.busy:
            # Another ACP version pin (--protocol): an idle lane is replaced, since its
            # version was negotiated once, at initialize. A busy one keeps running.
            await lane.shutdown()
            del self._lanes[spec.identity]
            lane = None
        if lane is None:
            assert self._journal is not None and self._recorder is not None
            lane = Lane(
                spec,
                journal=self._journal,
                recorder=self._recorder,
                request_limit=self.request_limit,
                on_quarantine=self._quarantined,
            )
            lane.fingerprint = fingerprint
            self._lanes[spec.identity] = lane
        return lane

    async def _quarantined(self, lane: Lane, reason: str) -> None:
        """After a quarantine: every turn of the lane is lost. The lane already told its active
        turns the typed cause (the first loss a turn hears is the one it keeps); a turn not
        active yet hears the quarantine's reason."""
        for run in self.runs.on_lane(lane):
            run.slot.quarantined(lane, LaneLost(Quarantined(reason)))

    # --- running ---------------------------------------------------------------------------

    async def start(
        self,
        request: RunRequest,
        *,
        on_event: Callable[[RunEvent], None] | None = None,
    ) -> Run:
        """Start one prompt; its :class:`~baton.runtime.run.Run` handle as soon as the run's
        row exists (the agent is set up and prompted in a task the handle follows).

        A request refused before a run exists (an unknown profile, a policy the agent does
        not allow, a bad working directory) raises its stable error here, and nothing is
        written. ``on_event``: every event goes to it as it happens, and the handle's
        :meth:`~baton.runtime.run.Run.events` stream is not kept (nothing is held for a
        reader who never comes); without it, events wait for that stream.

        Every event is redacted before it leaves the runtime, with the same rules and exact
        secrets as the run store (its lane's, once the lane is known): callers (the CLI's
        ``--format json`` and text output, library users) never see what the store would not
        keep. An ad-hoc agent's launch form (``agent_command``, redacted, and the names of
        its ``env_keys``) is recorded on the run, so `baton recover --attach` can start the
        same agent again.

        Traced (OpenTelemetry, the ``otel`` extra; docs/tracing.md) when :attr:`tracer` is
        set: the spans are built from the same redacted events, and end with the run.

        Cancellation: cancelled before the run exists, nothing was written; the run exists
        only once this returns."""
        await self.open()
        assert self._store is not None and self._recorder is not None
        recorder = self._recorder
        lane_secrets: list[SecretValues] = []
        early: list[RunEvent] = []
        handle: list[Run] = []
        run_trace = RunTrace(self.tracer) if self.tracer is not None else None

        def emit(event: RunEvent) -> None:
            event = event.redacted(lane_secrets[0] if lane_secrets else None)
            if run_trace is not None:
                run_trace.observe(event)
            if handle:
                handle[0].publish(event)
            else:
                early.append(event)  # a lane warning before the run exists

        started = time.monotonic()
        policy = parse_policy(request.policy)
        check_run_settings(request.execution)
        spec = await self.resolve(request)
        ad_hoc = spec.profile_id == CUSTOM_PROFILE_ID
        policies = available_policies(
            spec.allowed_policies,  # type: ignore[arg-type]
            ad_hoc=ad_hoc,
            allow_unattended=request.allow_unattended,
        )
        check_policy(policy, policies, profile=spec.profile_id, ad_hoc=ad_hoc)
        cwd = os.path.realpath(request.cwd or os.getcwd())
        asked = request.workspace if request.workspace not in (None, "none") else None
        if asked is not None and asked != "worktree":
            cwd = os.path.realpath(asked)  # --workspace DIR: this directory, as today
        if not os.path.isdir(cwd):
            raise ConfigurationError(f"the working directory {cwd} is not a directory")
        plan, recorded = await self._workspace_ask(request, asked, cwd)
        # Checked before anything starts; the resolved roots replace the asked ones.
        request = dataclasses.replace(
            request,
            additional_directories=resolve_additional_directories(
                request.additional_directories, cwd
            ),
        )
        requested_system_prompt(request.system_prompt, request.append_system_prompt)
        tools = load_tool_declarations(request.tools_file, self.environ)
        if spec.read_only:
            check_review_root(cwd, self.environ)
            if len(tools):
                raise ConfigurationError("the read-only review lane takes no MCP servers (--tools)")
        elicitor = self.elicitor_for(policy)
        lane = await self._lane_for(
            spec, emit, elicitation=elicitor.offer if elicitor is not None else NO_ELICITATION
        )
        # The tools' env values go to the agent: from now on they are secrets of its lane.
        lane.secrets.add(tools.secret_values())
        lane_secrets.append(lane.secrets)
        prompt_text = lane.redact(request.prompt)
        if request.queued_run_id is not None:
            run_id = await recorder.take_queued_run(request.queued_run_id)
        else:
            run_id = recorder.create_run(
                prompt_text,
                policy=policy,
                unattended=request.allow_unattended and ad_hoc,
                profile=spec.profile_id,
            )
        active: ActiveWorkspace | None = None
        try:
            active = await self._open_workspace(run_id, asked, cwd, plan, recorded, request.session)
        except BatonError as exc:
            await recorder.run_status(run_id, "FAILED", error_code=exc.code, diagnostic=exc.message)
            raise
        if active is not None:
            cwd = active.cwd
        # From here on nothing awaits before the handle is returned.
        run = Run(
            run_id,
            lane=lane,
            on_event=on_event,
            workspace=_workspace_view(active) if active is not None else None,
        )
        handle.append(run)
        for event in early:
            run.publish(event)
        loop = asyncio.get_running_loop()
        idle = resolve_idle_bound(
            ("run", request.budget.idle),
            ("profile", spec.profile.idle_timeout if spec.profile is not None else None),
            ("config", self.idle_timeout),
        )
        absolute = request.budget.absolute
        budget = TurnBudget(idle=idle.seconds, absolute=absolute)
        clock: BudgetClock | None = None
        if idle.seconds is not None or absolute is not None:
            clock = budget.start(loop.time())
        # Setup (start, initialize, session/new) runs within a configured budget; under the
        # default idle bound alone it keeps the fixed request limit, which is shorter.
        setup_clock = clock if idle.source != "default" or absolute is not None else None
        emit(
            RunEvent(
                "run_started",
                run_id,
                {
                    "agent": spec.profile_id,
                    "cwd": cwd,
                    "policy": policy,
                    "command": spec.launch_form,
                    "idleTimeout": idle.seconds,
                    "idleTimeoutSource": idle.source,
                    **({"workspace": _workspace_view(active)} if active is not None else {}),
                },
            )
        )
        ctx = RunContext(
            run_id=run_id,
            request=request,
            spec=spec,
            lane=lane,
            cwd=cwd,
            tools=tools,
            policy=policy,
            recorder=recorder,
            clock=clock,
            setup_clock=setup_clock,
            emit=emit,
            slot=run.slot,
            elicitor=elicitor,
            workspace=active,
            workspaces=self.workspaces,
        )
        run.drive(asyncio.ensure_future(self._drive(run, ctx, started, run_trace)))
        self.runs.add(run)
        return run

    async def run(
        self,
        request: RunRequest,
        *,
        on_event: Callable[[RunEvent], None] | None = None,
    ) -> RunResult:
        """Run one prompt to its end: :meth:`start`, then the handle's result; every event
        goes to ``on_event`` as it happens (see :meth:`start`).

        Cancellation: safe at any point, and it propagates. Cancelled before the run exists,
        nothing is written. Cancelled during setup (nothing was prompted), the run is
        recorded INTERRUPTED (``CALLER_CANCELLED``). Cancelled while the prompt is
        outstanding, the run is abandoned (:meth:`Run.abandon <baton.runtime.run.Run.abandon>`:
        no session/cancel, so it is recorded RECOVERY_REQUIRED, ``CALLER_CANCELLED``; the clean
        stop is :meth:`Run.interrupt <baton.runtime.run.Run.interrupt>` on a :meth:`start`
        handle): what streamed so far is written and the session released; the lane stays
        usable. Those writes are shielded from a second cancellation."""
        run = await self.start(request, on_event=on_event or _drop)
        return await run.result_or_abandon()

    async def _drive(
        self, run: Run, ctx: RunContext, started: float, run_trace: RunTrace | None
    ) -> RunResult:
        """The run after its creation: the launch form, session setup, the turn, the result
        (and the end of its trace, failed when the run's task ends by an exception)."""
        try:
            result = await self._drive_traced(run, ctx, started)
        except BaseException as exc:
            if run_trace is not None:
                run_trace.close(exc)
            raise
        if run_trace is not None:
            run_trace.close(None)
        return result

    async def _drive_traced(self, run: Run, ctx: RunContext, started: float) -> RunResult:
        """:meth:`_drive` inside its trace."""
        run.begin()
        window = SetupWindow(ctx.lane)
        try:
            outcome, session = await self._run_on_lane(run, ctx, window)
        finally:
            window.close()
        result = _result(ctx.run_id, outcome, session)
        result.workspace = _workspace_view(ctx.workspace) if ctx.workspace is not None else None
        result.warnings = list(ctx.warnings)
        result.duration_ms = int((time.monotonic() - started) * 1000)
        ctx.emit(result.to_event())
        return result

    async def _workspace_ask(
        self, request: RunRequest, asked: str | None, cwd: str
    ) -> tuple[WorktreePlan | None, WorkspaceRecord | None]:
        """What the run's workspace will be, checked before anything starts: the worktree to
        create (its ask checked: not a repository, no such base, a dirty base), or the
        recorded workspace to use (the session's own, else a Baton worktree holding the
        directory; refused when another session's or held by another run), or neither."""
        assert self.store is not None
        # A session's workspace (a fleet session's worktree, made by its first turn) is kept.
        recorded = (
            self.store.session_workspace(request.session) if request.session is not None else None
        )
        plan = None
        if recorded is None:
            plan = await self.workspaces.plan(asked, cwd, request.base, request.require_clean)
        if recorded is None and plan is None:
            recorded = self.store.workspace_at(cwd)
        if recorded is not None:
            self.workspaces.check_use(self.store, recorded, request.session)
        return plan, recorded

    async def _open_workspace(
        self,
        run_id: str,
        asked: str | None,
        cwd: str,
        plan: WorktreePlan | None,
        recorded: WorkspaceRecord | None,
        session: str | None,
    ) -> ActiveWorkspace | None:
        """The run's workspace: a worktree created for it (named after the run, or
        ``session-<name>`` for a session's first turn), the recorded one holding its
        directory, a directory asked for (recorded now), or None."""
        assert self.store is not None
        if plan is not None:
            recorded = await self.workspaces.create(
                self.store,
                plan,
                run_id if session is None else f"session-{session}",
                created_by=run_id,
                session_name=session,
            )
        elif recorded is None and asked is not None:
            recorded = await self.workspaces.record_directory(
                self.store, cwd, run_id, created_by=run_id
            )
        return None if recorded is None else await self.workspaces.activate(recorded)

    def elicitor_for(self, policy: PolicyName) -> Elicitor | None:
        """Who answers the elicitations of a run under ``policy`` (None: nobody; a lane the run
        starts then advertises no elicitation)."""
        if self.elicitation_policies is not None and policy not in self.elicitation_policies:
            return None
        return self.elicitor

    async def _run_on_lane(
        self, run: Run, ctx: RunContext, window: SetupWindow
    ) -> tuple[TurnOutcome, LaneSession | None]:
        """Set the session up, then run the turn on it; the outcome and the session to name.

        A cancellation the run's handle asked for (an interrupt during setup, an abandon)
        ends the run with its outcome; any other propagates after it is recorded."""
        if run.slot.interrupt_reason is not None:
            # Stopped before its task began: nothing was started for it.
            cancelled = _stopped_in_setup(run.slot.interrupt_reason)
            await record_setup_failure(ctx, cancelled)
            return cancelled, None
        try:
            if ctx.request.agent_command is not None:
                with contextlib.suppress(BatonError):
                    await ctx.recorder.launch_form(
                        ctx.run_id, ctx.redact(ctx.spec.launch_form), ctx.request.env_keys
                    )
            opened = await open_session(ctx, window)
        except asyncio.CancelledError:
            # Nothing was prompted: the run is interrupted by its caller, never ambiguous.
            cancelled = _stopped_in_setup(run.slot.interrupt_reason)
            task = asyncio.ensure_future(record_setup_failure(ctx, cancelled))
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(task)
            if run.take_handle_cancel():
                return cancelled, None
            raise
        run.setup_ended()
        if isinstance(opened, SetupEnded):
            if not opened.recorded:
                await record_setup_failure(ctx, opened.outcome)
            return opened.outcome, opened.session
        if run.slot.interrupt_reason is not None:
            # Stopped from inside the run's own task during setup (an event's reader left):
            # the setup was let finish, and no prompt is sent.
            stopped = _stopped_in_setup(run.slot.interrupt_reason)
            await record_outcome(ctx, stopped)
            await release_session(ctx, opened.client, opened.session, stopped)
            return stopped, opened.session
        try:
            outcome = await execute_turn(
                ctx,
                opened.session,
                opened.client,
                opened.blocks,
                profile_mapped=opened.profile_mapped,
                asker=self.asker,
                memory=self.memory,
                interrupt_timeout=self.interrupt_timeout,
            )
        except asyncio.CancelledError:
            abandoned = run.slot.abandoned
            if abandoned is not None and run.take_handle_cancel():
                return abandoned, opened.session
            raise
        return outcome, opened.session

    # --- session controls ------------------------------------------------------------------

    def _kept(self, session_id: str) -> tuple[Lane, LaneSession]:
        for lane in self._lanes.values():
            for session in lane.sessions.values():
                if session.session_id == session_id:
                    return lane, session
        raise ConfigurationError(
            f"session {session_id!r} is not attached here (run with keep_session=True)"
        )

    def controls(self, session_id: str) -> ControlSet:
        """The safe BOOLEAN and SELECT controls of a kept session, with their revision."""
        lane, session = self._kept(session_id)
        assert lane.client is not None
        state = lane.client.session_state(session.provider_id)
        return project_controls(
            session.provider_id,
            state,
            grok_models=lane.extensions.models,
            secrets=lane.secrets,
            session_id=session_id,
        )

    async def apply_control(
        self, session_id: str, control_id: object, value: object, revision: object
    ) -> ControlSet:
        """Apply ``{controlId, value, revision}`` to a kept session and return the new controls.

        Refused (nothing sent, a caller-fault error with a stable code) while a run is active or
        recovery-required, for a stale revision, an unknown or immutable control, a wrong type
        or a choice the provider did not advertise. An answer that does not confirm the change
        makes it ambiguous: the lane is quarantined and SessionMutationAmbiguous raised.

        Cancellation: cancelling while the change is in flight leaves its outcome unknown, so
        it is treated like an unconfirmed answer: the lane is quarantined (shielded from a
        second cancellation) and the cancellation propagates. Cancelled before anything is
        sent, nothing changes.
        """
        lane, session = self._kept(session_id)
        refuse_while(
            "RUNNING" if session.active is not None else session.last_status, str(control_id)
        )
        controls = self.controls(session_id)
        mutation = resolve_control(controls, control_id, value, revision)
        if mutation.already_current:
            return controls
        client = lane.client
        assert client is not None and self._recorder is not None
        try:
            result = await client.session_call(
                session.provider_id, mutation.method, dict(mutation.params)
            )
            confirmed = confirm_mutation(
                mutation,
                client.session_state(session.provider_id),
                result,
                grok_models=lane.extensions.models,
            )
        except asyncio.CancelledError:
            task = asyncio.ensure_future(
                lane.quarantine("a control change was cancelled with its outcome unknown")
            )
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(task)
            raise
        except (SessionMutationAmbiguous, BudgetExpired, TransportClosed) as exc:
            await lane.quarantine(f"a control change has an unknown outcome: {exc.code}")
            if isinstance(exc, SessionMutationAmbiguous):
                raise
            raise SessionMutationAmbiguous(f"{mutation.method}: {exc.code}") from exc
        client.update_session_state(session.provider_id, confirmed.state)
        lane.extensions.confirmed_models(confirmed.grok_models)
        await self._recorder.session_resolved(
            session_id, None, confirmed.state, client.state_ref(session.provider_id)
        )
        return self.controls(session_id)

    async def events(self, request: RunRequest) -> AsyncIterator[RunEvent]:
        """:meth:`start`, then the handle's events as they happen; the last is ``result``.

        Cancellation: closing this iterator early (``break``, ``aclose``, a cancelled
        consumer) interrupts the run and waits for it to settle, as closing
        :meth:`Run.events <baton.runtime.run.Run.events>` does: INTERRUPTED when the agent
        answers ``cancelled`` within the interrupt deadline, RECOVERY_REQUIRED only when the
        outcome really is unknown. Cancelled before the run exists, nothing is written."""
        run = await self.start(request)
        async with run.events() as events:
            async for event in events:
                yield event


def _stopped_in_setup(reason: str | None) -> TurnOutcome:
    """The outcome of a run stopped during its setup (``reason``: its handle's interrupt;
    None: its caller was cancelled): INTERRUPTED, never ambiguous, since nothing was
    prompted."""
    return TurnOutcome(
        "INTERRUPTED",
        error_code=CALLER_CANCELLED,
        message=(
            f"the run was interrupted ({reason}) during setup; no prompt was sent"
            if reason is not None
            else "the caller cancelled the run during setup; no prompt was sent"
        ),
        interrupted_by=reason or "caller",
    )


def _drop(_event: RunEvent) -> None:
    """An event nobody reads."""


def _workspace_view(active: ActiveWorkspace) -> dict[str, Any]:
    record = active.record
    return {
        "name": record.name,
        "kind": record.kind,
        "path": record.path,
        "branch": record.branch,
        "baseCommit": record.base_commit,
        "compared": active.layout is not None,
    }


def _result(run_id: str, outcome: TurnOutcome, session: LaneSession | None) -> RunResult:
    """The run's result: the outcome, with its exit code from the one table."""
    return RunResult(
        run_id,
        outcome.status,
        outcome.stop_reason,
        EXIT_CODES[outcome.run_outcome],
        error_code=outcome.error_code,
        message=outcome.message or outcome.recovery_reason,
        session_id=session.session_id if session is not None else None,
        provider_session_id=session.provider_id if session is not None else None,
        tool_calls=outcome.tool_calls,
        text=outcome.text,
        permissions=outcome.permissions,
        bound=outcome.bound,
        retryable=outcome.retryable,
        skipped_frames=outcome.skipped_frames,
        violations=outcome.violations,
        outcome=outcome.run_outcome,
        usage=outcome.usage,
        workspace_changes=outcome.workspace_changes,
    )


def data_dir_path(value: str | None, environ: Mapping[str, str]) -> Path:
    """The data directory Baton would use (``--data-dir`` > ``BATON_HOME`` > platform)."""
    return resolve_data_dir(value, environ)
