"""Provider-session setup of one run: start (or reuse) the lane, open the session (session/new,
or attach by resume/load), record and adopt it, apply the run's native settings and the
profile's extensions, publish the controls, and build the prompt's blocks.

Nothing sent here is a prompt: a failure before the session exists fails the run (the agent
is not to blame for a caller's request, so the class follows the error's fault), except a
settings change whose outcome is unknown, which makes the run RECOVERY_REQUIRED and
quarantines the lane (the session's native state is unknown and ACP updates carry no run id).

Cancellation: :func:`open_session` may be cancelled at any await; the caller's
:class:`SetupWindow` is closed by the caller's ``finally`` (see ``Runtime.run``).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, replace
from typing import Any, Final

from baton.connection.client import AcpClient
from baton.errors import (
    AgentLaunchFailed,
    AgentRequestError,
    AuthenticationRequired,
    BatonError,
    BudgetExpired,
    IncompatibleProtocolVersion,
    LaneFenced,
    NotAnAcpAgent,
    ProtocolError,
    SessionMutationAmbiguous,
    SessionNotResumable,
    StoreUnavailable,
    TransportClosed,
)
from baton.runtime.agents.native_modes import UNDECLARED
from baton.runtime.lanes.lane import Lane, LaneSession
from baton.runtime.permissions.correlation import ToolCallTracker
from baton.runtime.sessions.mode_guard import guard_mode
from baton.runtime.turns.attachments import attachment_blocks
from baton.runtime.turns.context import RunContext
from baton.runtime.turns.controls import project_controls
from baton.runtime.turns.outcome import RunOutcome, TurnOutcome
from baton.runtime.turns.settings import RequestedSettings, apply_settings
from baton.runtime.turns.system_prompts import requested_system_prompt, session_setup_record
from baton.store.models import RunStatus
from baton.wire import fork
from baton.wire.capabilities import NO_ELICITATION
from baton.wire.content import build_prompt, text_block
from baton.wire.jsonrpc import RESOURCE_NOT_FOUND
from baton.wire.session_state import NewSessionResult

#: The agent's last stderr lines a start failure's message quotes (and at most this many
#: characters of them): enough for a "missing API key" or a stack trace's last frames.
START_FAILURE_STDERR_LINES: Final = 10
START_FAILURE_STDERR_CHARS: Final = 2000
#: Seconds a start failure's report waits for the stopped child to be reaped (its exit status
#: and the end of its stderr); the report goes without them after that.
START_FAILURE_EXIT_WAIT_SECONDS: Final = 2.0

#: The session/attach method of an attach that loads (its replay is kept apart).
LOAD_METHOD: Final = "session/load"
#: The ``attachedBy`` of a session opened by forking another (`baton session fork`).
FORK_METHOD: Final = fork.METHOD
#: The ``attachedBy`` of a run on a session already attached in this process (kept by an
#: earlier run with ``keep_session``): nothing was sent to attach it.
ATTACHED_HERE: Final = "attached"


class SetupWindow:
    """The lane's setup window of one run, closed exactly once (after adopt, or on failure)."""

    def __init__(self, lane: Lane) -> None:
        self._lane = lane
        self._open = False

    def open(self) -> None:
        """Open the window (idempotent): updates of an unknown session are held meanwhile."""
        if not self._open:
            self._lane.begin_setup()
            self._open = True

    def close(self) -> None:
        """Close the window (idempotent)."""
        if self._open:
            self._open = False
            self._lane.end_setup()


@dataclass(frozen=True, slots=True)
class SessionReady:
    """The session is open, configured and adopted: the turn may start."""

    session: LaneSession
    client: AcpClient
    #: The prompt's content blocks.
    blocks: list[dict[str, Any]]
    #: The blocks came from a profile-owned attachment mapping (see AcpClient.send_prompt).
    profile_mapped: bool


@dataclass(frozen=True, slots=True)
class SetupEnded:
    """The run ends during setup: a failure, or an inspection attach that sends no prompt.

    ``session`` is set when the result should name the session; ``recorded`` when the run's
    final status is already written."""

    outcome: TurnOutcome
    session: LaneSession | None = None
    recorded: bool = False


def _failure(
    code: str,
    message: str,
    run_outcome: RunOutcome,
    *,
    status: RunStatus = "FAILED",
    bound: str | None = None,
) -> SetupEnded:
    recovery = message if status == "RECOVERY_REQUIRED" else None
    return SetupEnded(
        TurnOutcome(
            status,
            error_code=code,
            message=message,
            recovery_reason=recovery,
            outcome=run_outcome,
            bound=bound,
        )
    )


def _raise_for_queued_run(ctx: RunContext, exc: BatonError) -> None:
    """A queued run's setup cut short by its shared store going away is not a failure of the
    run: the error propagates (nothing was prompted) and the fleet worker running it waits for
    the store and starts the turn again (baton/fleet/worker.py). Any other run fails here."""
    if isinstance(exc, StoreUnavailable) and ctx.request.queued_run_id is not None:
        raise exc


def _fault_outcome(exc: BatonError) -> RunOutcome:
    """A setup error the agent did not cause is the caller's to fix."""
    return RunOutcome.USAGE if exc.fault == "caller" else RunOutcome.FAILED


async def open_session(ctx: RunContext, window: SetupWindow) -> SessionReady | SetupEnded:
    """Set the run's provider session up (see the module docstring)."""
    lane, request, redact = ctx.lane, ctx.request, ctx.redact
    try:
        offer = ctx.elicitor.offer if ctx.elicitor is not None else NO_ELICITATION
        client = await lane.ensure_started(ctx.setup_clock, elicitation=offer)
        assert lane.server_id is not None
        await lane.extensions.before_session(
            client, lane.server_id, request.model, request.effort, ctx.setup_clock
        )
        window.open()
        attach_method: str | None = None
        roots = tuple(request.additional_directories)
        system_prompt = requested_system_prompt(request.system_prompt, request.append_system_prompt)
        kept = _kept_idle(lane, request.attach_session)
        if kept is not None:
            # Attached in this process (kept by an earlier run): used as it is.
            opened = NewSessionResult(kept.provider_id, client.session_state(kept.provider_id))
            attach_method = ATTACHED_HERE
        elif request.attach_session is not None:
            attached = await client.attach_session(
                request.attach_session,
                ctx.cwd,
                mcp_servers=ctx.tools,
                additional_directories=roots,
                system_prompt=system_prompt,
            )
            opened = NewSessionResult(attached.session_id, attached.state)
            attach_method = attached.method
        elif request.fork_session is not None:
            opened = await client.fork_session(
                request.fork_session,
                ctx.cwd,
                at_turn=request.fork_at_turn,
                budget=ctx.setup_clock,
                mcp_servers=ctx.tools,
                additional_directories=roots,
            )
            attach_method = FORK_METHOD
        else:
            opened = await client.new_session(
                ctx.cwd,
                budget=ctx.setup_clock,
                mcp_servers=ctx.tools,
                additional_directories=roots,
                system_prompt=system_prompt,
            )
        ref = client.state_ref(opened.session_id)
    except (AgentLaunchFailed, IncompatibleProtocolVersion) as exc:
        return _failure(exc.code, redact(exc.message), RunOutcome.AGENT_UNAVAILABLE)
    except AuthenticationRequired as exc:
        lane.extensions.lost("auth_failure")
        methods = ""
        if lane.initialized is not None and lane.initialized.auth_methods:
            methods = "; advertised methods: " + ", ".join(
                m.id for m in lane.initialized.auth_methods
            )
        return _failure(
            "AUTHENTICATION_REQUIRED",
            redact(f"the agent needs you to sign in{methods} ({exc.agent_message})"),
            RunOutcome.AUTHENTICATION_REQUIRED,
        )
    except BudgetExpired as exc:
        await lane.quarantine("setup outlived the turn budget")
        # The bound that elapsed is named as it is for a turn's expiry (an idle bound shorter
        # than a slow start ends here, before the prompt).
        return _failure(exc.code, exc.message, RunOutcome.BUDGET_EXPIRED, bound=exc.bound)
    except LaneFenced as exc:
        return _failure(exc.code, exc.message, RunOutcome.AGENT_UNAVAILABLE)
    except AgentRequestError as exc:
        lost_id = request.attach_session or request.fork_session
        if lost_id is not None and _session_lost(exc):
            lost = _lost_session_error(lost_id, exc)
            return _failure(lost.code, redact(lost.message), RunOutcome.USAGE)
        _raise_for_queued_run(ctx, exc)
        return _failure(exc.code, redact(exc.message), _fault_outcome(exc))
    except (TransportClosed, ProtocolError) as exc:
        message = redact(await start_failure_message(exc, lane))
        if await _not_an_agent(lane):
            not_acp = NotAnAcpAgent(
                f"not an ACP agent: the program exited without answering initialize ({message}); "
                "check the command (an ACP adapter, or the flag that makes it speak ACP)"
            )
            return _failure(not_acp.code, not_acp.message, RunOutcome.AGENT_UNAVAILABLE)
        return _failure(exc.code, message, RunOutcome.FAILED)
    except BatonError as exc:
        _raise_for_queued_run(ctx, exc)
        return _failure(exc.code, redact(exc.message), _fault_outcome(exc))
    assert lane.server_id is not None
    if kept is not None:
        session = await _reuse(ctx, window, kept)
    else:
        session = await _adopt(ctx, window, opened, ref, attach_method)
        setup_record = session_setup_record(system_prompt, roots, redact)
        if setup_record:
            await ctx.recorder.session_setup(session.session_id, ctx.run_id, setup_record, ref)
    if request.inspect_only:
        return await _inspected(ctx, session, attach_method)
    try:
        blocks = await _configure(ctx, client, session, guarded=kept is None)
    except SessionMutationAmbiguous as exc:
        await lane.quarantine(exc.message)
        return _failure(
            exc.code,
            redact(exc.message),
            RunOutcome.RECOVERY_REQUIRED,
            status="RECOVERY_REQUIRED",
        )
    except BatonError as exc:
        lane.release(session.provider_id)
        _raise_for_queued_run(ctx, exc)
        return _failure(exc.code, redact(exc.message), _fault_outcome(exc))
    profile_mapped = ctx.spec.profile_id == "grok" and bool(request.attachments)
    return SessionReady(session, client, blocks, profile_mapped)


def _session_lost(exc: AgentRequestError) -> bool:
    """True when the agent answered resume/load saying it does not know the session: ACP's
    ``-32002`` (resource not found), or any code with a "not found" message (adapters differ)."""
    return exc.rpc_code == RESOURCE_NOT_FOUND or "not found" in exc.agent_message.lower()


def _lost_session_error(provider_id: str, exc: AgentRequestError) -> SessionNotResumable:
    """The SESSION_NOT_RESUMABLE for an agent that no longer has ``provider_id``, with the
    next step (nothing was prompted: the conversation's context is gone on the agent's side)."""
    return SessionNotResumable(
        f"the agent no longer has provider session {provider_id} ({exc.method} answered "
        f"{exc.rpc_code}: {exc.agent_message}); its context cannot be resumed and no prompt was "
        "sent. Next: start a new session (`baton session new NAME ...`), and remove this one "
        "(`baton session rm NAME`) or keep it for its history"
    )


def _kept_idle(lane: Lane, provider_id: str | None) -> LaneSession | None:
    """The lane's kept session ``provider_id`` when it is attached and idle, else None."""
    session = lane.sessions.get(provider_id) if provider_id is not None else None
    return session if session is not None and session.active is None else None


async def _reuse(ctx: RunContext, window: SetupWindow, session: LaneSession) -> LaneSession:
    """Run on a session kept attached by an earlier run (``keep_session``): nothing is sent
    to attach it; the run is recorded on it and the ``session`` event says ``attached``."""
    lane = ctx.lane
    assert lane.server_id is not None
    await ctx.recorder.run_attached(ctx.run_id, session.session_id, lane.server_id)
    window.close()
    ctx.event(
        "session",
        {
            "sessionId": session.session_id,
            "providerSessionId": session.provider_id,
            "attachedBy": ATTACHED_HERE,
            "replayedUpdates": 0,
        },
    )
    return session


async def _adopt(
    ctx: RunContext,
    window: SetupWindow,
    opened: NewSessionResult,
    ref: object,
    attach_method: str | None,
) -> LaneSession:
    """Record the opened session, hand it to the lane, and deliver (or keep apart) what the
    agent sent before its id was known."""
    lane = ctx.lane
    assert lane.server_id is not None
    session_id = await ctx.recorder.session_opened(
        ctx.spec.profile_id, ctx.cwd, lane.server_id, opened.session_id, opened.state, ref
    )
    await ctx.recorder.run_attached(ctx.run_id, session_id, lane.server_id)
    session = LaneSession(
        session_id=session_id,
        provider_id=opened.session_id,
        cwd=ctx.cwd,
        tracker=ToolCallTracker(opened.session_id),
    )
    early = lane.adopt(session)
    window.close()
    if attach_method == LOAD_METHOD:
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
    ctx.event(
        "session",
        {
            "sessionId": session_id,
            "providerSessionId": opened.session_id,
            "attachedBy": attach_method,
            "replayedUpdates": len(session.replayed),
        },
    )
    return session


async def _inspected(
    ctx: RunContext, session: LaneSession, attach_method: str | None
) -> SetupEnded:
    """An inspection (`baton recover --attach`, `baton session new`): COMPLETED, and no prompt
    was sent. The session stays attached when the request keeps it."""
    attach_method = attach_method or "session/new"
    if not ctx.request.keep_session:
        ctx.lane.release(session.provider_id)
    with contextlib.suppress(BatonError):
        await ctx.recorder.run_status(
            ctx.run_id,
            "COMPLETED",
            diagnostic=f"inspection: attached by {attach_method}; no prompt was sent",
        )
    return SetupEnded(
        TurnOutcome(
            "COMPLETED",
            message=f"attached by {attach_method}; {len(session.replayed)} updates replayed",
        ),
        session=session,
        recorded=True,
    )


async def _configure(
    ctx: RunContext, client: AcpClient, session: LaneSession, *, guarded: bool
) -> list[dict[str, Any]]:
    """Apply the run's native settings (through the profile's extension first), record what
    changed, publish the controls, and return the prompt's blocks.

    ``guarded``: the session was opened or attached by this run, so the native-mode guard
    decides its mode first (:mod:`baton.runtime.sessions.mode_guard`); a session kept
    attached by an earlier run was guarded then, and a mode changed since through a control
    is the caller's explicit choice."""
    lane, request, spec = ctx.lane, ctx.request, ctx.spec
    provider_id = session.provider_id
    requested = RequestedSettings(
        mode=request.mode,
        model=request.model,
        effort=request.effort,
        config=dict(request.config),
    )
    if guarded:
        declared = spec.profile.native_modes if spec.profile is not None else UNDECLARED
        decision = guard_mode(declared, ctx.policy, requested, client.session_state(provider_id))
        if decision.select is not None:
            requested = replace(requested, mode=decision.select)
        if decision.warning is not None:
            ctx.warn(decision.warning.code, ctx.redact(decision.warning.message))
    handled = await lane.extensions.select(client, provider_id, request.model, request.effort)
    if handled:
        requested = replace(requested, model=None, effort=None)
    state, sent = await apply_settings(
        client,
        provider_id,
        requested,
        allow_legacy_set_model=spec.profile is not None and spec.profile.session_models_extension,
    )
    if sent or handled:
        await ctx.recorder.session_resolved(
            session.session_id, ctx.run_id, state, client.state_ref(provider_id)
        )
    controls = project_controls(
        provider_id,
        state,
        grok_models=lane.extensions.models,
        secrets=lane.secrets,
        session_id=session.session_id,
    )
    ctx.event("controls", controls.to_json())
    blocks = build_prompt(client.capabilities, request.prompt)
    if request.attachments:
        blocks = [
            *attachment_blocks(spec, client.capabilities, request.attachments),
            text_block(request.prompt),
        ]
    return blocks


async def _not_an_agent(lane: Lane) -> bool:
    """True when the lane's program ended with status 0 before answering ``initialize``: an
    ACP agent never does that (a crash exits otherwise, and is reported as it ended)."""
    if lane.initialized is not None or lane.running:
        return False
    ended = await lane.last_exit(START_FAILURE_EXIT_WAIT_SECONDS)
    return ended is not None and ended.returncode == 0


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
