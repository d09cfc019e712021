"""``withdraw KIND SECONDS``: the agent cancels one of its own requests to the client.

The agent asks (``permission``: a tool call and ``session/request_permission``; ``elicit``: an
``elicitation/create`` form), waits up to ``SECONDS`` for the answer, and if none came sends
``$/cancel_request`` for it (stable ACP: either side may cancel any outstanding request). The
client's reply (an answer that raced the cancel, or -32800) is reported as
``withdrawn KIND answer: JSON``; the tool call ends ``failed`` either way.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Final

import orjson

from baton.agents.scripted import frames
from baton.agents.scripted.context import ClientReply, Flow, Handler, TurnContext
from baton.agents.scripted.script import Command
from baton.wire.jsonrpc import Message, notification

#: Characters of the client's reply quoted in the report.
MAX_WITHDRAW_REPORT_CHARS: Final = 2000

#: How long the agent waits for the client's reply after its ``$/cancel_request`` (seconds): a
#: client that never answers does not hold the turn forever.
REPLY_AFTER_CANCEL_SECONDS: Final = 30.0

_OPTIONS: Final = [
    {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
]


def _permission(turn: TurnContext) -> tuple[str, Message]:
    call_id = turn.session.next_tool_call_id()
    turn.emit(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": call_id,
            "title": "Withdrawn permission check",
            "kind": "other",
            "status": "pending",
        }
    )
    params = {
        "sessionId": turn.session.session_id,
        "toolCall": {"toolCallId": call_id},
        "options": _OPTIONS,
    }
    return call_id, params


def _elicitation(turn: TurnContext) -> Message:
    return {
        "sessionId": turn.session.session_id,
        "mode": "form",
        "message": "The scripted agent will withdraw this question",
        "requestedSchema": {
            "type": "object",
            "properties": {"name": {"type": "string", "title": "Name"}},
        },
    }


async def withdraw(turn: TurnContext, command: Command) -> Flow:
    """``withdraw KIND SECONDS`` (see the module docstring)."""
    kind = command.get_str("KIND")
    call_id: str | None = None
    if kind == "permission":
        call_id, params = _permission(turn)
        method = "session/request_permission"
    else:
        params, method = _elicitation(turn), "elicitation/create"
    request_id, future = turn.send_request(method, params)
    done, _ = await asyncio.wait((future,), timeout=command.get_float("SECONDS"))
    if not done:
        turn.out.send(notification("$/cancel_request", {"requestId": request_id}))
        done, _ = await asyncio.wait((future,), timeout=REPLY_AFTER_CANCEL_SECONDS)
    reply: ClientReply | None = None
    if done:
        with contextlib.suppress(Exception):
            reply = future.result()
    answer = None if reply is None else (reply.result if reply.ok else {"error": reply.error})
    report = orjson.dumps(answer).decode()[:MAX_WITHDRAW_REPORT_CHARS]
    if call_id is not None:
        turn.emit(frames.tool_call_update(call_id, "failed", {"outcome": "withdrawn"}))
    turn.emit(
        {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": f"withdrawn {kind} answer: {report}\n"},
        }
    )
    return Flow.NEXT


HANDLERS: Final[dict[str, Handler]] = {"withdraw": withdraw}
