"""Readiness: whether a profile's agent can run here, and if not, why and what to do.

Executable discovery, live initialization, authentication, account compatibility and model
access are separate checks (:class:`Checks`); a failure in one is never reported as another
("not installed" means only that nothing could be launched). A :class:`Readiness` carries the
state, the selected executable and launch form, the rejected candidates with their reasons,
stable diagnostic codes with bounded redacted messages, and the next action.

States (:class:`ReadinessState`):

- ``NOT_INSTALLED``: no candidate executable exists to launch.
- ``INCOMPATIBLE``: an executable was found but failed its launch contract or live negotiation.
- ``DISCOVERED``: the launch contract is present; startable; account and model not yet proved.
- ``READY``: a provider session was created.
- ``AUTHENTICATION_REQUIRED``: the provider wants a sign-in.
- ``ACCOUNT_UNSUPPORTED``: signed in, but with an account this runtime cannot use.
- ``FAILED``: a check could not complete (a crash, an elapsed bound, an agent error).
- ``DEGRADED``: a session was created, but something is wrong enough to report.

:meth:`Readiness.to_json` is the stable machine form (field names documented in
docs/profiles.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Final, Literal

from baton.runtime.agents import discovery as _discovery
from baton.runtime.agents.discovery import CandidateSource, DiscoveryResult, RejectedCandidate
from baton.runtime.agents.profiles import Profile

#: The version of the JSON shape :meth:`Readiness.to_json` produces.
READINESS_SCHEMA: Final = "baton/readiness@v1"

#: Longest diagnostic message kept. Messages hold untrusted agent text (error messages, stderr);
#: this keeps a report readable and bounded whatever the agent wrote.
MAX_DIAGNOSTIC_CHARS: Final = 1024

#: Most diagnostics kept on one result (the first ones; the rest are counted in the last).
MAX_DIAGNOSTICS: Final = 32


class ReadinessState(StrEnum):
    """Where a profile stands (see the module docstring)."""

    NOT_INSTALLED = "NOT_INSTALLED"
    INCOMPATIBLE = "INCOMPATIBLE"
    DISCOVERED = "DISCOVERED"
    READY = "READY"
    AUTHENTICATION_REQUIRED = "AUTHENTICATION_REQUIRED"
    ACCOUNT_UNSUPPORTED = "ACCOUNT_UNSUPPORTED"
    FAILED = "FAILED"
    DEGRADED = "DEGRADED"


#: States in which Baton may start the agent.
STARTABLE_STATES: Final = frozenset(
    {ReadinessState.DISCOVERED, ReadinessState.READY, ReadinessState.DEGRADED}
)


class NextAction(StrEnum):
    """What the user should do next."""

    INSTALL = "INSTALL"
    CONFIGURE = "CONFIGURE"
    AUTHENTICATE = "AUTHENTICATE"
    RETRY = "RETRY"


class DiscoveryCheck(StrEnum):
    """Was an executable found to launch?"""

    UNKNOWN = "UNKNOWN"
    NOT_FOUND = "NOT_FOUND"
    FOUND = "FOUND"


class CompatibilityCheck(StrEnum):
    """Did it prove its launch contract (and, live, the protocol)?"""

    UNKNOWN = "UNKNOWN"
    COMPATIBLE = "COMPATIBLE"
    INCOMPATIBLE = "INCOMPATIBLE"


class InitializationCheck(StrEnum):
    """Did a live ``initialize`` succeed?"""

    NOT_STARTED = "NOT_STARTED"
    INITIALIZED = "INITIALIZED"
    FAILED = "FAILED"


class AuthenticationCheck(StrEnum):
    """What is known of the provider sign-in.

    ``PROVIDER_MANAGED``: the provider owns sign-in and did not ask for it (yet). A created
    session does not prove more: some adapters (claude-agent-acp 0.23.1) create sessions
    without credentials and ask only at the first prompt. ``REQUIRED``: the agent answered
    -32000. ``UNSUPPORTED_ACCOUNT``: signed in, but the account cannot be used.
    """

    UNKNOWN = "UNKNOWN"
    PROVIDER_MANAGED = "PROVIDER_MANAGED"
    REQUIRED = "REQUIRED"
    UNSUPPORTED_ACCOUNT = "UNSUPPORTED_ACCOUNT"


class ModelCheck(StrEnum):
    """What the created session said about models: ``EMPTY`` when it offered a model selector
    with nothing in it, ``UNKNOWN`` when it offered none (many agents don't)."""

    UNKNOWN = "UNKNOWN"
    AVAILABLE = "AVAILABLE"
    EMPTY = "EMPTY"


Severity = Literal["info", "warning", "error"]

# --- stable diagnostic codes ---------------------------------------------------------------
# Discovery (also the reason codes of rejected candidates): see baton.runtime.agents.discovery.
EXECUTABLE_NOT_FOUND: Final = _discovery.EXECUTABLE_NOT_FOUND
EXECUTABLE_PATH_REFUSED: Final = _discovery.EXECUTABLE_PATH_REFUSED
EXECUTABLE_NOT_EXECUTABLE: Final = _discovery.EXECUTABLE_NOT_EXECUTABLE
EXECUTABLE_SPAWN_FAILED: Final = _discovery.EXECUTABLE_SPAWN_FAILED
VERSION_COMMAND_FAILED: Final = _discovery.VERSION_COMMAND_FAILED
PROBE_TIMEOUT: Final = _discovery.PROBE_TIMEOUT
PROBE_OUTPUT_TOO_LARGE: Final = _discovery.PROBE_OUTPUT_TOO_LARGE
LAUNCH_CONTRACT_MISMATCH: Final = _discovery.LAUNCH_CONTRACT_MISMATCH
#: Info: the launch contract was proved.
LAUNCH_CONTRACT_FOUND: Final = "LAUNCH_CONTRACT_FOUND"
#: Info: the profile has no version command; ``initialize`` reports the agent's version.
NO_VERSION_COMMAND: Final = "NO_VERSION_COMMAND"
# Live checks (baton.runtime.agents.live_check).
LIVE_SPAWN_FAILED: Final = "LIVE_SPAWN_FAILED"
INITIALIZE_FAILED: Final = "INITIALIZE_FAILED"
INITIALIZE_MALFORMED: Final = "INITIALIZE_MALFORMED"
PROTOCOL_VERSION_UNSUPPORTED: Final = "PROTOCOL_VERSION_UNSUPPORTED"
PROVIDER_AUTHENTICATION_REQUIRED: Final = "PROVIDER_AUTHENTICATION_REQUIRED"
PROVIDER_ACCOUNT_UNSUPPORTED: Final = "PROVIDER_ACCOUNT_UNSUPPORTED"
SESSION_CREATION_FAILED: Final = "SESSION_CREATION_FAILED"
SESSION_MALFORMED: Final = "SESSION_MALFORMED"
SESSION_CREATED: Final = "SESSION_CREATED"
#: Info: the sign-in state came from the agent's ``auth/status`` answer (unstable ACP).
AUTH_STATUS_REPORTED: Final = "AUTH_STATUS_REPORTED"
#: Info: the agent does not advertise ``auth/status``; sign-in was inferred from session/new.
AUTH_INFERRED: Final = "AUTH_INFERRED"
LIVE_BUDGET_EXPIRED: Final = "LIVE_BUDGET_EXPIRED"
RUNTIME_EXITED: Final = "RUNTIME_EXITED"
ACP_PROTOCOL_VIOLATION: Final = "ACP_PROTOCOL_VIOLATION"
STDOUT_NOISE: Final = "STDOUT_NOISE"
MODEL_CATALOG_EMPTY: Final = "MODEL_CATALOG_EMPTY"
RUNTIME_SHUTDOWN_INCOMPLETE: Final = "RUNTIME_SHUTDOWN_INCOMPLETE"

#: Every diagnostic code, for documentation and tests.
DIAGNOSTIC_CODES: Final = (
    EXECUTABLE_NOT_FOUND,
    EXECUTABLE_PATH_REFUSED,
    EXECUTABLE_NOT_EXECUTABLE,
    EXECUTABLE_SPAWN_FAILED,
    VERSION_COMMAND_FAILED,
    PROBE_TIMEOUT,
    PROBE_OUTPUT_TOO_LARGE,
    LAUNCH_CONTRACT_MISMATCH,
    LAUNCH_CONTRACT_FOUND,
    NO_VERSION_COMMAND,
    LIVE_SPAWN_FAILED,
    INITIALIZE_FAILED,
    INITIALIZE_MALFORMED,
    PROTOCOL_VERSION_UNSUPPORTED,
    PROVIDER_AUTHENTICATION_REQUIRED,
    PROVIDER_ACCOUNT_UNSUPPORTED,
    SESSION_CREATION_FAILED,
    SESSION_MALFORMED,
    SESSION_CREATED,
    AUTH_STATUS_REPORTED,
    AUTH_INFERRED,
    LIVE_BUDGET_EXPIRED,
    RUNTIME_EXITED,
    ACP_PROTOCOL_VIOLATION,
    STDOUT_NOISE,
    MODEL_CATALOG_EMPTY,
    RUNTIME_SHUTDOWN_INCOMPLETE,
)


def bounded(text: str, limit: int = MAX_DIAGNOSTIC_CHARS) -> str:
    """``text`` cut to ``limit`` characters (an ellipsis marks the cut)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One finding: a stable ``code``, a ``severity`` and a bounded message for people.
    Messages are redacted by whoever builds them from untrusted text."""

    code: str
    severity: Severity
    message: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "message", bounded(self.message))

    def to_json(self) -> dict[str, str]:
        """``{"code", "severity", "message"}``."""
        return {"code": self.code, "severity": self.severity, "message": self.message}


@dataclass(frozen=True, slots=True)
class Checks:
    """The separate checks behind a state."""

    discovery: DiscoveryCheck = DiscoveryCheck.UNKNOWN
    compatibility: CompatibilityCheck = CompatibilityCheck.UNKNOWN
    initialization: InitializationCheck = InitializationCheck.NOT_STARTED
    authentication: AuthenticationCheck = AuthenticationCheck.UNKNOWN
    models: ModelCheck = ModelCheck.UNKNOWN

    def to_json(self) -> dict[str, str]:
        """The five checks by name."""
        return {
            "discovery": self.discovery.value,
            "compatibility": self.compatibility.value,
            "initialization": self.initialization.value,
            "authentication": self.authentication.value,
            "models": self.models.value,
        }


@dataclass(frozen=True, slots=True)
class AdvertisedAuthMethod:
    """An auth method the agent advertised in ``initialize`` (untrusted, bounded text)."""

    id: str
    name: str
    type: str

    def to_json(self) -> dict[str, str]:
        """``{"id", "name", "type"}``."""
        return {"id": self.id, "name": self.name, "type": self.type}


@dataclass(frozen=True, slots=True)
class AgentIdentity:
    """The agent's ``agentInfo`` from a live ``initialize`` (untrusted, bounded text)."""

    name: str
    version: str | None

    def to_json(self) -> dict[str, str | None]:
        """``{"name", "version"}``."""
        return {"name": self.name, "version": self.version}


@dataclass(frozen=True, slots=True)
class Readiness:
    """One profile's readiness (see the module docstring)."""

    profile: str
    display_name: str
    state: ReadinessState
    environment_contract: str
    executable: str | None = None
    source: CandidateSource | None = None
    version: str | None = None
    launch_argv: tuple[str, ...] | None = None
    launch_form: str | None = None
    rejected: tuple[RejectedCandidate, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()
    next_action: NextAction | None = None
    checks: Checks = field(default_factory=Checks)
    auth_methods: tuple[AdvertisedAuthMethod, ...] = ()
    agent: AgentIdentity | None = None
    live: bool = False

    def __post_init__(self) -> None:
        if len(self.diagnostics) > MAX_DIAGNOSTICS:
            kept = self.diagnostics[: MAX_DIAGNOSTICS - 1]
            extra = len(self.diagnostics) - len(kept)
            note = Diagnostic(kept[-1].code, "info", f"{extra} more diagnostics not shown")
            object.__setattr__(self, "diagnostics", (*kept, note))

    @property
    def can_start(self) -> bool:
        """True in the states where Baton may start the agent."""
        return self.state in STARTABLE_STATES

    @property
    def codes(self) -> tuple[str, ...]:
        """The diagnostic codes, in order."""
        return tuple(d.code for d in self.diagnostics)

    def to_json(self) -> dict[str, Any]:
        """The stable machine form (docs/profiles.md lists every field)."""
        return {
            "schema": READINESS_SCHEMA,
            "profile": self.profile,
            "display_name": self.display_name,
            "state": self.state.value,
            "can_start": self.can_start,
            "next_action": self.next_action.value if self.next_action is not None else None,
            "executable": self.executable,
            "source": self.source,
            "version": self.version,
            "launch_form": self.launch_form,
            "environment_contract": self.environment_contract,
            "checks": self.checks.to_json(),
            "diagnostics": [d.to_json() for d in self.diagnostics],
            "rejected": [
                {"path": r.path, "source": r.source, "reason": r.reason, "detail": r.detail}
                for r in self.rejected
            ],
            "auth_methods": [m.to_json() for m in self.auth_methods],
            "agent": self.agent.to_json() if self.agent is not None else None,
            "live": self.live,
        }


# --- from discovery ------------------------------------------------------------------------

#: Rejections that mean a file was there but is not this agent (or not a program).
_INCOMPATIBLE_REASONS: Final = frozenset(
    {
        EXECUTABLE_NOT_EXECUTABLE,
        VERSION_COMMAND_FAILED,
        PROBE_TIMEOUT,
        PROBE_OUTPUT_TOO_LARGE,
        LAUNCH_CONTRACT_MISMATCH,
    }
)


def _install_how(profile: Profile) -> str:
    """`` (`npm install ...`)`` when the profile knows its install command, else nothing."""
    return f" (`{profile.install_command}`)" if profile.install_command else ""


def _how_to_point(profile: Profile) -> str:
    return f"set {profile.override_env} or [executables].{profile.id} in the config file"


def readiness_from_discovery(profile: Profile, result: DiscoveryResult) -> Readiness:
    """The readiness a discovery result implies (no agent was started)."""
    base = Readiness(
        profile=profile.id,
        display_name=profile.display_name,
        state=ReadinessState.NOT_INSTALLED,
        environment_contract=profile.environment.id,
        rejected=result.rejected,
    )
    rejections = tuple(
        Diagnostic(r.reason, "error", f"{r.path}: {r.detail}") for r in result.rejected
    )
    if result.selected is not None and result.launch_argv is not None:
        found_note = Diagnostic(
            LAUNCH_CONTRACT_FOUND,
            "info",
            f"{result.selected} proved the {profile.id} launch contract; sign-in, account and "
            "model access are checked by `baton doctor --live` or the first session",
        )
        notes: tuple[Diagnostic, ...] = (found_note,)
        if profile.version_argv is None:
            notes += (
                Diagnostic(
                    NO_VERSION_COMMAND,
                    "info",
                    f"{profile.id} has no version command; `--live` reports the agent's "
                    "version from initialize",
                ),
            )
        return replace(
            base,
            state=ReadinessState.DISCOVERED,
            executable=result.selected,
            source=result.source,
            version=result.version,
            launch_argv=result.launch_argv,
            launch_form=result.launch_form,
            diagnostics=(*rejections, *notes),
            checks=Checks(
                discovery=DiscoveryCheck.FOUND,
                compatibility=CompatibilityCheck.COMPATIBLE,
                authentication=AuthenticationCheck.PROVIDER_MANAGED,
            ),
        )
    reasons = {r.reason for r in result.rejected}
    if reasons & _INCOMPATIBLE_REASONS:
        fix = (
            f"point Baton at a compatible {profile.display_name}: {_how_to_point(profile)}"
            if result.explicit
            else f"install a compatible {profile.display_name}, or {_how_to_point(profile)}"
        )
        incompatible = replace(
            base,
            state=ReadinessState.INCOMPATIBLE,
            diagnostics=rejections,
            next_action=NextAction.CONFIGURE if result.explicit else NextAction.INSTALL,
            checks=Checks(
                discovery=DiscoveryCheck.FOUND, compatibility=CompatibilityCheck.INCOMPATIBLE
            ),
        )
        return _hinted(incompatible, fix)
    if EXECUTABLE_SPAWN_FAILED in reasons:
        return replace(
            base,
            state=ReadinessState.FAILED,
            diagnostics=rejections,
            next_action=NextAction.RETRY,
            checks=Checks(discovery=DiscoveryCheck.FOUND),
        )
    if result.explicit:
        origin = result.override_origin or "the override"
        if origin == "config":
            origin = f"[executables].{profile.id} in the config file"
        missing_override = replace(
            base,
            diagnostics=rejections,
            next_action=NextAction.CONFIGURE,
            checks=Checks(discovery=DiscoveryCheck.NOT_FOUND),
        )
        return _hinted(
            missing_override, f"fix {origin}: Baton uses only that executable, never a fallback"
        )
    names = ", ".join(result.searched)
    missing = Diagnostic(
        EXECUTABLE_NOT_FOUND,
        "error",
        f"no {names} on PATH; install {profile.display_name}{_install_how(profile)}, or "
        f"{_how_to_point(profile)}",
    )
    return replace(
        base,
        diagnostics=(*rejections, missing),
        next_action=NextAction.INSTALL,
        checks=Checks(discovery=DiscoveryCheck.NOT_FOUND),
    )


def _hinted(readiness: Readiness, hint: str) -> Readiness:
    """Append ``hint`` to the last diagnostic's message (the fix for the failure it reports)."""
    if not readiness.diagnostics:
        return readiness
    *rest, last = readiness.diagnostics
    updated = Diagnostic(last.code, last.severity, f"{last.message}; {hint}")
    return replace(readiness, diagnostics=(*rest, updated))
