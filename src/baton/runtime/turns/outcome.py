"""How a run ended, for the caller: the outcome classes and the one table of their exit codes.

A turn settles as a :class:`TurnOutcome` (its status, stop reason, error code and what it
produced). The runtime reports the run's class as a :class:`RunOutcome`; :data:`EXIT_CODES` is
the only place that gives an outcome its exit code. The command line names the codes in
``baton.cli.exit_codes`` from this table and adds its own (``--fail-on-denied``, a closed
stdout); ``RunResult.exit_code`` (the library's, and the ``result`` event's ``exitCode``) is
read from it too, so the numbers live once.

Light on purpose (enum, dataclasses): the CLI imports it to build its help.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

from baton.errors import AgentLaunchFailed, AgentNotInstalled, AuthenticationRequired, BatonError
from baton.store.models import RunStatus


class RunOutcome(enum.Enum):
    """The class of a run's ending, as a caller acts on it."""

    #: The turn ended with end_turn (or an inspection attach completed).
    COMPLETED = "completed"
    #: The turn failed: a failing stop reason, an agent error, or the agent broke setup.
    FAILED = "failed"
    #: The caller's request or configuration cannot be run as asked.
    USAGE = "usage"
    #: A turn budget elapsed (the turn was cancelled, or setup outlived it).
    BUDGET_EXPIRED = "budget_expired"
    #: The provider wants its user to sign in.
    AUTHENTICATION_REQUIRED = "authentication_required"
    #: The agent could not be started or spoken to: launch failure, incompatible protocol
    #: version, or a lane fenced for safety.
    AGENT_UNAVAILABLE = "agent_unavailable"
    #: The outcome is ambiguous (see `baton recover`).
    RECOVERY_REQUIRED = "recovery_required"
    #: The user, a caller or the agent cancelled the turn, or a caller cancelled a queued run
    #: before it started (CANCELLED).
    INTERRUPTED = "interrupted"


#: The exit code of every run outcome: the one table (``baton.cli.exit_codes`` names them).
EXIT_CODES: Final[Mapping[RunOutcome, int]] = MappingProxyType(
    {
        RunOutcome.COMPLETED: 0,
        RunOutcome.FAILED: 1,
        RunOutcome.USAGE: 2,
        RunOutcome.BUDGET_EXPIRED: 3,
        RunOutcome.AUTHENTICATION_REQUIRED: 4,
        RunOutcome.AGENT_UNAVAILABLE: 5,
        RunOutcome.RECOVERY_REQUIRED: 6,
        RunOutcome.INTERRUPTED: 130,
    }
)

#: The error code of a run a time bound ended (baton.errors.BudgetExpired's).
BUDGET_EXPIRED_CODE: Final = "BUDGET_EXPIRED"

#: Run statuses whose outcome is ambiguous.
AMBIGUOUS_STATUSES: Final = frozenset({"RECOVERY_REQUIRED", "LOST"})


@dataclass
class TurnOutcome:
    """How a turn ended: the run's final status and why."""

    status: RunStatus
    stop_reason: str | None = None
    error_code: str | None = None
    message: str | None = None
    bound: str | None = None
    interrupted_by: str | None = None
    recovery_reason: str | None = None
    retryable: bool = False
    tool_calls: int = 0
    permissions: list[dict[str, Any]] = field(default_factory=list)
    text: str = ""
    #: The class of this ending when the status alone does not say it (a setup failure:
    #: the agent not installed, a caller's mistake); None: derived (:func:`run_outcome_of`).
    outcome: RunOutcome | None = None
    #: Unparseable lines skipped and protocol violations seen on the connection.
    skipped_frames: int = 0
    violations: int = 0
    #: ``{used, size, cost?, turn?}``: what the agent reported, or None (see LiveUpdates).
    usage: dict[str, Any] | None = None
    #: The turn's workspace comparison as a result carries it (``workspaceChanges``: counts,
    #: files without diffs, unreported paths), or None when the run had no compared workspace.
    workspace_changes: dict[str, Any] | None = None

    @property
    def run_outcome(self) -> RunOutcome:
        """The class of this ending."""
        if self.outcome is not None:
            return self.outcome
        return run_outcome_of(self.status, error_code=self.error_code, bound=self.bound)


def run_outcome_of(
    status: RunStatus, *, error_code: str | None = None, bound: str | None = None
) -> RunOutcome:
    """The outcome class of a run that ended with ``status``: authentication first (whatever
    the status), an interrupt by a bound is a budget expiry, an ambiguous status needs
    recovery, a queued run cancelled before it started (CANCELLED) was interrupted by its
    caller, and anything else that did not complete failed."""
    if error_code == "AUTHENTICATION_REQUIRED":
        return RunOutcome.AUTHENTICATION_REQUIRED
    if error_code == BUDGET_EXPIRED_CODE and status != "COMPLETED":
        # A bound elapsed: the turn's (INTERRUPTED), its setup's, or the time a queued run
        # waited for a worker (CANCELLED, `baton submit --timeout`).
        return RunOutcome.BUDGET_EXPIRED
    if status == "COMPLETED":
        return RunOutcome.COMPLETED
    if status == "INTERRUPTED":
        return RunOutcome.BUDGET_EXPIRED if bound is not None else RunOutcome.INTERRUPTED
    if status == "CANCELLED":
        return RunOutcome.INTERRUPTED
    if status in AMBIGUOUS_STATUSES:
        return RunOutcome.RECOVERY_REQUIRED
    return RunOutcome.FAILED


def refusal_outcome(exc: BatonError) -> RunOutcome:
    """The outcome class of a run refused before its prompt was sent with ``exc`` (as `baton
    run` classes the same refusal): the agent missing or not startable, a sign-in wanted, the
    caller's mistake, else a failure."""
    if isinstance(exc, AgentNotInstalled | AgentLaunchFailed):
        return RunOutcome.AGENT_UNAVAILABLE
    if isinstance(exc, AuthenticationRequired):
        return RunOutcome.AUTHENTICATION_REQUIRED
    return RunOutcome.USAGE if exc.fault == "caller" else RunOutcome.FAILED


def exit_code_of(outcome: RunOutcome) -> int:
    """The exit code of ``outcome`` (from :data:`EXIT_CODES`)."""
    return EXIT_CODES[outcome]
