"""Fault commands: output no correct ACP agent produces, and requests a client must refuse.

garbage, endless, bigframe, crash, hang, stderr_flood, unknown_id, foreign_update,
client_request.
"""

from __future__ import annotations

import asyncio
import os
import select
from collections.abc import Iterator
from typing import Final

import orjson

from baton.agents.scripted import frames
from baton.agents.scripted.context import CommandFailed, Flow, Handler, TurnContext
from baton.agents.scripted.paths import PathRefused, resolve_for_client
from baton.agents.scripted.script import Command, decode_escapes, split_word
from baton.agents.scripted.streams import WRITE_SLICE_BYTES, OutputClosed
from baton.wire.jsonrpc import Message, result_response

#: The lines ``garbage`` cycles through. Each is skipped (and counted) by a tolerant client:
#: not JSON, a truncated object, JSON that is not an object, the wrong JSON-RPC version, not an
#: envelope at all, and bytes that are not UTF-8. None is blank or whitespace-only.
GARBAGE_LINES: Final = (
    b"this line is not JSON",
    b'{"jsonrpc": "2.0", "method": "session/update", "params": {',
    b"[1, 2, 3]",
    b'{"jsonrpc": "1.0", "id": 1, "result": {}}',
    b'{"jsonrpc": "2.0"}',
    b"\xff\xfe not UTF-8 \xc3\x28",
)

#: One line of ``stderr_flood`` (the last one is cut to make the byte count exact).
STDERR_FLOOD_LINE: Final = b"scripted-agent: stderr flood " + b"." * 89 + b"\n"

#: How long ``endless`` waits for the pipe to take more before it checks for stdin EOF again.
ENDLESS_POLL_SECONDS: Final = 0.05

#: The session id ``foreign_update`` names: never created by this agent.
FOREIGN_SESSION_ID: Final = "session-never-created"

#: Characters of a client's answer quoted in the ``client_request`` report.
MAX_REPORT_CHARS: Final = 500

#: File ``client_request fs/read_text_file`` asks for when the prompt names none.
DEFAULT_READ_PATH: Final = "README.md"


async def garbage(turn: TurnContext, command: Command) -> Flow:
    """``garbage N``: N lines on stdout that are not JSON-RPC messages."""
    await turn.out.write_all(_garbage_batches(command.get_int("N")))
    return Flow.NEXT


def _garbage_batches(count: int) -> Iterator[bytes]:
    cycle = b"".join(line + b"\n" for line in GARBAGE_LINES)
    cycles_per_batch = max(1, WRITE_SLICE_BYTES // len(cycle))
    full, rest = divmod(count, len(GARBAGE_LINES))
    while full > 0:
        batch = min(full, cycles_per_batch)
        yield cycle * batch
        full -= batch
    if rest:
        yield b"".join(line + b"\n" for line in GARBAGE_LINES[:rest])


def _endless_prefix(session_id: str) -> bytes:
    before, _after = frames.split_chunk_frame(session_id)
    return before


async def endless(turn: TurnContext, command: Command) -> Flow:
    """``endless``: the start of a valid frame, then ``x`` forever, never a newline.

    Written in pieces that never block (see :meth:`RawWriter.write_if_ready`) until the reader
    goes away (the agent then exits) or, when the agent exits on EOF, until stdin closes, even
    if the reader stopped reading long before. The prompt is never answered.
    """
    turn.out.write(_endless_prefix(turn.session.session_id))
    filler = b"x" * select.PIPE_BUF
    while not turn.abandoned.is_set():
        turn.out.write_if_ready(filler, ENDLESS_POLL_SECONDS)
        await asyncio.sleep(0)
    return Flow.SILENT


async def bigframe(turn: TurnContext, command: Command) -> Flow:
    """``bigframe BYTES``: one valid agent_message_chunk of exactly BYTES bytes (the newline
    not counted), its text padded with ``x``. Streamed, never held in memory whole."""
    size = command.get_int("BYTES")
    before, after = frames.split_chunk_frame(turn.session.session_id)
    # ``after`` ends with the newline, which the size does not count.
    overhead = len(before) + len(after) - 1
    if size < overhead:
        raise CommandFailed(f"bigframe: BYTES must be at least {overhead} for this session")
    await turn.out.write_all(_bigframe_parts(before, size - overhead, after))
    return Flow.NEXT


def _bigframe_parts(before: bytes, padding: int, after: bytes) -> Iterator[bytes]:
    yield before
    filler = b"x" * min(padding, WRITE_SLICE_BYTES)
    while padding > 0:
        piece = min(padding, WRITE_SLICE_BYTES)
        yield filler if piece == len(filler) else filler[:piece]
        padding -= piece
    yield after


async def crash(turn: TurnContext, command: Command) -> Flow:
    """``crash [CODE]``: exit the process at once with CODE, leaving the turn unanswered."""
    code = command.get_int("CODE")
    turn.log.info(f"crash: exiting with code {code}")
    os._exit(code)


async def hang(turn: TurnContext, command: Command) -> Flow:
    """``hang``: the agent stops for good: no output, no answers, input ignored.

    It still exits at stdin EOF when it exits on EOF, so a test never leaks it.
    """
    turn.log.info("hang: the agent stops answering")
    turn.hang()
    await turn.abandoned.wait()
    return Flow.SILENT


async def stderr_flood(turn: TurnContext, command: Command) -> Flow:
    """``stderr_flood BYTES``: exactly BYTES bytes of log lines on stderr (blocking when the
    client does not drain stderr: that is the point)."""
    remaining = command.get_int("BYTES")
    lines_per_slice = max(1, WRITE_SLICE_BYTES // len(STDERR_FLOOD_LINE))
    block = STDERR_FLOOD_LINE * lines_per_slice
    try:
        while remaining > 0:
            piece = block if remaining >= len(block) else block[:remaining]
            turn.err.write(piece)
            remaining -= len(piece)
            await asyncio.sleep(0)
    except OutputClosed:
        turn.log.debug("stderr_flood: stderr is closed")
    return Flow.NEXT


async def unknown_id(turn: TurnContext, command: Command) -> Flow:
    """``unknown_id [ID]``: a response to an id the client never used (digits: an integer)."""
    raw = command.get_str("ID")
    request_id: int | str = int(raw) if raw.isdigit() else raw
    turn.out.send(result_response(request_id, {}))
    return Flow.NEXT


async def foreign_update(turn: TurnContext, command: Command) -> Flow:
    """``foreign_update [KIND]``: a session/update for a session id never created (KIND
    ``text``: an agent_message_chunk; ``tool_call``: a pending tool call)."""
    kind = command.get_str("KIND")
    if kind == "text":
        update = frames.message_chunk("text for a session that does not exist")
    elif kind == "tool_call":
        update = {
            "sessionUpdate": "tool_call",
            "toolCallId": "foreign-call-1",
            "title": "a tool call of a session that does not exist",
            "kind": "read",
            "status": "pending",
        }
    else:
        raise CommandFailed(f"foreign_update: KIND is text or tool_call, not {kind!r}")
    turn.out.send(frames.session_update(FOREIGN_SESSION_ID, update))
    return Flow.NEXT


def client_request_params(turn: TurnContext, method: str, args: str) -> Message:
    """The params ``client_request METHOD ARGS`` sends (paths confined to the session cwd)."""
    session_id = turn.session.session_id
    cwd = turn.session.cwd
    try:
        if method == "fs/read_text_file":
            path, _rest = split_word(args)
            target = resolve_for_client(cwd, decode_escapes(path) or DEFAULT_READ_PATH)
            return {"sessionId": session_id, "path": target}
        if method == "fs/write_text_file":
            path, rest = split_word(args)
            target = resolve_for_client(cwd, decode_escapes(path))
            return {"sessionId": session_id, "path": target, "content": decode_escapes(rest)}
    except PathRefused as exc:
        raise CommandFailed(f"client_request {method}: {exc}") from exc
    if method == "terminal/create":
        words = decode_escapes(args).split()
        return {"sessionId": session_id, "command": words[0], "args": words[1:], "cwd": cwd}
    return {"sessionId": session_id}


async def client_request(turn: TurnContext, command: Command) -> Flow:
    """``client_request METHOD [ARGS]``: an agent-to-client request; the answer is reported as
    an agent_message_chunk ``client_request METHOD: result ...`` or ``...: error CODE ...``."""
    method = command.get_str("METHOD")
    params = client_request_params(turn, method, command.get_str("ARGS"))
    reply = await turn.request(method, params)
    if reply.ok:
        report = f"result {orjson.dumps(reply.result).decode()}"
    else:
        error = reply.error or {}
        report = f"error {error.get('code')} {error.get('message', '')}"
    turn.emit(frames.message_chunk(f"client_request {method}: {report[:MAX_REPORT_CHARS]}"))
    return Flow.NEXT


HANDLERS: Final[dict[str, Handler]] = {
    "garbage": garbage,
    "endless": endless,
    "bigframe": bigframe,
    "crash": crash,
    "hang": hang,
    "stderr_flood": stderr_flood,
    "unknown_id": unknown_id,
    "foreign_update": foreign_update,
    "client_request": client_request,
}
