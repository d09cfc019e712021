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
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from baton.connection.client import AcpClient
from baton.errors import (
    AgentNotInstalled,
    BatonError,
    ConfigurationError,
    LaneLost,
    RuntimeNotOpen,
)
from baton.journal import Journal
from baton.redaction import SecretValues
from baton.runtime.agents.discovery import DiscoveryCache
from baton.runtime.agents.launch import CUSTOM_PROFILE_ID, LaunchSpec, from_command, from_profile
from baton.runtime.agents.profiles import BUILTIN_PROFILES, Profile
from baton.runtime.agents.review_lane import DEFAULT_LANE, check_review_root
from baton.runtime.agents.tools_file import load_tool_declarations
from baton.runtime.drive import TurnDeps, drive
from baton.runtime.lane_pool import LanePool
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
from baton.runtime.result import RunResult
from baton.runtime.run import Run, RunTable
from baton.runtime.tracing import RunTrace, tracer_for
from baton.runtime.turns.context import RunContext
from baton.runtime.turns.controls import (
    ControlSet,
)
from baton.runtime.turns.events import RunEvent
from baton.runtime.turns.outcome import (
    RunOutcome,
)
from baton.runtime.turns.request import RunRequest
from baton.runtime.turns.streaming import StreamMemory
from baton.runtime.turns.system_prompts import requested_system_prompt
from baton.runtime.turns.turn import INTERRUPT_COMPLETION_TIMEOUT_SECONDS
from baton.runtime.turns.workspace_roots import resolve_additional_directories
from baton.runtime.workspace_setup import open_workspace, workspace_ask, workspace_view
from baton.runtime.workspaces.tracking import ActiveWorkspace, WorkspaceTracker
from baton.runtime.workspaces.worktrees import DEFAULT_WORKTREE_DIRNAME
from baton.store import Store, prepare_data_dir, resolve_data_dir
from baton.store.location import resolve_store
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

    from baton.runtime.kept_sessions import KeptSessions

__all__ = [
    "AgentNotInstalled",
    "Run",
    "RunOutcome",
    "RunRequest",
    "RunResult",
    "Runtime",
    "data_dir_path",
]


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
        self._pool = LanePool(self._new_lane)
        #: The lanes, by runtime identity (the pool's).
        self._lanes = self._pool.lanes
        self._kept_sessions: KeptSessions | None = None
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

    @property
    def _kept(self) -> KeptSessions:
        """The sessions kept attached on the lanes (the one lookup, by either id); loaded on
        first use: a one-shot run never reads one (the import budget, docs/performance.md)."""
        if self._kept_sessions is None:
            from baton.runtime.kept_sessions import KeptSessions

            self._kept_sessions = KeptSessions(self._lanes, lambda: self._recorder)
        return self._kept_sessions

    def kept_session(self, provider_session_id: str) -> LaneSession | None:
        """The kept (attached) session of agent session ``provider_session_id`` whose lane
        runs in this process, else None."""
        return self._kept.kept_session(provider_session_id)

    async def steer_kept_session(
        self, provider_session_id: str, text: str
    ) -> steering.SteerAnswer | None:
        """Send ``text`` to the running turn of a kept session through the agent's steering
        extension (issue 29): the agent's answer, or None when no lane of this process holds
        the session or its agent does not advertise steering (nothing sent). Cancellation:
        as any bounded request (cancelled at the agent)."""
        return await self._kept.steer(provider_session_id, text)

    def release_kept_session(self, provider_session_id: str) -> None:
        """Forget a kept session (the agent keeps it; nothing is sent)."""
        self._kept.release(provider_session_id)

    async def close_kept_session(self, provider_session_id: str) -> str:
        """Close a kept session: session/close when the agent advertises it, then released and
        recorded CLOSED; what happened, as a note for the conversation's record (see
        :meth:`KeptSessions.close <baton.runtime.kept_sessions.KeptSessions.close>`, which
        states its cancellation rules)."""
        return await self._kept.close(provider_session_id)

    def controls(self, session_id: str) -> ControlSet:
        """The safe BOOLEAN and SELECT controls of a kept session, with their revision."""
        return self._kept.controls(session_id)

    async def apply_control(
        self, session_id: str, control_id: object, value: object, revision: object
    ) -> ControlSet:
        """Apply ``{controlId, value, revision}`` to a kept session and return the new controls
        (see :meth:`KeptSessions.apply_control
        <baton.runtime.kept_sessions.KeptSessions.apply_control>`: the refusals, the
        quarantine of an unconfirmed change, and the cancellation rules)."""
        return await self._kept.apply_control(session_id, control_id, value, revision)

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
        self._pool.fingerprints[spec.identity] = result.fingerprint
        return spec

    async def _lane_for(
        self,
        spec: LaunchSpec,
        emit: Callable[[RunEvent], None] | None = None,
        *,
        elicitation: ElicitationOffer = NO_ELICITATION,
    ) -> Lane:
        """The lane of ``spec``'s runtime identity (see :meth:`LanePool.lane_for
        <baton.runtime.lane_pool.LanePool.lane_for>`)."""
        return await self._pool.lane_for(spec, emit, elicitation=elicitation)

    def _new_lane(self, spec: LaunchSpec) -> Lane:
        assert self._journal is not None and self._recorder is not None
        return Lane(
            spec,
            journal=self._journal,
            recorder=self._recorder,
            request_limit=self.request_limit,
            on_quarantine=self._quarantined,
        )

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
        plan, recorded = await workspace_ask(self.store, self.workspaces, request, asked, cwd)
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
            active = await open_workspace(
                self.store, self.workspaces, run_id, asked, cwd, plan, recorded, request.session
            )
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
            workspace=workspace_view(active) if active is not None else None,
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
                    **({"workspace": workspace_view(active)} if active is not None else {}),
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
        deps = TurnDeps(self.asker, self.memory, self.interrupt_timeout)
        run.drive(asyncio.ensure_future(drive(run, ctx, started, run_trace, deps)))
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

    def elicitor_for(self, policy: PolicyName) -> Elicitor | None:
        """Who answers the elicitations of a run under ``policy`` (None: nobody; a lane the run
        starts then advertises no elicitation)."""
        if self.elicitation_policies is not None and policy not in self.elicitation_policies:
            return None
        return self.elicitor

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


def _drop(_event: RunEvent) -> None:
    """An event nobody reads."""


def data_dir_path(value: str | None, environ: Mapping[str, str]) -> Path:
    """The data directory Baton would use (``--data-dir`` > ``BATON_HOME`` > platform)."""
    return resolve_data_dir(value, environ)
