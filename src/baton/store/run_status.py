"""The run-status state machine: which status a run may move to from which, as one table.

Like h11's ``_state.py``, the table is the specification; :func:`check_run_transition` is the
one place it is enforced, and :meth:`baton.store.Store.update_run_status` (the only write of a
run's status) calls it inside the write's transaction. Built from what Baton writes today:

- ``baton run``: a run is created STARTING; RUNNING once session/prompt was written
  (runtime/turns/recorder.py); INTERRUPTING when a bound or the user cancels the turn
  (runtime/turns/turn.py); then the turn's outcome (COMPLETED, FAILED, INTERRUPTED,
  RECOVERY_REQUIRED, LOST). A failure before the prompt (launch, initialize, session setup)
  goes straight from STARTING to FAILED or RECOVERY_REQUIRED; an inspection run from STARTING
  to COMPLETED (runtime/runtime.py).
- Startup reconciliation: any active status of a dead Baton becomes RECOVERY_REQUIRED
  (runtime/lanes/reconcile.py).
- ``baton recover --mark-failed``: RECOVERY_REQUIRED becomes FAILED (cli/commands/recover.py).
- QUEUED is the store's default for a run created without a status (library callers) and
  the status of a submitted turn waiting for a worker (baton/fleet/): it may start, or end
  without starting. Only a QUEUED run may become CANCELLED (``QueuedRun.cancel``: nothing of
  it was started, nothing reached an agent); a run that started is interrupted, never
  cancelled.
- AWAITING_APPROVAL: a turn with a question (permission request, elicitation) open with a
  person (runtime/turns/questions.py through :meth:`Store.set_pending_questions`); back to
  RUNNING when the last is answered. Its other edges are those of RUNNING it pauses.

The final statuses (COMPLETED, FAILED, INTERRUPTED, LOST, CANCELLED) have no way out. A status never
"moves" to itself: a repeated write is a caller's bug, and refused like any other edge that
is not in the table.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from baton.errors import RunStatusTransitionInvalid
from baton.store.models import FINAL_RUN_STATUSES, RunStatus


def _to(*statuses: RunStatus) -> frozenset[RunStatus]:
    return frozenset(statuses)


#: Where a turn in flight may end (its outcome).
_OUTCOMES: Final = _to("COMPLETED", "FAILED", "INTERRUPTED", "RECOVERY_REQUIRED", "LOST")

#: From each status, the statuses a run may move to next.
RUN_STATUS_TRANSITIONS: Final[Mapping[RunStatus, frozenset[RunStatus]]] = {
    "QUEUED": _to("STARTING", "RUNNING", "CANCELLED") | _OUTCOMES,
    "STARTING": _to("RUNNING") | _OUTCOMES,
    "RUNNING": _to("AWAITING_APPROVAL", "INTERRUPTING") | _OUTCOMES,
    "AWAITING_APPROVAL": _to("RUNNING", "INTERRUPTING") | _OUTCOMES,
    "INTERRUPTING": _OUTCOMES,
    # The turn is over but its outcome unknown: only the user settles it (`baton recover`).
    "RECOVERY_REQUIRED": _to("FAILED"),
    "COMPLETED": _to(),
    "FAILED": _to(),
    "INTERRUPTED": _to(),
    "LOST": _to(),
    "CANCELLED": _to(),
}

#: Statuses a run may be created in: QUEUED (the default), STARTING (``baton run``) or
#: RUNNING (a run recorded once its prompt is already out, as recovery tests do).
INITIAL_RUN_STATUSES: Final = _to("QUEUED", "STARTING", "RUNNING")


def reached(current: str, wanted: str) -> bool:
    """Whether a run in ``current`` is where a write of ``wanted`` leaves it: the same status,
    or AWAITING_APPROVAL for RUNNING (a run with a question already open starts waiting:
    :meth:`Store.update_run_status`)."""
    return current == wanted or (wanted == "RUNNING" and current == "AWAITING_APPROVAL")


def check_run_transition(run_id: str, current: str, new: str) -> None:
    """Raise :class:`~baton.errors.RunStatusTransitionInvalid` unless the table lets a run in
    ``current`` move to ``new``."""
    allowed = RUN_STATUS_TRANSITIONS.get(current)  # type: ignore[call-overload]
    if allowed is not None and new in allowed:
        return
    if current in FINAL_RUN_STATUSES:
        raise RunStatusTransitionInvalid(
            f"run {run_id} is already {current}; it cannot become {new}"
        )
    if allowed is None:
        raise RunStatusTransitionInvalid(f"run {run_id} has an unknown status {current!r}")
    targets = ", ".join(sorted(allowed)) or "nothing"
    raise RunStatusTransitionInvalid(
        f"run {run_id} cannot move from {current} to {new} (from {current}: {targets})"
    )


def check_initial_status(status: str) -> None:
    """Raise :class:`~baton.errors.RunStatusTransitionInvalid` unless a run may start in
    ``status``."""
    if status not in INITIAL_RUN_STATUSES:
        raise RunStatusTransitionInvalid(
            f"a run cannot be created {status}; it starts "
            f"{' or '.join(sorted(INITIAL_RUN_STATUSES))}"
        )
