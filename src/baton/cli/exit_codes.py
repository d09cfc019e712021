"""Stable exit codes of the `baton` command (documented in README and `--help`).

The CLI owns them: the runtime reports statuses and error codes, and the CLI maps them here."""

from __future__ import annotations

from typing import Final

OK: Final = 0
#: The turn failed: refusal, max_tokens, max_turn_requests, an agent error.
TURN_FAILED: Final = 1
#: Usage or configuration error.
USAGE: Final = 2
#: A turn budget elapsed.
BUDGET: Final = 3
#: The provider wants authentication.
AUTH_REQUIRED: Final = 4
#: The agent is not installed or is incompatible.
NOT_INSTALLED: Final = 5
#: Recovery required: an outcome is ambiguous.
RECOVERY_REQUIRED: Final = 6
#: `--fail-on-denied`: the turn completed, but a permission the agent asked for was denied
#: or cancelled (nobody allowed it).
PERMISSION_NOT_GRANTED: Final = 7
#: Interrupted or cancelled.
INTERRUPTED: Final = 130
#: Standard output's reader went away (EPIPE, e.g. `| head`): 128 + SIGPIPE, as a shell
#: reports a process killed by SIGPIPE.
PIPE_CLOSED: Final = 141

EPILOG: Final = """exit codes:
  0    completed
  1    the turn failed (refusal, max_tokens, max_turn_requests, an agent error)
  2    usage or configuration error
  3    a turn budget elapsed
  4    authentication required
  5    agent not installed or incompatible
  6    recovery required (ambiguous outcome)
  7    with --fail-on-denied: a permission was denied or cancelled
  130  interrupted or cancelled
  141  standard output was closed by its reader (e.g. | head)
"""
