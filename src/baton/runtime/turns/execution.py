"""Turn execution: one prompt on an open session, from the turn's creation to its recorded
outcome and the session's release.

Cancellation: cancelling :func:`execute_turn` while the prompt is outstanding abandons the
turn without sending session/cancel (``Turn.interrupt`` is the clean stop): the prompt may
still be running, so the run is recorded RECOVERY_REQUIRED (``CALLER_CANCELLED``) and its
session released, in a shielded step that a second cancellation does not cut short; then the
cancellation propagates. The turn leaves the run's :class:`~baton.runtime.turns.slot.TurnSlot`
and its session's ``active`` slot either way. With a compared workspace, the snapshot is taken
before the prompt and the comparison after the turn settles
(:mod:`~baton.runtime.turns.workspace_turn`); cancelled during the comparison, the outcome is
still recorded (shielded) before the cancellation propagates.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine, Sequence
from typing import Any

from baton.connection.client import AcpClient
from baton.errors import BatonError
from baton.runtime.lanes.lane import LaneSession
from baton.runtime.permissions.ask import Asker
from baton.runtime.permissions.engine import PermissionSettings
from baton.runtime.permissions.local_policy import LocalContext
from baton.runtime.turns.context import RunContext
from baton.runtime.turns.outcome import AMBIGUOUS_STATUSES, TurnOutcome
from baton.runtime.turns.streaming import StreamMemory
from baton.runtime.turns.turn import Turn
from baton.runtime.turns.workspace_turn import compare_after, snapshot_before


async def execute_turn(
    ctx: RunContext,
    session: LaneSession,
    client: AcpClient,
    blocks: Sequence[dict[str, Any]],
    *,
    profile_mapped: bool,
    asker: Asker,
    memory: StreamMemory,
    interrupt_timeout: float,
) -> TurnOutcome:
    """Run the prompt ``blocks`` as ``ctx``'s turn; record its outcome and release (or keep)
    the session. The run's slot (``ctx.slot``) holds the turn while it runs: the run's handle
    interrupts it there, and the runtime tells it there that its lane was quarantined."""
    spec, request = ctx.spec, ctx.request
    permissions = PermissionSettings(
        policy=ctx.policy,
        allow_remembered=spec.allow_remembered_permissions,
        context=LocalContext(
            # The policy's boundary is the run's workspace when it has one.
            worktree=ctx.workspace.record.path if ctx.workspace is not None else ctx.cwd,
            network_allowed=request.execution.network == "enabled",
            read_only=spec.read_only,
            additional_roots=tuple(request.additional_directories),
        ),
    )
    turn = Turn(
        run_id=ctx.run_id,
        lane=ctx.lane,
        session=session,
        client=client,
        recorder=ctx.recorder,
        permissions=permissions,
        asker=asker,
        elicitor=ctx.elicitor,
        clock=ctx.clock,
        memory=memory,
        emit=ctx.emit,
        interrupt_timeout=interrupt_timeout,
    )
    before = await snapshot_before(ctx)
    ctx.slot.hold(turn)
    try:
        outcome = await turn.execute(blocks, profile_mapped=profile_mapped)
    except asyncio.CancelledError:
        if turn.abandoned is not None:
            await _shielded(_settle(ctx, client, session, turn.abandoned))
            ctx.slot.abandoned = turn.abandoned
        raise
    finally:
        ctx.slot.release()
    try:
        await compare_after(ctx, before, turn, outcome)
    except asyncio.CancelledError:
        # The turn is over: its outcome is recorded whatever happens to the comparison.
        await _shielded(_settle(ctx, client, session, outcome))
        raise
    await _settle(ctx, client, session, outcome)
    return outcome


async def _settle(
    ctx: RunContext, client: AcpClient, session: LaneSession, outcome: TurnOutcome
) -> None:
    """Record the turn's outcome with the connection's counters, then release the session."""
    connection = client.connection
    outcome.skipped_frames = connection.skipped_frames
    outcome.violations = connection.violation_count
    await record_outcome(ctx, outcome)
    await release_session(ctx, client, session, outcome)


async def _shielded(step: Coroutine[Any, Any, None]) -> None:
    """Run ``step`` to its end even if the caller is cancelled again meanwhile (the step then
    finishes in the background)."""
    task = asyncio.ensure_future(step)
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.shield(task)


async def record_outcome(ctx: RunContext, outcome: TurnOutcome) -> None:
    """Write the run's final status (a failure to write is left to reconciliation)."""
    with contextlib.suppress(BatonError):
        await ctx.recorder.run_status(
            ctx.run_id,
            outcome.status,
            stop_reason=outcome.stop_reason,
            error_code=outcome.error_code,
            diagnostic=outcome.message,
            recovery_reason=outcome.recovery_reason,
            skipped_frames=outcome.skipped_frames,
            violations=outcome.violations,
        )


async def release_session(
    ctx: RunContext, client: AcpClient, session: LaneSession, outcome: TurnOutcome
) -> None:
    """Close the provider session when advertised and nothing about it is ambiguous; never
    start a process only to close. ``keep_session`` leaves an unambiguous session attached."""
    lane = ctx.lane
    if outcome.status in AMBIGUOUS_STATUSES or not lane.running:
        lane.release(session.provider_id)
        return
    if ctx.request.keep_session:
        session.last_status = outcome.status
        return
    if client.capabilities.session_close:
        with contextlib.suppress(BatonError):
            await client.close_session(session.provider_id)
    lane.release(session.provider_id)
    with contextlib.suppress(BatonError):
        ctx.recorder.session_state(session.session_id, "CLOSED")


async def record_setup_failure(ctx: RunContext, outcome: TurnOutcome) -> None:
    """Write the final status of a run that ended in setup (no prompt was sent)."""
    extra = {"recovery_reason": outcome.recovery_reason} if outcome.recovery_reason else {}
    with contextlib.suppress(BatonError):
        await ctx.recorder.run_status(
            ctx.run_id,
            outcome.status,
            error_code=outcome.error_code,
            diagnostic=outcome.message,
            **extra,
        )
