"""Startup reconciliation: passive, and independent of discovery.

When Baton starts (any verb that opens the store), what a *dead* Baton process left behind is
settled from the store alone: server instances still recorded as live become LOST, and runs
whose turn was in flight become RECOVERY_REQUIRED with a user action. No agent is started, no
session attached, no prompt sent, even when the agent is no longer installed: ACP has no
prompt-status read method, so Baton will not guess what became of an interrupted prompt, and
never replays it. Records owned by a Baton process that is still alive (another `baton run`
sharing the data directory) are left alone.
"""

from __future__ import annotations

from typing import Final

from baton.store import ACTIVE_RUN_STATUSES, Store, StoreConflict
from baton.store.owner import owner_alive


def reconciled_reason(run_id: str) -> str:
    """What a reconciled run's record says about why it needs the user (with its own id)."""
    return (
        "Baton stopped while this turn was in flight. ACP has no prompt-status read method, so "
        f"Baton will not replay the ambiguous prompt: inspect it with `baton recover {run_id}`."
    )


#: The stable code on a reconciled run.
RECONCILED_CODE: Final = "RUNTIME_RESTARTED"


async def reconcile(store: Store) -> list[str]:
    """Mark stale servers LOST and in-flight runs RECOVERY_REQUIRED; return the run ids."""
    store.mark_live_servers_lost(
        "the Baton process that ran this agent is gone", owner_alive=owner_alive
    )
    reconciled: list[str] = []
    for run in store.list_runs(status=ACTIVE_RUN_STATUSES):
        if owner_alive(run.owner):
            continue
        try:
            await store.update_run_status(
                run.id,
                "RECOVERY_REQUIRED",
                expected=ACTIVE_RUN_STATUSES,
                error_code=RECONCILED_CODE,
                recovery_reason=reconciled_reason(run.id),
            )
        except StoreConflict:
            continue  # another process settled it first
        reconciled.append(run.id)
    return reconciled
