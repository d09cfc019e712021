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
from typing import Any, Final

from baton.errors import (
    AgentLaunchFailed,
    AuthenticationRequired,
    BatonError,
    BudgetExpired,
    ConfigurationError,
    IncompatibleProtocolVersion,
    ProtocolError,
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
from baton.runtime.lanes import extensions
from baton.runtime.lanes.lane import Lane, LaneFenced, LaneSession
from baton.runtime.lanes.reconcile import reconcile
from baton.runtime.lanes.recorder import Recorder
from baton.runtime.permissions.ask import Asker, NoUserAsker
from baton.runtime.permissions.correlation import ToolCallTracker
from baton.runtime.permissions.elicitations import Elicitor
from baton.runtime.permissions.engine import PermissionSettings
from baton.runtime.permissions.local_policy import LocalContext
from baton.runtime.permissions.policies import (
    ExecutionSettings,
    PolicyName,
    available_policies,
    check_policy,
    check_run_settings,
    parse_policy,
)
from baton.runtime.turns.controls import (
    ControlSet,
    confirm_mutation,
    project_controls,
    refuse_while,
    resolve_control,
)
from baton.runtime.turns.events import RunEvent
from baton.runtime.turns.settings import RequestedSettings, apply_settings
from baton.runtime.turns.streaming import StreamMemory
from baton.runtime.turns.system_prompts import requested_system_prompt, session_setup_record
from baton.runtime.turns.turn import INTERRUPT_COMPLETION_TIMEOUT_SECONDS, Turn, TurnOutcome
from baton.runtime.turns.workspace_roots import resolve_additional_directories
from baton.store import Store, prepare_data_dir, resolve_data_dir
from baton.wire.budget import DEFAULT_REQUEST_LIMIT_SECONDS, BudgetClock, TurnBudget
from baton.wire.content import build_prompt, text_block
from baton.wire.session_state import NewSessionResult

#: Run statuses and the `baton run` exit code each maps to.
EXIT_CODES: Final = {
    "COMPLETED": 0,
    "FAILED": 1,
    "INTERRUPTED": 130,
    "RECOVERY_REQUIRED": 6,
    "LOST": 6,
}


class AgentNotInstalled(BatonError):
    """No candidate executable of the profile passed discovery."""

    code = "AGENT_NOT_INSTALLED"
    fault = "caller"


@dataclass(frozen=True, slots=True)
class RunRequest:
    """One prompt to run. Exactly one of ``agent`` (a profile) and ``agent_command``."""

    prompt: str
    agent: str | None = None
    agent_command: str | Sequence[str] | None = None
    env_keys: Sequence[str] = ()
    cwd: str | None = None
    #: The permission policy: ``"ask"``, ``"auto-edits"`` or ``"full"``.
    policy: PolicyName = "ask"
    allow_unattended: bool = False
    mode: str | None = None
    model: str | None = None
    effort: str | None = None
    config: Mapping[str, str] = field(default_factory=dict)
    tools_file: str | None = None
    idle_timeout: float | None = None
    timeout: float | None = None
    attachments: Sequence[str] = ()
    execution: ExecutionSettings = field(default_factory=ExecutionSettings)
    #: The process lane: ``default``, or ``review`` (grok's read-only sandboxed process).
    lane: str = "default"
    #: Attach this provider session (resume, else load) instead of creating one.
    attach_session: str | None = None
    #: With ``attach_session``: attach to look, send no prompt (`baton recover --attach`).
    inspect_only: bool = False
    #: Keep the provider session attached after the run (its controls can then be read and
    #: changed with :meth:`Runtime.controls` and :meth:`Runtime.apply_control`).
    keep_session: bool = False
    #: Additional workspace roots (``--add-dir``): existing directories outside ``cwd``, sent
    #: as ``additionalDirectories`` (needs ``sessionCapabilities.additionalDirectories``) and
    #: treated by the local permission policy as inside the worktree.
    additional_directories: Sequence[str] = ()
    #: Unstable ACP: a system prompt replacing the agent's default instructions (``override``;
    #: needs ``sessionCapabilities.systemPrompt.mode.override``). Excludes the next field.
    system_prompt: str | None = None
    #: Unstable ACP: a system prompt added to the agent's own (``append``; needs
    #: ``sessionCapabilities.systemPrompt``).
    append_system_prompt: str | None = None


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
    #: What the agent reported of usage: ``{used, size, cost?, turn?}``, or None.
    usage: dict[str, Any] | None = None

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
            },
        )


class Runtime:
    """Baton's core: lanes, sessions, turns, over one data directory."""

    def __init__(
        self,
        *,
        data_dir: str | os.PathLike[str] | None = None,
        environ: Mapping[str, str] | None = None,
        asker: Asker | None = None,
        profiles: Mapping[str, Profile] | None = None,
        config_overrides: Mapping[str, str] | None = None,
        request_limit: float = DEFAULT_REQUEST_LIMIT_SECONDS,
        interrupt_timeout: float = INTERRUPT_COMPLETION_TIMEOUT_SECONDS,
        elicitor: Elicitor | None = None,
    ) -> None:
        self.environ = dict(os.environ if environ is None else environ)
        self.data_dir = resolve_data_dir(
            str(data_dir) if data_dir is not None else None, self.environ
        )
        self.asker: Asker = asker or NoUserAsker()
        #: Who answers the agents' elicitations (a person at a TTY, an API): only then is
        #: elicitation advertised; None declines every request (recorded).
        self.elicitor = elicitor
        self.profiles = dict(BUILTIN_PROFILES if profiles is None else profiles)
        self.config_overrides = dict(config_overrides or {})
        self.request_limit = request_limit
        self.interrupt_timeout = interrupt_timeout
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
        store = Store.open(self.data_dir, flush=journal.flush_refs)
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
            return from_command(
                request.agent_command,
                self.environ,
                env_keys=request.env_keys,
                allow_unattended=request.allow_unattended,
            )
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
        self._fingerprints[spec.identity] = result.fingerprint
        return spec

    async def lane_for(
        self, spec: LaunchSpec, emit: Callable[[RunEvent], None] | None = None
    ) -> Lane:
        """The lane of ``spec``'s runtime identity, created on first use (started lazily).

        When the profile's executable changed since a lane of the same profile and lane name
        started (another path, or the same path with another file), an idle old lane is shut
        down; one with an active or ambiguous prompt is never terminated for a settings
        change: it keeps running and the change waits (a ``warning`` event says so).
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
            lane.elicitor = self.elicitor
            self.lanes[spec.identity] = lane
        return lane

    async def _quarantined(self, lane: Lane, reason: str) -> None:
        assert self.store is not None
        for turn in list(self._turns):
            if turn.lane is lane:
                turn.on_lost(TransportClosed(reason))

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
        keep."""
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
        if not os.path.isdir(cwd):
            raise ConfigurationError(f"the working directory {cwd} is not a directory")
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
        lane = await self.lane_for(spec, emit)
        # The tools' env values go to the agent: from now on they are secrets of its lane.
        lane.secrets.add(tools.secret_values())
        lane_secrets.append(lane.secrets)
        prompt_text = lane.redact(request.prompt)
        run_id = self.recorder.create_run(
            prompt_text,
            policy=policy,
            unattended=request.allow_unattended and ad_hoc,
            profile=spec.profile_id,
        )
        loop = asyncio.get_running_loop()
        budget = TurnBudget(idle=request.idle_timeout, absolute=request.timeout)
        clock: BudgetClock | None = None
        if request.idle_timeout is not None or request.timeout is not None:
            clock = budget.start(loop.time())
        emit(
            RunEvent(
                "run_started",
                run_id,
                {
                    "agent": spec.profile_id,
                    "cwd": cwd,
                    "policy": policy,
                    "command": spec.launch_form,
                },
            )
        )
        setup = _SetupWindow(lane)
        try:
            result = await self._run_on_lane(
                setup, run_id, request, spec, lane, cwd, tools, policy, clock, emit, on_turn
            )
        finally:
            setup.close()
        result.duration_ms = int((time.monotonic() - started) * 1000)
        emit(result.to_event())
        return result

    async def _fail(
        self, run_id: str, status: str, code: str, message: str, *, exit_code: int, **extra: Any
    ) -> RunResult:
        assert self.recorder is not None
        with contextlib.suppress(BatonError):
            await self.recorder.run_status(
                run_id, status, error_code=code, diagnostic=message, **extra
            )
        return RunResult(run_id, status, None, exit_code, error_code=code, message=message)

    async def _run_on_lane(
        self,
        setup: _SetupWindow,
        run_id: str,
        request: RunRequest,
        spec: LaunchSpec,
        lane: Lane,
        cwd: str,
        tools: Any,
        policy: Any,
        clock: BudgetClock | None,
        emit: Callable[[RunEvent], None],
        on_turn: Callable[[Turn], None] | None,
    ) -> RunResult:
        assert self.recorder is not None
        redact = lane.redact
        # Start (or reuse) the lane and open a session: nothing is ambiguous yet.
        try:
            client = await lane.ensure_started(clock)
            assert lane.server_id is not None
            await extensions.cursor_models(
                spec,
                client,
                lane.cursor_models,
                lane.server_id,
                request.model,
                request.effort,
                clock,
            )
            setup.open()
            connection = client.connection
            attach_method: str | None = None
            roots = request.additional_directories
            system_prompt = requested_system_prompt(
                request.system_prompt, request.append_system_prompt
            )
            if request.attach_session is not None:
                attached = await client.attach_session(
                    request.attach_session,
                    cwd,
                    mcp_servers=tools,
                    additional_directories=roots,
                    system_prompt=system_prompt,
                )
                opened = NewSessionResult(attached.session_id, attached.state)
                attach_method = attached.method
            elif clock is not None:
                opened = await client.new_session_within(
                    clock,
                    cwd,
                    mcp_servers=tools,
                    additional_directories=roots,
                    system_prompt=system_prompt,
                )
            else:
                opened = await client.new_session(
                    cwd,
                    mcp_servers=tools,
                    additional_directories=roots,
                    system_prompt=system_prompt,
                )
            ref = connection.last_response_ref
        except AgentLaunchFailed as exc:
            return await self._fail(run_id, "FAILED", exc.code, redact(exc.message), exit_code=5)
        except IncompatibleProtocolVersion as exc:
            return await self._fail(run_id, "FAILED", exc.code, redact(exc.message), exit_code=5)
        except AuthenticationRequired as exc:
            lane.cursor_models.clear("auth_failure")
            methods = ""
            if lane.initialized is not None and lane.initialized.auth_methods:
                methods = "; advertised methods: " + ", ".join(
                    m.id for m in lane.initialized.auth_methods
                )
            return await self._fail(
                run_id,
                "FAILED",
                "AUTHENTICATION_REQUIRED",
                redact(f"the agent needs you to sign in{methods} ({exc.agent_message})"),
                exit_code=4,
            )
        except BudgetExpired as exc:
            await lane.quarantine("setup outlived the turn budget")
            return await self._fail(run_id, "FAILED", exc.code, exc.message, exit_code=3)
        except LaneFenced as exc:
            return await self._fail(run_id, "FAILED", exc.code, exc.message, exit_code=5)
        except (TransportClosed, ProtocolError) as exc:
            message = redact(await start_failure_message(exc, lane))
            return await self._fail(run_id, "FAILED", exc.code, message, exit_code=1)
        except BatonError as exc:
            return await self._fail(
                run_id,
                "FAILED",
                exc.code,
                redact(exc.message),
                exit_code=1 if exc.fault == "agent" else 2,
            )
        assert lane.server_id is not None
        session_id = await self.recorder.session_opened(
            spec.profile_id, cwd, lane.server_id, opened.session_id, opened.state, ref
        )
        await self.recorder.run_attached(run_id, session_id, lane.server_id)
        setup_record = session_setup_record(system_prompt, roots, redact)
        if setup_record:
            await self.recorder.session_setup(session_id, run_id, setup_record, ref)
        session = LaneSession(
            session_id=session_id,
            provider_id=opened.session_id,
            cwd=cwd,
            state=opened.state,
            tracker=ToolCallTracker(opened.session_id),
        )
        early = lane.adopt(session)
        setup.close()
        if attach_method == "session/load":
            # The load's replayed history: kept apart from the run's live output.
            session.replayed = [
                m["params"]["update"]
                for m, _ref in early
                if isinstance(m.get("params"), dict) and isinstance(m["params"].get("update"), dict)
            ]
        else:
            # Updates read together with the answer (before its session was known): the
            # session's, recorded as such.
            await lane.deliver_early(early)
        emit(
            RunEvent(
                "session",
                run_id,
                {
                    "sessionId": session_id,
                    "providerSessionId": opened.session_id,
                    "attachedBy": attach_method,
                    "replayedUpdates": len(session.replayed),
                },
            )
        )
        if request.inspect_only:
            lane.release(opened.session_id)
            with contextlib.suppress(BatonError):
                await self.recorder.run_status(
                    run_id,
                    "COMPLETED",
                    diagnostic=f"inspection: attached by {attach_method}; no prompt was sent",
                )
            return RunResult(
                run_id,
                "COMPLETED",
                None,
                0,
                message=f"attached by {attach_method}; {len(session.replayed)} updates replayed",
                session_id=session_id,
                provider_session_id=opened.session_id,
            )
        requested = RequestedSettings(
            mode=request.mode,
            model=request.model,
            effort=request.effort,
            config=dict(request.config),
        )
        try:
            handled, lane.grok_catalog = await extensions.grok_select(
                spec, client, lane.grok_catalog, opened.session_id, request.model, request.effort
            )
            if handled:
                requested = replace(requested, model=None, effort=None)
            state, sent = await apply_settings(
                client,
                opened.session_id,
                requested,
                allow_legacy_set_model=spec.profile is not None
                and spec.profile.session_models_extension,
            )
            if sent or handled:
                await self.recorder.session_resolved(
                    session_id, run_id, state, client.connection.last_response_ref
                )
            session.state = state
            controls = project_controls(
                opened.session_id,
                state,
                grok_models=lane.grok_catalog,
                secrets=lane.secrets,
                session_id=session_id,
            )
            emit(RunEvent("controls", run_id, controls.to_json()))
            blocks = build_prompt(client.capabilities, request.prompt)
            if request.attachments:
                blocks = self._attachments(spec, client, request)
        except SessionMutationAmbiguous as exc:
            await lane.quarantine(exc.message)
            return await self._fail(
                run_id,
                "RECOVERY_REQUIRED",
                exc.code,
                redact(exc.message),
                exit_code=6,
                recovery_reason=redact(exc.message),
            )
        except BatonError as exc:
            lane.release(opened.session_id)
            return await self._fail(
                run_id,
                "FAILED",
                exc.code,
                redact(exc.message),
                exit_code=2 if exc.fault == "caller" else 1,
            )
        permissions = PermissionSettings(
            policy=policy,
            allow_remembered=spec.allow_remembered_permissions,
            context=LocalContext(
                worktree=cwd,
                network_allowed=request.execution.network == "enabled",
                read_only=spec.read_only,
                additional_roots=tuple(request.additional_directories),
            ),
        )
        turn = Turn(
            run_id=run_id,
            lane=lane,
            session=session,
            client=client,
            recorder=self.recorder,
            permissions=permissions,
            asker=self.asker,
            clock=clock,
            memory=self.memory,
            emit=emit,
            interrupt_timeout=self.interrupt_timeout,
        )
        self._turns.add(turn)
        if on_turn is not None:
            on_turn(turn)
        try:
            outcome = await turn.execute(
                blocks, profile_mapped=spec.profile_id == "grok" and bool(request.attachments)
            )
        finally:
            self._turns.discard(turn)
        connection = client.connection
        result = self._result(
            run_id, outcome, session, connection.skipped_frames, connection.violation_count
        )
        await self._record_outcome(
            run_id, outcome, connection.skipped_frames, connection.violation_count
        )
        await self._release(lane, client, session, outcome, keep=request.keep_session)
        return result

    def _attachments(
        self, spec: LaunchSpec, client: Any, request: RunRequest
    ) -> list[dict[str, Any]]:
        from baton.runtime.turns.attachments import attachment_blocks

        return [
            *attachment_blocks(spec, client.capabilities, request.attachments),
            text_block(request.prompt),
        ]

    def _result(
        self, run_id: str, outcome: TurnOutcome, session: LaneSession, skipped: int, violations: int
    ) -> RunResult:
        exit_code = EXIT_CODES.get(outcome.status, 1)
        if outcome.status == "INTERRUPTED" and outcome.bound is not None:
            exit_code = 3
        if outcome.error_code == "AUTHENTICATION_REQUIRED":
            exit_code = 4
        return RunResult(
            run_id,
            outcome.status,
            outcome.stop_reason,
            exit_code,
            error_code=outcome.error_code,
            message=outcome.message or outcome.recovery_reason,
            session_id=session.session_id,
            provider_session_id=session.provider_id,
            tool_calls=outcome.tool_calls,
            text=outcome.text,
            permissions=outcome.permissions,
            bound=outcome.bound,
            retryable=outcome.retryable,
            usage=outcome.usage,
            skipped_frames=skipped,
            violations=violations,
        )

    async def _record_outcome(
        self, run_id: str, outcome: TurnOutcome, skipped: int, violations: int
    ) -> None:
        assert self.recorder is not None
        with contextlib.suppress(BatonError):
            await self.recorder.run_status(
                run_id,
                outcome.status,
                stop_reason=outcome.stop_reason,
                error_code=outcome.error_code,
                diagnostic=outcome.message,
                recovery_reason=outcome.recovery_reason,
                skipped_frames=skipped,
                violations=violations,
            )

    async def _release(
        self,
        lane: Lane,
        client: Any,
        session: LaneSession,
        outcome: TurnOutcome,
        keep: bool = False,
    ) -> None:
        """Close the provider session when advertised and nothing about it is ambiguous; never
        start a process only to close. ``keep`` leaves an unambiguous session attached."""
        if outcome.status in ("RECOVERY_REQUIRED", "LOST") or not lane.running:
            lane.release(session.provider_id)
            return
        if keep:
            session.last_status = outcome.status
            return
        if client.capabilities.session_close:
            with contextlib.suppress(BatonError):
                await client.close_session(session.provider_id)
        lane.release(session.provider_id)
        assert self.recorder is not None
        with contextlib.suppress(BatonError):
            self.recorder.session_state(session.session_id, "CLOSED")

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
            grok_models=lane.grok_catalog,
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
            result = await client.connection.request(mutation.method, dict(mutation.params))
            confirmed = confirm_mutation(
                mutation,
                client.session_state(session.provider_id),
                result,
                grok_models=lane.grok_catalog,
            )
        except (SessionMutationAmbiguous, BudgetExpired, TransportClosed) as exc:
            await lane.quarantine(f"a control change has an unknown outcome: {exc.code}")
            if isinstance(exc, SessionMutationAmbiguous):
                raise
            raise SessionMutationAmbiguous(f"{mutation.method}: {exc.code}") from exc
        client.update_session_state(session.provider_id, confirmed.state)
        if confirmed.grok_models is not None:
            lane.grok_catalog = confirmed.grok_models
        session.state = confirmed.state
        await self.recorder.session_resolved(
            session_id, None, confirmed.state, client.connection.last_response_ref
        )
        return self.controls(session_id)

    async def events(self, request: RunRequest) -> AsyncIterator[RunEvent]:
        """Run ``request`` and yield its events as they happen; the last is ``result``."""
        queue: asyncio.Queue[RunEvent | None] = asyncio.Queue()
        task = asyncio.ensure_future(self.run(request, on_event=queue.put_nowait))
        task.add_done_callback(lambda _t: queue.put_nowait(None))
        try:
            while True:
                event = await queue.get()
                if event is None:
                    break
                yield event
            task.result()
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task


#: The agent's last stderr lines a start failure's message quotes (and at most this many
#: characters of them): enough for a "missing API key" or a stack trace's last frames.
START_FAILURE_STDERR_LINES: Final = 10
START_FAILURE_STDERR_CHARS: Final = 2000
#: Seconds a start failure's report waits for the stopped child to be reaped (its exit status
#: and the end of its stderr); the report goes without them after that.
START_FAILURE_EXIT_WAIT_SECONDS: Final = 2.0


async def start_failure_message(exc: BatonError, lane: Lane) -> str:
    """Why the agent could not be set up: how its process ended (status or signal) when it
    is gone, and its last stderr lines (redacted by the lane)."""
    ended = None if lane.running else await lane.last_exit(START_FAILURE_EXIT_WAIT_SECONDS)
    tail = lane.stderr_tail() or (ended.stderr if ended is not None else "")
    lines = [line for line in tail[-START_FAILURE_STDERR_CHARS:].splitlines() if line.strip()]
    message = exc.message
    if ended is not None:
        message = f"the agent {ended.describe()} during startup ({exc.message})"
    if lines:
        shown = lines[-START_FAILURE_STDERR_LINES:]
        message += "; its last stderr lines:\n" + "\n".join(f"  {line}" for line in shown)
    return message


class _SetupWindow:
    """The lane's setup window of one run, closed exactly once (after adopt, or on failure)."""

    def __init__(self, lane: Lane) -> None:
        self._lane = lane
        self._open = False

    def open(self) -> None:
        if not self._open:
            self._lane.begin_setup()
            self._open = True

    def close(self) -> None:
        if self._open:
            self._open = False
            self._lane.end_setup()


def data_dir_path(value: str | None, environ: Mapping[str, str]) -> Path:
    """The data directory Baton would use (``--data-dir`` > ``BATON_HOME`` > platform)."""
    return resolve_data_dir(value, environ)
