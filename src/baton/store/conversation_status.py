"""The conversation-status state machine: which status a named session may move to from
which, as one table (the style of :mod:`baton.store.run_status`).

The table is the specification; :func:`check_session_transition` is the one place it is
enforced, and every status write of :mod:`baton.store.conversations` calls it inside the
write's transaction:

- IDLE: nothing runs. A prompt claims it (ACTIVE, naming the owning process); ``close`` ends
  it (CLOSED).
- ACTIVE: one turn runs, owned by one Baton process. It ends IDLE (the turn's outcome is
  known), RECOVERY_REQUIRED (its run is), or CLOSED (a creation that never produced a provider
  session: there is nothing to continue). A dead owner's claim is reconciled to one of these.
- RECOVERY_REQUIRED: a run of it is RECOVERY_REQUIRED. It takes no prompt until `baton
  recover` settles that run; then it is IDLE again.
- CLOSED: final.

A status never "moves" to itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from baton.errors import SessionStatusTransitionInvalid
from baton.store.models import ConversationStatus


def _to(*statuses: ConversationStatus) -> frozenset[ConversationStatus]:
    return frozenset(statuses)


#: From each status, the statuses a conversation may move to next.
SESSION_STATUS_TRANSITIONS: Final[Mapping[ConversationStatus, frozenset[ConversationStatus]]] = {
    "IDLE": _to("ACTIVE", "CLOSED"),
    "ACTIVE": _to("IDLE", "RECOVERY_REQUIRED", "CLOSED"),
    "RECOVERY_REQUIRED": _to("IDLE"),
    "CLOSED": _to(),
}

#: The status a conversation is created in: ACTIVE, claimed by its creator until the provider
#: session exists (so a crash during creation is reconciled like any dead owner's turn).
INITIAL_SESSION_STATUS: Final[ConversationStatus] = "ACTIVE"


def check_session_transition(name: str, current: str, new: str) -> None:
    """Raise :class:`~baton.errors.SessionStatusTransitionInvalid` unless the table lets a
    conversation in ``current`` move to ``new``."""
    allowed = SESSION_STATUS_TRANSITIONS.get(current)  # type: ignore[call-overload]
    if allowed is not None and new in allowed:
        return
    if allowed is None:
        raise SessionStatusTransitionInvalid(f"session {name} has an unknown status {current!r}")
    targets = ", ".join(sorted(allowed)) or "nothing (it is final)"
    raise SessionStatusTransitionInvalid(
        f"session {name} cannot move from {current} to {new} (from {current}: {targets})"
    )
