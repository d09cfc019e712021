"""The live readiness check (`baton doctor --live`): start the agent, negotiate, make a session.

Given a DISCOVERED profile, start its selected executable with the profile's child environment
in its own process group (:class:`~baton.runtime.processes.process.AgentProcess`), in a fresh temporary
directory, and within one :class:`~baton.wire.budget.TurnBudget` send ``initialize`` (protocol
version 1, no filesystem, no terminal) and ``session/new`` for that directory with no MCP
servers. The outcome is READY, AUTHENTICATION_REQUIRED (with the auth methods the agent
advertised), ACCOUNT_UNSUPPORTED, INCOMPATIBLE (a protocol version Baton does not implement, a
malformed answer, a protocol violation), FAILED (a crash, an agent error, or the bound that
elapsed) or DEGRADED (a session, but noisy stdout, an empty model catalog, or a process that
outlived shutdown). Then the agent is shut down: stdin closed, 1 s, SIGTERM to the group, 2 s,
SIGKILL to the group.

Baton never calls ``authenticate`` here: sign-in is provider-owned (decisions.md item 10).
Every message that carries agent text (error messages, stderr) is bounded and redacted with
the profile's sensitive values.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final

from baton._version import __version__
from baton.connection.core import Connection
from baton.errors import (
    AgentRequestError,
    AuthenticationRequired,
    BatonError,
    BudgetExpired,
    IncompatibleProtocolVersion,
    MalformedResult,
    ProtocolError,
    ProtocolViolation,
    TransportClosed,
)
from baton.redaction import SecretValues, redact_text
from baton.runtime.agents.environment import child_environment, sensitive_values
from baton.runtime.agents.profiles import Profile
from baton.runtime.agents.readiness import (
    ACP_PROTOCOL_VIOLATION,
    AUTH_INFERRED,
    AUTH_STATUS_REPORTED,
    INITIALIZE_FAILED,
    INITIALIZE_MALFORMED,
    LIVE_BUDGET_EXPIRED,
    LIVE_SPAWN_FAILED,
    MODEL_CATALOG_EMPTY,
    PROTOCOL_VERSION_UNSUPPORTED,
    PROVIDER_ACCOUNT_UNSUPPORTED,
    PROVIDER_AUTHENTICATION_REQUIRED,
    RUNTIME_EXITED,
    RUNTIME_SHUTDOWN_INCOMPLETE,
    SESSION_CREATED,
    SESSION_CREATION_FAILED,
    SESSION_MALFORMED,
    STDOUT_NOISE,
    AdvertisedAuthMethod,
    AgentIdentity,
    AuthenticationCheck,
    Checks,
    CompatibilityCheck,
    Diagnostic,
    InitializationCheck,
    ModelCheck,
    NextAction,
    Readiness,
    ReadinessState,
    bounded,
)
from baton.runtime.processes.process import AgentProcess, ShutdownResult
from baton.wire import auth_status
from baton.wire.auth_status import AuthStatus
from baton.wire.budget import BudgetClock, TurnBudget
from baton.wire.capabilities import InitializeResult
from baton.wire.codec import initialize_params, negotiate
from baton.wire.session_state import NewSessionResult, parse_new_session_result

#: The idle bound of a live check: the agent must answer (any frame) within this. Starting a
#: Node adapter and its provider client takes a few seconds; 30 s is generous.
LIVE_IDLE_SECONDS: Final = 30.0

#: The absolute bound of a live check (initialize and session/new together). Protects `baton
#: doctor --live` from an agent that trickles output forever.
LIVE_ABSOLUTE_SECONDS: Final = 60.0

#: Shutdown ladder of the live check: close stdin and wait this long...
LIVE_EOF_GRACE_SECONDS: Final = 1.0
#: ...then SIGTERM the group and wait this long...
LIVE_TERM_GRACE_SECONDS: Final = 2.0
#: ...then SIGKILL the group and wait this long before reporting it survived.
LIVE_KILL_GRACE_SECONDS: Final = 2.0

#: How long to wait for a crashed agent's exit status (its stdout already closed).
EXIT_STATUS_WAIT_SECONDS: Final = 1.0

#: Characters of the agent's stderr quoted in a failure (the newest ones).
MAX_STDERR_EXCERPT_CHARS: Final = 400

#: Auth methods and their text kept in a report.
MAX_REPORTED_AUTH_METHODS: Final = 16
MAX_AUTH_TEXT_CHARS: Final = 120


def default_budget() -> TurnBudget:
    """The budget a live check runs in unless the caller gives one."""
    return TurnBudget(idle=LIVE_IDLE_SECONDS, absolute=LIVE_ABSOLUTE_SECONDS)


@dataclass(slots=True)
class _Observed:
    """What the live exchange established so far."""

    initialize: InitializeResult | None = None
    #: The agent's ``auth/status`` answer, where it advertised the method (else None: the
    #: sign-in state is inferred from ``session/new``).
    auth_status: AuthStatus | None = None
    session: NewSessionResult | None = None
    violations: int = 0
    first_violation: str | None = None


class _Redact:
    """Redaction with the profile's sensitive values, then a bound."""

    def __init__(self, secrets: Sequence[str]) -> None:
        self._secrets = SecretValues(secrets)

    def __call__(self, text: str) -> str:
        return redact_text(text, self._secrets)

    def bounded(self, text: str, limit: int) -> str:
        return bounded(self(text), limit)


async def live_check(
    profile: Profile,
    base: Readiness,
    *,
    parent_env: Mapping[str, str],
    budget: TurnBudget | None = None,
) -> Readiness:
    """Run the live check for ``profile`` from its discovery readiness ``base``.

    A ``base`` that is not DISCOVERED (nothing startable was found) is returned unchanged with
    ``live`` left False: there is nothing to start.
    """
    if base.state is not ReadinessState.DISCOVERED or base.launch_argv is None:
        return base
    redact = _Redact(sensitive_values(profile, parent_env))
    env = child_environment(profile, parent_env)
    loop = asyncio.get_running_loop()
    with tempfile.TemporaryDirectory(prefix="baton-live-", ignore_cleanup_errors=True) as workdir:
        try:
            proc = await AgentProcess.spawn(base.launch_argv, env=env, cwd=workdir, redact=redact)
        except BatonError as exc:  # AgentLaunchFailed, or an argument the OS cannot pass
            failed = _failed(
                base,
                ReadinessState.FAILED,
                Diagnostic(LIVE_SPAWN_FAILED, "error", bounded(exc.message, 600)),
                NextAction.RETRY,
                Checks(discovery=base.checks.discovery, compatibility=base.checks.compatibility),
            )
            return _redacted(failed, base, redact)
        observed = _Observed()

        def on_violation(violation: ProtocolViolation) -> None:
            observed.violations += 1
            if observed.first_violation is None:
                observed.first_violation = f"{violation.kind}: {violation.message}"

        conn: Connection[None] = Connection(
            proc.stdout,
            proc.stdin,
            max_frame_bytes=profile.max_frame_bytes,
            on_violation=on_violation,
        )
        conn.start()
        clock = (budget or default_budget()).start(loop.time())
        try:
            result = await _exchange(profile, base, conn, proc, clock, workdir, observed, redact)
        finally:
            await conn.close()
            shutdown = await proc.shutdown(
                eof_grace=LIVE_EOF_GRACE_SECONDS,
                term_grace=LIVE_TERM_GRACE_SECONDS,
                kill_grace=LIVE_KILL_GRACE_SECONDS,
            )
        return _redacted(_after_shutdown(result, shutdown, proc), base, redact)


async def _exchange(
    profile: Profile,
    base: Readiness,
    conn: Connection[None],
    proc: AgentProcess,
    clock: BudgetClock,
    workdir: str,
    observed: _Observed,
    redact: _Redact,
) -> Readiness:
    """initialize, then session/new; the readiness either answer implies."""
    step = "initialize"
    try:
        params = initialize_params(profile.protocol, __version__)
        raw = await conn.request("initialize", params, budget=clock)
        _codec, observed.initialize = negotiate(raw, profile.protocol)
        if observed.initialize.capabilities.auth_status:
            step = auth_status.METHOD
            observed.auth_status = auth_status.parse_auth_status(
                await conn.request(auth_status.METHOD, {}, budget=clock)
            )
            if observed.auth_status.state == auth_status.UNAUTHENTICATED:
                return _auth_required(
                    base, observed, step, "unauthenticated (the user needs to sign in)"
                )
        step = "session/new"
        raw = await conn.request("session/new", {"cwd": workdir, "mcpServers": []}, budget=clock)
        observed.session = parse_new_session_result(raw)
    except IncompatibleProtocolVersion as exc:
        return _incompatible(base, observed, PROTOCOL_VERSION_UNSUPPORTED, exc.message)
    except MalformedResult as exc:
        code = INITIALIZE_MALFORMED if step == "initialize" else SESSION_MALFORMED
        return _incompatible(base, observed, code, f"{step}: {exc.message}")
    except AuthenticationRequired as exc:
        return _auth_required(base, observed, step, redact.bounded(exc.agent_message, 300))
    except AgentRequestError as exc:
        text = redact(exc.agent_message)
        if step == "session/new" and any(
            p.search(exc.agent_message) for p in profile.account_unsupported_patterns
        ):
            return _account_unsupported(base, observed, bounded(text, 300))
        code = INITIALIZE_FAILED if step == "initialize" else SESSION_CREATION_FAILED
        return _failed(
            base,
            ReadinessState.FAILED,
            Diagnostic(
                code,
                "error",
                f"{step} failed with agent error {exc.rpc_code}: {bounded(text, 300)}",
            ),
            NextAction.RETRY,
            _checks(base, observed),
        )
    except BudgetExpired as exc:
        return _failed(
            base,
            ReadinessState.FAILED,
            Diagnostic(
                LIVE_BUDGET_EXPIRED, "error", f"{step}: {exc.message} (the {exc.bound} bound)"
            ),
            NextAction.RETRY,
            _checks(base, observed),
        )
    except ProtocolError as exc:
        return _incompatible(base, observed, ACP_PROTOCOL_VIOLATION, f"{step}: {exc.message}")
    except TransportClosed as exc:
        return await _exited(base, observed, proc, step, exc, redact)
    return _session_outcome(profile, base, conn, observed, redact)


def _checks(base: Readiness, observed: _Observed) -> Checks:
    """Discovery's checks, plus what the live exchange got to (initialize ran first, so if it
    did not succeed it failed)."""
    initialized = observed.initialize is not None
    return Checks(
        discovery=base.checks.discovery,
        compatibility=CompatibilityCheck.COMPATIBLE if initialized else base.checks.compatibility,
        initialization=(
            InitializationCheck.INITIALIZED if initialized else InitializationCheck.FAILED
        ),
        authentication=base.checks.authentication,
    )


def _identity(observed: _Observed) -> AgentIdentity | None:
    info = observed.initialize.agent_info if observed.initialize is not None else None
    if info is None:
        return None
    version = bounded(info.version, MAX_AUTH_TEXT_CHARS) if info.version is not None else None
    return AgentIdentity(bounded(info.name, MAX_AUTH_TEXT_CHARS), version)


def _auth_methods(observed: _Observed) -> tuple[AdvertisedAuthMethod, ...]:
    if observed.initialize is None:
        return ()
    return tuple(
        AdvertisedAuthMethod(
            bounded(m.id, MAX_AUTH_TEXT_CHARS),
            bounded(m.name, MAX_AUTH_TEXT_CHARS),
            bounded(m.type, MAX_AUTH_TEXT_CHARS),
        )
        for m in observed.initialize.auth_methods[:MAX_REPORTED_AUTH_METHODS]
    )


def _failed(
    base: Readiness,
    state: ReadinessState,
    diagnostic: Diagnostic,
    action: NextAction,
    checks: Checks,
    observed: _Observed | None = None,
) -> Readiness:
    return replace(
        base,
        state=state,
        diagnostics=(*base.diagnostics, diagnostic),
        next_action=action,
        checks=checks,
        agent=_identity(observed) if observed is not None else None,
        auth_methods=_auth_methods(observed) if observed is not None else (),
        live=True,
    )


def _incompatible(base: Readiness, observed: _Observed, code: str, message: str) -> Readiness:
    checks = replace(_checks(base, observed), compatibility=CompatibilityCheck.INCOMPATIBLE)
    return _failed(
        base,
        ReadinessState.INCOMPATIBLE,
        Diagnostic(code, "error", bounded(message, 600)),
        NextAction.INSTALL,
        checks,
        observed,
    )


def _sign_in_source(observed: _Observed) -> Diagnostic:
    """Which way the sign-in state was found: the agent's ``auth/status`` answer where it
    advertised the method, else the inference from ``session/new`` succeeding."""
    if observed.auth_status is not None:
        return Diagnostic(
            AUTH_STATUS_REPORTED,
            "info",
            f"sign-in read from auth/status: {observed.auth_status.state}",
        )
    return Diagnostic(
        AUTH_INFERRED,
        "info",
        "sign-in inferred from session/new (the agent does not advertise auth/status)",
    )


def _auth_required(base: Readiness, observed: _Observed, step: str, message: str) -> Readiness:
    methods = _auth_methods(observed)
    listed = ", ".join(f"{m.id} ({m.name})" for m in methods) or "none advertised"
    terminal = any(m.type == "terminal" for m in methods)
    how = (
        "sign in with the provider's own command in a terminal"
        if terminal or not methods
        else "sign in with one of the advertised methods"
    )
    diagnostic = Diagnostic(
        PROVIDER_AUTHENTICATION_REQUIRED,
        "error",
        f"{step} answered {message or 'authentication required'}; auth methods: {listed}; {how}",
    )
    checks = replace(_checks(base, observed), authentication=AuthenticationCheck.REQUIRED)
    return _failed(
        base,
        ReadinessState.AUTHENTICATION_REQUIRED,
        diagnostic,
        NextAction.AUTHENTICATE,
        checks,
        observed,
    )


def _account_unsupported(base: Readiness, observed: _Observed, message: str) -> Readiness:
    checks = replace(
        _checks(base, observed), authentication=AuthenticationCheck.UNSUPPORTED_ACCOUNT
    )
    return _failed(
        base,
        ReadinessState.ACCOUNT_UNSUPPORTED,
        Diagnostic(
            PROVIDER_ACCOUNT_UNSUPPORTED,
            "error",
            f"session/new: the signed-in account cannot be used: {message}; sign in with an "
            "account this agent supports",
        ),
        NextAction.AUTHENTICATE,
        checks,
        observed,
    )


async def _exited(
    base: Readiness,
    observed: _Observed,
    proc: AgentProcess,
    step: str,
    exc: TransportClosed,
    redact: _Redact,
) -> Readiness:
    status = "did not report an exit status"
    with contextlib.suppress(TimeoutError):
        code = await asyncio.wait_for(proc.wait(), EXIT_STATUS_WAIT_SECONDS)
        status = f"exited with status {code}" if code >= 0 else f"was killed by signal {-code}"
    tail = proc.stderr_tail().strip()
    excerpt = f"; stderr: {tail[-MAX_STDERR_EXCERPT_CHARS:]}" if tail else ""
    message = f"the agent {status} during {step} ({exc.message}){excerpt}"
    return _failed(
        base,
        ReadinessState.FAILED,
        Diagnostic(RUNTIME_EXITED, "error", redact.bounded(message, 900)),
        NextAction.RETRY,
        _checks(base, observed),
        observed,
    )


def _model_check(session: NewSessionResult) -> ModelCheck:
    state = session.state
    selectors = state.options_in_category("model")
    offered: list[int] = [len(option.values()) for option in selectors]
    if state.models is not None:
        offered.append(len(state.models.available))
    if not offered:
        return ModelCheck.UNKNOWN
    return ModelCheck.AVAILABLE if any(offered) else ModelCheck.EMPTY


def _session_outcome(
    profile: Profile,
    base: Readiness,
    conn: Connection[None],
    observed: _Observed,
    redact: _Redact,
) -> Readiness:
    """A session was created: READY, unless the exchange showed something worse."""
    assert observed.session is not None
    if observed.violations:
        detail = redact(observed.first_violation or "")
        return _incompatible(
            base,
            observed,
            ACP_PROTOCOL_VIOLATION,
            f"{observed.violations} protocol violation(s), the first: {detail}",
        )
    models = _model_check(observed.session)
    checks = Checks(
        discovery=base.checks.discovery,
        compatibility=CompatibilityCheck.COMPATIBLE,
        initialization=InitializationCheck.INITIALIZED,
        authentication=AuthenticationCheck.PROVIDER_MANAGED,
        models=models,
    )
    notes: list[Diagnostic] = [
        Diagnostic(
            SESSION_CREATED,
            "info",
            "initialize and session/new succeeded; the provider may still ask for sign-in at "
            "the first prompt",
        ),
        _sign_in_source(observed),
    ]
    state = ReadinessState.READY
    if conn.skipped_frames:
        noise = f"the agent wrote {conn.skipped_frames} line(s) to stdout that are not JSON-RPC"
        if profile.strict_mode:
            return _incompatible(
                base, observed, STDOUT_NOISE, f"{noise}; this profile runs in strict mode"
            )
        notes.append(Diagnostic(STDOUT_NOISE, "warning", f"{noise} (skipped)"))
        state = ReadinessState.DEGRADED
    if models is ModelCheck.EMPTY:
        notes.append(
            Diagnostic(
                MODEL_CATALOG_EMPTY,
                "warning",
                "the session offered a model selector with no models",
            )
        )
        state = ReadinessState.DEGRADED
    return replace(
        base,
        state=state,
        diagnostics=(*base.diagnostics, *notes),
        next_action=NextAction.RETRY if state is ReadinessState.DEGRADED else None,
        checks=checks,
        agent=_identity(observed),
        auth_methods=_auth_methods(observed),
        live=True,
    )


def _redacted(result: Readiness, base: Readiness, redact: _Redact) -> Readiness:
    """Every text the live check added (diagnostics, auth methods, agent identity) comes from
    the agent or holds its words: redact it all with the profile's secrets and the patterns."""
    added = tuple(
        Diagnostic(d.code, d.severity, redact(d.message))
        for d in result.diagnostics[len(base.diagnostics) :]
    )
    methods = tuple(
        AdvertisedAuthMethod(redact(m.id), redact(m.name), redact(m.type))
        for m in result.auth_methods
    )
    agent = result.agent
    if agent is not None:
        version = redact(agent.version) if agent.version is not None else None
        agent = AgentIdentity(redact(agent.name), version)
    return replace(
        result,
        diagnostics=(*base.diagnostics, *added),
        auth_methods=methods,
        agent=agent,
    )


def _after_shutdown(result: Readiness, shutdown: ShutdownResult, proc: AgentProcess) -> Readiness:
    """Report an agent that outlived SIGKILL (the caller must not start another blindly)."""
    if not shutdown.survived:
        return result
    note = Diagnostic(
        RUNTIME_SHUTDOWN_INCOMPLETE,
        "error",
        f"process group {proc.pgid} was still alive {shutdown.elapsed:.1f}s after SIGKILL",
    )
    state = ReadinessState.DEGRADED if result.state is ReadinessState.READY else result.state
    action: NextAction | None = result.next_action or NextAction.RETRY
    return replace(result, state=state, diagnostics=(*result.diagnostics, note), next_action=action)
