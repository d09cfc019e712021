"""Stable exit codes of the `baton` command (documented in README and `--help`).

The CLI names them: the runtime reports a run's outcome class (``RunOutcome``), whose code is
in one table (``baton.runtime.turns.outcome.EXIT_CODES``); the CLI adds the codes only it
produces. ``EPILOG`` (the `--help` text) is built from the names."""

from __future__ import annotations

from typing import Final

from baton.errors import (
    AgentLaunchFailed,
    AuthenticationRequired,
    BatonError,
    IncompatibleProtocolVersion,
)
from baton.runtime.turns.outcome import EXIT_CODES, RunOutcome

# The run outcomes' codes, named (the numbers are in the runtime's one table, EXIT_CODES, which
# RunResult.exit_code and the result event's exitCode read too).
OK: Final = EXIT_CODES[RunOutcome.COMPLETED]
#: The turn failed: refusal, max_tokens, max_turn_requests, an agent error.
TURN_FAILED: Final = EXIT_CODES[RunOutcome.FAILED]
#: Usage or configuration error.
USAGE: Final = EXIT_CODES[RunOutcome.USAGE]
#: A turn budget elapsed.
BUDGET: Final = EXIT_CODES[RunOutcome.BUDGET_EXPIRED]
#: The provider wants authentication.
AUTH_REQUIRED: Final = EXIT_CODES[RunOutcome.AUTHENTICATION_REQUIRED]
#: The agent is not installed or is incompatible.
NOT_INSTALLED: Final = EXIT_CODES[RunOutcome.AGENT_UNAVAILABLE]
#: Recovery required: an outcome is ambiguous.
RECOVERY_REQUIRED: Final = EXIT_CODES[RunOutcome.RECOVERY_REQUIRED]
#: Interrupted or cancelled.
INTERRUPTED: Final = EXIT_CODES[RunOutcome.INTERRUPTED]

# The command line's own codes (no run outcome has them).
#: `--fail-on-denied`: the turn completed, but a permission the agent asked for was denied
#: or cancelled (nobody allowed it).
PERMISSION_NOT_GRANTED: Final = 7
#: `run --session`: the session has a turn running (`--no-wait`, or the wait bound elapsed).
SESSION_BUSY: Final = 8
#: `--fail-on-unreported`: the turn completed, but the workspace comparison found a change no
#: tool call or permission reported (docs/workspaces.md).
UNREPORTED_CHANGES: Final = 9
#: `baton worker`: the worker was fenced off its runs (RUN_CLAIM_LOST, or declared LOST): another
#: worker settled them while this one was paused or cut off from the store (docs/fleet.md).
WORKER_FENCED: Final = 10
#: Standard output's reader went away (EPIPE, e.g. `| head`): 128 + SIGPIPE, as a shell
#: reports a process killed by SIGPIPE.
PIPE_CLOSED: Final = 141

#: What each code means, in the order `--help` lists them.
MEANINGS: Final = (
    (OK, "completed"),
    (TURN_FAILED, "the turn failed (refusal, max_tokens, max_turn_requests, an agent error)"),
    (USAGE, "usage or configuration error"),
    (BUDGET, "a turn budget elapsed"),
    (AUTH_REQUIRED, "authentication required"),
    (NOT_INSTALLED, "agent not installed or incompatible"),
    (RECOVERY_REQUIRED, "recovery required (ambiguous outcome)"),
    (PERMISSION_NOT_GRANTED, "with --fail-on-denied: a permission was denied or cancelled"),
    (SESSION_BUSY, "the session has a turn running (--no-wait, or the wait bound elapsed)"),
    (UNREPORTED_CHANGES, "with --fail-on-unreported: a workspace change nobody reported"),
    (WORKER_FENCED, "baton worker: its runs were settled by another worker (RUN_CLAIM_LOST)"),
    (INTERRUPTED, "interrupted or cancelled"),
    (PIPE_CLOSED, "standard output was closed by its reader (e.g. | head)"),
)

EPILOG: Final = "exit codes:\n" + "".join(f"  {code:<4} {text}\n" for code, text in MEANINGS)


def of_error(exc: BatonError) -> int:
    """The exit code of a verb that ended with ``exc`` outside a run (``sessions --remote``,
    ``logout``, ...): the same classes a run's outcome uses where they apply (the agent wants a
    sign-in: 4; it cannot be started or speaks another protocol version: 5), else a caller's
    mistake is a usage error and anything else a failure."""
    if isinstance(exc, AuthenticationRequired):
        return AUTH_REQUIRED
    if isinstance(exc, AgentLaunchFailed | IncompatibleProtocolVersion):
        return NOT_INSTALLED
    return USAGE if exc.fault == "caller" else TURN_FAILED
