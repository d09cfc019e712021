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
from typing import TYPE_CHECKING, Any

from baton.errors import (
    BatonError,
    BudgetExpired,
    ConfigurationError,
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
from baton.runtime.lanes.loss import LaneLost, Quarantined
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
from baton.runtime.sessions.setup import SetupEnded, SetupWindow, open_session
from baton.runtime.tracing import traced, tracer_for
from baton.runtime.turns.context import RunContext
from baton.runtime.turns.controls import (
    ControlSet,
    confirm_mutation,
    project_controls,
    refuse_while,
    resolve_control,
)
from baton.runtime.turns.event_stream import iterate_events
from baton.runtime.turns.events import RunEvent
from baton.runtime.turns.execution import execute_turn, record_setup_failure
from baton.runtime.turns.outcome import EXIT_CODES, RunOutcome, TurnOutcome
from baton.runtime.turns.request import RunRequest
from baton.runtime.turns.streaming import StreamMemory
from baton.runtime.turns.system_prompts import requested_system_prompt
from baton.runtime.turns.turn import (
    CALLER_CANCELLED,
    INTERRUPT_COMPLETION_TIMEOUT_SECONDS,
    Turn,
)
from baton.runtime.turns.workspace_roots import resolve_additional_directories
from baton.runtime.workspaces.tracking import ActiveWorkspace, WorkspaceTracker
from baton.runtime.workspaces.worktrees import DEFAULT_WORKTREE_DIRNAME, WorktreePlan
from baton.store import Store, prepare_data_dir, resolve_data_dir
from baton.store.location import resolve_store
from baton.store.models import WorkspaceRecord
from baton.wire.budget import (
    DEFAULT_REQUEST_LIMIT_SECONDS,
    BoundSetting,
    BudgetClock,
    TurnBudget,
    resolve_idle_bound,
)
from baton.wire.capabilities import NO_ELICITATION, ElicitationOffer

if TYPE_CHECKING:
    from opentelemetry.trace import TracerProvider

__all__ = [
    "AgentNotInstalled",
    "RunOutcome",
    "RunRequest",
    "RunResult",
    "Runtime",
    "data_dir_path",
]


class AgentNotInstalled(BatonError):
    """No candidate executable of the profile passed discovery."""

    code = "AGENT_NOT_INSTALLED"
    fault = "caller"


@dataclass
class RunResult:
    """The outcome of a run, as `baton run` reports it in its last line."""

    run_id: str
    status: str
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
        self.lanes: dict[tuple[str, str, str], Lane] = {}
        self.discovery = DiscoveryCache()
        self.journal: Journal | None = None
        self.store: Store | None = None
        self.recorder: Recorder | None = None
        self.reconciled: list[str] = []
        #: What preparing the data directory changed (created, tightened), for the surface to
        #: say; None when nothing changed or before :meth:`open`.
        self.data_dir_notice: str | None = None
        self._turns: set[Turn] = set()
        # Discovery fingerprints of the executables resolved, by lane identity.
        self._fingerprints: dict[tuple[str, str, str], tuple[object, ...] | None] = {}

    # --- lifecycle -------------------------------------------------------------------------

    async def open(self) -> None:
        """Open the journal and store, and passively reconcile a previous process's state."""
        if self.store is not None:
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
        self.journal, self.store, self.recorder = journal, store, Recorder(store)
        self.reconciled = await reconcile(store)

    async def close(self) -> None:
        """Shut every lane down (active runs become RECOVERY_REQUIRED), then close files."""
        for lane in list(self.lanes.values()):
            with contextlib.suppress(BatonError, OSError):
                await lane.shutdown()
        self.lanes.clear()
        if self.journal is not None:
            await self.journal.close()
        if self.store is not None:
            self.store.close()
        self.journal = self.store = self.recorder = None

    async def __aenter__(self) -> Runtime:
        await self.open()
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()

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
        await self.open()
        request = RunRequest(
            prompt="logout", agent=agent, agent_command=agent_command, env_keys=env_keys
        )
        spec = await self.resolve(request)
        lane = await self.lane_for(spec, lambda _event: None)
        client = await lane.ensure_started(None)
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

    async def lane_for(
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
        for identity, old in list(self.lanes.items()):
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
            del self.lanes[identity]
        lane = self.lanes.get(spec.identity)
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
            del self.lanes[spec.identity]
            lane = None
        if lane is not None and lane.spec.protocol != spec.protocol and not lane.busy:
            # Another ACP version pin (--protocol): an idle lane is replaced, since its
            # version was negotiated once, at initialize. A busy one keeps running.
            await lane.shutdown()
            del self.lanes[spec.identity]
            lane = None
        if lane is None:
            assert self.journal is not None and self.recorder is not None
            lane = Lane(
                spec,
                journal=self.journal,
                recorder=self.recorder,
                request_limit=self.request_limit,
                on_quarantine=self._quarantined,
            )
            lane.fingerprint = fingerprint
            self.lanes[spec.identity] = lane
        return lane

    async def _quarantined(self, lane: Lane, reason: str) -> None:
        """After a quarantine: every turn of the lane is lost. The lane already told its active
        turns the typed cause (the first loss a turn hears is the one it keeps); a turn not
        active yet hears the quarantine's reason."""
        for turn in list(self._turns):
            if turn.lane is lane:
                turn.on_lost(LaneLost(Quarantined(reason)))

    # --- running ---------------------------------------------------------------------------

    async def run(
        self,
        request: RunRequest,
        *,
        on_event: Callable[[RunEvent], None] | None = None,
        on_turn: Callable[[Turn], None] | None = None,
    ) -> RunResult:
        """Run one prompt; every event goes to ``on_event`` as it happens.

        Every event is redacted before it leaves the runtime, with the same rules and exact
        secrets as the run store (its lane's, once the lane is known): callers (the CLI's
        ``--format json`` and text output, library users) never see what the store would not
        keep.

        Cancellation: safe at any point, and it propagates. Cancelled during setup (nothing was
        prompted), the run is recorded INTERRUPTED (``CALLER_CANCELLED``). Cancelled while
        the prompt is outstanding, no session/cancel is sent (``on_turn`` gives the turn,
        whose ``interrupt()`` is the clean stop): the prompt may still run, so the run is
        recorded RECOVERY_REQUIRED (``CALLER_CANCELLED``), what streamed so far is written,
        and the session is released; the lane stays usable. Those writes are shielded from a
        second cancellation. Before the run is created nothing is written.

        Traced (OpenTelemetry, the ``otel`` extra; docs/tracing.md) when :attr:`tracer` is
        set: the spans are built from the same redacted events."""
        with traced(self.tracer, on_event) as observed:
            return await self._run(request, on_event=observed, on_turn=on_turn)

    async def _run(
        self,
        request: RunRequest,
        *,
        on_event: Callable[[RunEvent], None] | None,
        on_turn: Callable[[Turn], None] | None,
    ) -> RunResult:
        """:meth:`run`, once its events are observed."""
        await self.open()
        assert self.store is not None and self.recorder is not None
        sink = on_event or (lambda _event: None)
        lane_secrets: list[SecretValues] = []

        def emit(event: RunEvent) -> None:
            sink(event.redacted(lane_secrets[0] if lane_secrets else None))

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
        lane = await self.lane_for(
            spec, emit, elicitation=elicitor.offer if elicitor is not None else NO_ELICITATION
        )
        # The tools' env values go to the agent: from now on they are secrets of its lane.
        lane.secrets.add(tools.secret_values())
        lane_secrets.append(lane.secrets)
        prompt_text = lane.redact(request.prompt)
        if request.queued_run_id is not None:
            run_id = await self.recorder.take_queued_run(request.queued_run_id)
        else:
            run_id = self.recorder.create_run(
                prompt_text,
                policy=policy,
                unattended=request.allow_unattended and ad_hoc,
                profile=spec.profile_id,
            )
        active: ActiveWorkspace | None = None
        try:
            active = await self._open_workspace(run_id, asked, cwd, plan, recorded, request.session)
        except BatonError as exc:
            await self.recorder.run_status(
                run_id, "FAILED", error_code=exc.code, diagnostic=exc.message
            )
            raise
        if active is not None:
            cwd = active.cwd
        loop = asyncio.get_running_loop()
        idle = resolve_idle_bound(
            ("run", request.idle_timeout),
            ("profile", spec.profile.idle_timeout if spec.profile is not None else None),
            ("config", self.idle_timeout),
        )
        budget = TurnBudget(idle=idle.seconds, absolute=request.timeout)
        clock: BudgetClock | None = None
        if idle.seconds is not None or request.timeout is not None:
            clock = budget.start(loop.time())
        # Setup (start, initialize, session/new) runs within a configured budget; under the
        # default idle bound alone it keeps the fixed request limit, which is shorter.
        setup_clock = clock if idle.source != "default" or request.timeout is not None else None
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
            recorder=self.recorder,
            clock=clock,
            setup_clock=setup_clock,
            emit=emit,
            on_turn=on_turn,
            elicitor=elicitor,
            workspace=active,
            workspaces=self.workspaces,
        )
        window = SetupWindow(lane)
        try:
            outcome, session = await self._run_on_lane(ctx, window)
        finally:
            window.close()
        result = _result(run_id, outcome, session)
        result.workspace = _workspace_view(active) if active is not None else None
        result.warnings = list(ctx.warnings)
        result.duration_ms = int((time.monotonic() - started) * 1000)
        emit(result.to_event())
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
        self, ctx: RunContext, window: SetupWindow
    ) -> tuple[TurnOutcome, LaneSession | None]:
        """Set the session up, then run the turn on it; the outcome and the session to name."""
        try:
            opened = await open_session(ctx, window)
        except asyncio.CancelledError:
            # Nothing was prompted: the run is interrupted by its caller, never ambiguous.
            cancelled = TurnOutcome(
                "INTERRUPTED",
                error_code=CALLER_CANCELLED,
                message="the caller cancelled the run during setup; no prompt was sent",
                interrupted_by="caller",
            )
            task = asyncio.ensure_future(record_setup_failure(ctx, cancelled))
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(task)
            raise
        if isinstance(opened, SetupEnded):
            if not opened.recorded:
                await record_setup_failure(ctx, opened.outcome)
            return opened.outcome, opened.session
        outcome = await execute_turn(
            ctx,
            opened.session,
            opened.client,
            opened.blocks,
            profile_mapped=opened.profile_mapped,
            asker=self.asker,
            memory=self.memory,
            interrupt_timeout=self.interrupt_timeout,
            registry=self._turns,
        )
        return outcome, opened.session

    # --- session controls ------------------------------------------------------------------

    def _kept(self, session_id: str) -> tuple[Lane, LaneSession]:
        for lane in self.lanes.values():
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
        assert client is not None and self.recorder is not None
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
        await self.recorder.session_resolved(
            session_id, None, confirmed.state, client.state_ref(session.provider_id)
        )
        return self.controls(session_id)

    async def events(self, request: RunRequest) -> AsyncIterator[RunEvent]:
        """Run ``request`` and yield its events as they happen; the last is ``result``.

        Cancellation: cancelling the consumer (or closing the generator early) cancels the
        run and waits for it to settle, with :meth:`run`'s cancellation semantics."""
        # aclosing: closing this generator closes the inner one at once, so the run is
        # cancelled and settled before close returns (not when the inner one is collected).
        events = iterate_events(lambda emit: self.run(request, on_event=emit))
        async with contextlib.aclosing(events):
            async for event in events:
                yield event


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
