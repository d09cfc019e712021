"""Output commands: echo, stream, think, plan, usage, title, commands."""

from __future__ import annotations

import asyncio
from typing import Final

from baton.agents.scripted import frames
from baton.agents.scripted.context import Flow, Handler, TurnContext
from baton.agents.scripted.script import Command
from baton.agents.scripted.session import StreamRecord


async def echo(turn: TurnContext, command: Command) -> Flow:
    """``echo [TEXT]``: one agent_message_chunk."""
    turn.emit(frames.message_chunk(command.get_str("TEXT")))
    return Flow.NEXT


async def think(turn: TurnContext, command: Command) -> Flow:
    """``think [TEXT]``: one agent_thought_chunk."""
    turn.emit(frames.thought_chunk(command.get_str("TEXT")))
    return Flow.NEXT


async def plan(turn: TurnContext, command: Command) -> Flow:
    """``plan [TEXT]``: a plan update; entries are ``|``-separated, or the default three."""
    turn.emit(frames.plan(frames.plan_entries(command.get_str("TEXT"))))
    return Flow.NEXT


async def usage(turn: TurnContext, command: Command) -> Flow:
    """``usage [USED [SIZE]]``: a usage_update."""
    turn.emit(frames.usage(command.get_int("USED"), command.get_int("SIZE")))
    return Flow.NEXT


async def title(turn: TurnContext, command: Command) -> Flow:
    """``title [TEXT]``: a session_info_update; the title also shows in session/list."""
    text = command.get_str("TEXT")
    turn.session.title = text
    turn.emit(frames.session_info(text))
    return Flow.NEXT


async def commands(turn: TurnContext, command: Command) -> Flow:
    """``commands``: an available_commands_update listing the command language."""
    turn.emit(frames.available_commands())
    return Flow.NEXT


async def stream(turn: TurnContext, command: Command) -> Flow:
    """``stream N [DELAY_MS]``: N agent_message_chunk updates, ``chunk 1\\n`` to ``chunk N\\n``.

    Without a delay the chunks are pre-serialized and written in batches of about
    :data:`~baton.agents.scripted.frames.STREAM_BATCH_BYTES`, with a cancel check between
    batches. A cancel stops the stream early; history records the chunks actually sent.
    """
    count = command.get_int("N")
    delay = command.get_int("DELAY_MS") / 1000.0
    blob = turn.stream_blob()
    sent = 0
    if delay > 0:
        for index in range(1, count + 1):
            turn.out.write(blob.lines(index, index + 1))
            sent = index
            if index < count and await turn.wait_cancelled(delay):
                break
    else:
        for lines, data in blob.batches(1, count + 1):
            if turn.cancelled.is_set():
                break
            turn.out.write(data)
            sent += lines
            await asyncio.sleep(0)
    turn.record(StreamRecord(sent))
    return Flow.NEXT


HANDLERS: Final[dict[str, Handler]] = {
    "echo": echo,
    "stream": stream,
    "think": think,
    "plan": plan,
    "usage": usage,
    "title": title,
    "commands": commands,
}
