"""Stable exit codes of the `baton` command (documented in README and `--help`)."""

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
#: Interrupted or cancelled.
INTERRUPTED: Final = 130

EPILOG: Final = """exit codes:
  0    completed
  1    the turn failed (refusal, max_tokens, max_turn_requests, an agent error)
  2    usage or configuration error
  3    a turn budget elapsed
  4    authentication required
  5    agent not installed or incompatible
  6    recovery required (ambiguous outcome)
  130  interrupted or cancelled
"""
