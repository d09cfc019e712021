"""``auth/status`` (unstable; SDK 2.4.0 ``schema.unstable.json``): ask the agent whether it can
start sessions without a sign-in, before ``session/new``.

Advertised by ``agentCapabilities.auth.status`` (``{}``). The request is ``{}``; the answer's
``state`` is the only field a client acts on: ``authenticated`` (credentials are configured,
not necessarily valid), ``unauthenticated`` (the user must sign in), ``not_required`` (a local
model, say), ``unknown``; any other value is read as ``unknown``, as the schema requires.
``accounts`` are display information the schema says not to log: Baton keeps only their count.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

#: The request's method.
METHOD: Final = "auth/status"

AUTHENTICATED: Final = "authenticated"
UNAUTHENTICATED: Final = "unauthenticated"
NOT_REQUIRED: Final = "not_required"
UNKNOWN: Final = "unknown"
#: The states the schema defines; anything else is :data:`UNKNOWN`.
STATES: Final = frozenset({AUTHENTICATED, UNAUTHENTICATED, NOT_REQUIRED, UNKNOWN})


@dataclass(frozen=True, slots=True)
class AuthStatus:
    """The agent's answer: its ``state`` (one of :data:`STATES`) and how many accounts it
    listed (their details are never kept)."""

    state: str
    accounts: int = 0


def parse_auth_status(result: object) -> AuthStatus:
    """Read an ``auth/status`` answer; a missing, non-string or unknown state is
    :data:`UNKNOWN` (never an error: the schema tells clients to treat it so)."""
    state = result.get("state") if isinstance(result, Mapping) else None
    accounts = result.get("accounts") if isinstance(result, Mapping) else None
    return AuthStatus(
        state if isinstance(state, str) and state in STATES else UNKNOWN,
        len(accounts) if isinstance(accounts, list) else 0,
    )
