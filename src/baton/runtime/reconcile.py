"""Startup reconciliation: passive, and independent of discovery.

When Baton starts, what a previous process left behind is settled from the store alone: server
instances still recorded as live become LOST, and runs whose turn was in flight become
RECOVERY_REQUIRED with a user action. No agent is started, no session attached, no prompt sent,
even when the agent is no longer installed: ACP has no prompt-status read method, so Baton will
not guess what became of an interrupted prompt, and never replays it.
"""

from __future__ import annotations

from typing import Final

from baton.store import ACTIVE_RUN_STATUSES, Store, StoreConflict

#: What a reconciled run's record says about why it needs the user.
RECONCILED_REASON: Final = (
    "Baton stopped while this turn was in flight. ACP has no prompt-status read method, so Baton "
    "will not replay the ambiguous prompt: inspect it with `baton recover RUN`."
)


async def reconcile(store: Store, *, live_server_ids: frozenset[str] = frozenset()) -> list[str]:
    """Mark stale servers LOST and in-flight runs RECOVERY_REQUIRED; return the run ids.

    ``live_server_ids`` are server instances owned by this process (never reconciled).
    """
    store.mark_live_servers_lost(
        "Baton restarted while this agent process was recorded as live", exclude=live_server_ids
    )
    reconciled: list[str] = []
    for run in store.list_runs(status=ACTIVE_RUN_STATUSES):
        if run.server_instance_id is not None and run.server_instance_id in live_server_ids:
            continue
        try:
            await store.update_run_status(
                run.id,
                "RECOVERY_REQUIRED",
                expected=ACTIVE_RUN_STATUSES,
                error_code="RUNTIME_RESTARTED",
                recovery_reason=RECONCILED_REASON,
            )
        except StoreConflict:
            continue  # another process settled it first
        reconciled.append(run.id)
    return reconciled
