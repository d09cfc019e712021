"""Turn-control commands: wait_for_cancel, ignore_cancel, late_update, stop, slow."""

from __future__ import annotations

from typing import Final

from baton.agents.scripted import frames
from baton.agents.scripted.context import Flow, Handler, TurnContext
from baton.agents.scripted.script import Command


async def _tick_until_cancelled(turn: TurnContext, interval_ms: int, label: str) -> None:
    """Send ``"<label> N"`` chunks every ``interval_ms`` (none when 0) until cancelled, or
    until stdin closes (the client can then never cancel)."""
    interval = interval_ms / 1000.0 if interval_ms > 0 else None
    tick = 0
    while not (turn.cancelled.is_set() or turn.abandoned.is_set()):
        if interval is not None:
            tick += 1
            turn.emit(frames.message_chunk(f"{label} {tick}\n"))
        if await turn.wait_cancelled(interval, or_abandoned=True):
            return


async def wait_for_cancel(turn: TurnContext, command: Command) -> Flow:
    """``wait_for_cancel [INTERVAL_MS]``: tick until session/cancel; the turn then answers
    ``cancelled``."""
    await _tick_until_cancelled(turn, command.get_int("INTERVAL_MS"), "waiting for cancel")
    # At stdin EOF the turn ends as if the client had cancelled it.
    turn.cancelled.set()
    return Flow.NEXT


async def ignore_cancel(turn: TurnContext, command: Command) -> Flow:
    """``ignore_cancel [INTERVAL_MS]``: tick until session/cancel, then go silent: the prompt
    is never answered (the agent still answers other requests)."""
    await _tick_until_cancelled(turn, command.get_int("INTERVAL_MS"), "ignoring cancel")
    turn.log.debug("ignore_cancel: cancelled; this prompt will never be answered")
    await turn.abandoned.wait()
    return Flow.SILENT


async def late_update(turn: TurnContext, command: Command) -> Flow:
    """``late_update [TEXT]``: an agent_message_chunk sent after the prompt response."""
    turn.late_updates.append(frames.message_chunk(command.get_str("TEXT")))
    return Flow.NEXT


async def stop(turn: TurnContext, command: Command) -> Flow:
    """``stop REASON``: end the turn now with stopReason REASON (any word, known or not)."""
    turn.stop_reason = command.get_str("REASON")
    return Flow.END


async def slow(turn: TurnContext, command: Command) -> Flow:
    """``slow SECONDS``: pause; a cancel ends the pause early."""
    await turn.wait_cancelled(command.get_float("SECONDS"))
    return Flow.NEXT


HANDLERS: Final[dict[str, Handler]] = {
    "wait_for_cancel": wait_for_cancel,
    "ignore_cancel": ignore_cancel,
    "late_update": late_update,
    "stop": stop,
    "slow": slow,
}
