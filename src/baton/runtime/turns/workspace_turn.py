"""A turn's workspace comparison, at the narrowest seam: the snapshot before the prompt is
sent, and after the turn settles the comparison recorded as the run's ``workspace_changes``
item (and emitted as a ``workspace_changes`` event, and carried by the outcome).

A failure to compare (git missing, a workspace removed under the run) never changes the
turn's outcome: it is recorded as the item's ``error`` and said in a ``warning`` event.

Cancellation: both coroutines may be cancelled; a cancelled comparison records nothing (the
before-snapshot stays recorded, so ``baton recover`` compares from it).
"""

from __future__ import annotations

import contextlib
from typing import Any

from baton.errors import BatonError
from baton.runtime.turns.context import RunContext
from baton.runtime.turns.outcome import AMBIGUOUS_STATUSES, TurnOutcome
from baton.runtime.turns.turn import Turn
from baton.runtime.workspaces.snapshot import Snapshot
from baton.runtime.workspaces.tracking import ITEM_KIND, summary_of
from baton.store.models import NewItem


async def snapshot_before(ctx: RunContext) -> Snapshot | None:
    """The workspace's state before the turn (None: no compared workspace, or it failed:
    a ``warning`` event says so)."""
    active, tracker = ctx.workspace, ctx.workspaces
    if active is None or tracker is None or ctx.request.inspect_only:
        return None
    try:
        return await tracker.before_turn(ctx.recorder.store, active, ctx.run_id)
    except (BatonError, OSError) as exc:
        _warn(ctx, exc)
        return None


async def compare_after(
    ctx: RunContext, before: Snapshot | None, turn: Turn, outcome: TurnOutcome
) -> None:
    """Compare, record and report the turn's changes (module docstring)."""
    active, tracker = ctx.workspace, ctx.workspaces
    if before is None or active is None or tracker is None:
        return
    try:
        content = await tracker.after_turn(
            ctx.recorder.store,
            active,
            ctx.run_id,
            before,
            tool_calls=dict(turn.projection.tool_calls),
            permissions=list(turn.permission_log),
            redact=ctx.redact,
            provisional=outcome.status in AMBIGUOUS_STATUSES,
        )
    except (BatonError, OSError) as exc:
        _warn(ctx, exc)
        content = {"workspace": active.record.name, "error": _code(exc), "message": str(exc)}
    record_item(ctx, content)
    if "error" not in content:
        outcome.workspace_changes = summary_of(content)
        ctx.event(ITEM_KIND, outcome.workspace_changes)


def record_item(ctx: RunContext, content: dict[str, Any]) -> None:
    """Append the ``workspace_changes`` item (a store failure is said, never raised)."""
    try:
        ctx.recorder.items(ctx.run_id, [NewItem(ITEM_KIND, content)])
    except (BatonError, OSError) as exc:
        _warn(ctx, exc)


def _code(exc: BaseException) -> str:
    return exc.code if isinstance(exc, BatonError) else "WORKSPACE_GIT_FAILED"


def _warn(ctx: RunContext, exc: BaseException) -> None:
    with contextlib.suppress(Exception):
        ctx.event(
            "warning",
            {"code": _code(exc), "message": f"the workspace was not compared: {exc}"},
        )
