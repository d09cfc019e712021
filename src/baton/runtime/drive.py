"""A run's task, from its creation to its result: the ad-hoc agent's launch form, the
session's setup (:func:`~baton.runtime.sessions.setup.open_session`), the turn
(:func:`~baton.runtime.turns.execution.execute_turn`), the result event; and how a stop
during setup ends it (INTERRUPTED, never ambiguous: nothing was prompted)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass

from baton.errors import BatonError
from baton.runtime.lanes.lane import LaneSession
from baton.runtime.permissions.ask import Asker
from baton.runtime.result import RunResult, result_of_outcome
from baton.runtime.run import Run
from baton.runtime.sessions.setup import SetupEnded, SetupWindow, open_session
from baton.runtime.tracing import RunTrace
from baton.runtime.turns.context import RunContext
from baton.runtime.turns.execution import (
    execute_turn,
    record_outcome,
    record_setup_failure,
    release_session,
)
from baton.runtime.turns.outcome import TurnOutcome
from baton.runtime.turns.streaming import StreamMemory
from baton.runtime.turns.turn import CALLER_CANCELLED
from baton.runtime.workspace_setup import workspace_view

__all__ = ["TurnDeps", "drive"]


@dataclass(frozen=True, slots=True)
class TurnDeps:
    """What every turn of a runtime shares: the asker of the ``ask`` policy, the
    runtime-wide stream memory bound, the interrupt deadline."""

    asker: Asker
    memory: StreamMemory
    interrupt_timeout: float


async def drive(
    run: Run,
    ctx: RunContext,
    started: float,
    run_trace: RunTrace | None,
    deps: TurnDeps,
) -> RunResult:
    """The run after its creation (its task): the launch form, session setup, the turn, the
    result (and the end of its trace, failed when the run's task ends by an exception).

    Cancellation: a cancellation the run's handle asked for (an interrupt during setup, an
    abandon) ends the run with its outcome; any other propagates after it is recorded."""
    try:
        result = await _drive_traced(run, ctx, started, deps)
    except BaseException as exc:
        if run_trace is not None:
            run_trace.close(exc)
        raise
    if run_trace is not None:
        run_trace.close(None)
    return result


async def _drive_traced(run: Run, ctx: RunContext, started: float, deps: TurnDeps) -> RunResult:
    """:func:`drive` inside its trace."""
    run.begin()
    window = SetupWindow(ctx.lane)
    try:
        outcome, session = await _run_on_lane(run, ctx, window, deps)
    finally:
        window.close()
    result = result_of_outcome(ctx.run_id, outcome, session)
    result.workspace = workspace_view(ctx.workspace) if ctx.workspace is not None else None
    result.warnings = list(ctx.warnings)
    result.duration_ms = int((time.monotonic() - started) * 1000)
    ctx.emit(result.to_event())
    return result


async def _run_on_lane(
    run: Run, ctx: RunContext, window: SetupWindow, deps: TurnDeps
) -> tuple[TurnOutcome, LaneSession | None]:
    """Set the session up, then run the turn on it; the outcome and the session to name.

    A cancellation the run's handle asked for (an interrupt during setup, an abandon)
    ends the run with its outcome; any other propagates after it is recorded."""
    if run.slot.interrupt_reason is not None:
        # Stopped before its task began: nothing was started for it.
        cancelled = _stopped_in_setup(run.slot.interrupt_reason)
        await record_setup_failure(ctx, cancelled)
        return cancelled, None
    try:
        if ctx.request.agent_command is not None:
            with contextlib.suppress(BatonError):
                await ctx.recorder.launch_form(
                    ctx.run_id, ctx.redact(ctx.spec.launch_form), ctx.request.env_keys
                )
        opened = await open_session(ctx, window)
    except asyncio.CancelledError:
        # Nothing was prompted: the run is interrupted by its caller, never ambiguous.
        cancelled = _stopped_in_setup(run.slot.interrupt_reason)
        task = asyncio.ensure_future(record_setup_failure(ctx, cancelled))
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(task)
        if run.take_handle_cancel():
            return cancelled, None
        raise
    run.setup_ended()
    if isinstance(opened, SetupEnded):
        if not opened.recorded:
            await record_setup_failure(ctx, opened.outcome)
        return opened.outcome, opened.session
    if run.slot.interrupt_reason is not None:
        # Stopped from inside the run's own task during setup (an event's reader left):
        # the setup was let finish, and no prompt is sent.
        stopped = _stopped_in_setup(run.slot.interrupt_reason)
        await record_outcome(ctx, stopped)
        await release_session(ctx, opened.client, opened.session, stopped)
        return stopped, opened.session
    try:
        outcome = await execute_turn(
            ctx,
            opened.session,
            opened.client,
            opened.blocks,
            profile_mapped=opened.profile_mapped,
            asker=deps.asker,
            memory=deps.memory,
            interrupt_timeout=deps.interrupt_timeout,
        )
    except asyncio.CancelledError:
        abandoned = run.slot.abandoned
        if abandoned is not None and run.take_handle_cancel():
            return abandoned, opened.session
        raise
    return outcome, opened.session


# --- session controls ------------------------------------------------------------------


def _stopped_in_setup(reason: str | None) -> TurnOutcome:
    """The outcome of a run stopped during its setup (``reason``: its handle's interrupt;
    None: its caller was cancelled): INTERRUPTED, never ambiguous, since nothing was
    prompted."""
    return TurnOutcome(
        "INTERRUPTED",
        error_code=CALLER_CANCELLED,
        message=(
            f"the run was interrupted ({reason}) during setup; no prompt was sent"
            if reason is not None
            else "the caller cancelled the run during setup; no prompt was sent"
        ),
        interrupted_by=reason or "caller",
    )
