"""Commands for the updates and requests of current stable ACP (SDK 2.4.0): ``notice``,
``compact``, ``cost``, ``subagent``, ``elicit`` and ``offered``.

They send what they are told, whether or not the client advertised the matching capability
(``session.notices``, ``session.compaction``, ``elicitation``): a test can then check a client's
refusal as well as its handling. ``elicit`` reports the client's answer as an agent message.
"""

from __future__ import annotations

from typing import Final

import orjson

from baton.agents.scripted.context import Flow, Handler, TurnContext
from baton.agents.scripted.script import Command
from baton.wire.jsonrpc import Message

#: The form ``elicit form`` asks for: one field of each kind Baton checks.
ELICIT_FORM_SCHEMA: Final[Message] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Project name", "minLength": 1, "maxLength": 40},
        "replicas": {"type": "integer", "title": "Replicas", "minimum": 1, "maximum": 5},
        "region": {
            "type": "string",
            "title": "Region",
            "oneOf": [{"const": "eu", "title": "Europe"}, {"const": "us", "title": "Americas"}],
        },
        "confirm": {"type": "boolean", "title": "Deploy now"},
    },
    "required": ["name", "replicas"],
}

#: The URL ``elicit url`` shows (never opened by a client; nothing listens there).
ELICIT_URL: Final = "https://127.0.0.1:9/scripted-sign-in"

#: Characters of the client's answer quoted in ``elicit``'s report.
MAX_ELICIT_REPORT_CHARS: Final = 500


async def notice(turn: TurnContext, command: Command) -> Flow:
    """``notice SEVERITY [TEXT]``: a ``notice`` update; TEXT is ``title|description``."""
    title, _, description = command.get_str("TEXT").partition("|")
    update: Message = {
        "sessionUpdate": "notice",
        "severity": command.get_str("SEVERITY"),
        "title": title.strip() or "Scripted notice",
    }
    if description.strip():
        update["description"] = description.strip()
    turn.emit(update, record=False)  # a live event, never session history
    return Flow.NEXT


async def compact(turn: TurnContext, command: Command) -> Flow:
    """``compact STATUS [TEXT]``: one compaction: ``compaction_update`` in_progress, TEXT as
    ``compaction_summary_chunk`` words, then ``compaction_update`` with STATUS."""
    compaction_id = f"compaction-{turn.session.next_tool_call_id()}"
    turn.emit(
        {
            "sessionUpdate": "compaction_update",
            "compactionId": compaction_id,
            "status": "in_progress",
        }
    )
    for word in command.get_str("TEXT").split(" "):
        if word:
            turn.emit(
                {
                    "sessionUpdate": "compaction_summary_chunk",
                    "compactionId": compaction_id,
                    "content": {"type": "text", "text": word + " "},
                }
            )
    final: Message = {
        "sessionUpdate": "compaction_update",
        "compactionId": compaction_id,
        "status": command.get_str("STATUS"),
    }
    if command.get_str("STATUS") == "failed":
        final["error"] = "scripted compaction failure"
    turn.emit(final)
    return Flow.NEXT


async def cost(turn: TurnContext, command: Command) -> Flow:
    """``cost CENTS [CURRENCY]``: a ``usage_update`` (42 of 200000 tokens) with a cumulative
    cost of CENTS/100 in CURRENCY."""
    turn.emit(
        {
            "sessionUpdate": "usage_update",
            "used": 42,
            "size": 200_000,
            "cost": {
                "amount": command.get_int("CENTS") / 100,
                "currency": command.get_str("CURRENCY"),
            },
        }
    )
    return Flow.NEXT


async def subagent(turn: TurnContext, command: Command) -> Flow:
    """``subagent [TEXT]``: Claude's subagent shape: a ``Task`` tool call, then a nested read
    carrying ``_meta.claudeCode.parentToolUseId``, both completed (no permission asked)."""
    parent = turn.session.next_tool_call_id()
    child = turn.session.next_tool_call_id()
    task = command.get_str("TEXT") or "Explore the repository"
    turn.emit(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": parent,
            "title": task,
            "name": "Task",
            "kind": "think",
            "status": "in_progress",
        }
    )
    turn.emit(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": child,
            "title": "Read README.md",
            "name": "Read",
            "kind": "read",
            "status": "completed",
            "locations": [{"path": "README.md"}],
            "_meta": {"claudeCode": {"parentToolUseId": parent, "toolName": "Read"}},
        }
    )
    turn.emit({"sessionUpdate": "tool_call_update", "toolCallId": parent, "status": "completed"})
    return Flow.NEXT


async def elicit(turn: TurnContext, command: Command) -> Flow:
    """``elicit MODE``: send ``elicitation/create`` (form: :data:`ELICIT_FORM_SCHEMA`; url:
    :data:`ELICIT_URL`) and report the client's answer as an agent message."""
    mode = command.get_str("MODE")
    params: Message = {
        "sessionId": turn.session.session_id,
        "mode": mode,
        "message": "The scripted agent needs a few details",
    }
    if mode == "form":
        params["requestedSchema"] = ELICIT_FORM_SCHEMA
    else:
        params["url"] = ELICIT_URL
        params["elicitationId"] = f"elicitation-{turn.session.next_tool_call_id()}"
    reply = await turn.request("elicitation/create", params)
    answer = reply.result if reply.ok else {"error": reply.error}
    report = orjson.dumps(answer).decode()[:MAX_ELICIT_REPORT_CHARS]
    turn.emit(
        {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": f"elicitation answer: {report}\n"},
        }
    )
    if mode == "url" and reply.ok:
        turn.out.send(
            {
                "jsonrpc": "2.0",
                "method": "elicitation/complete",
                "params": {"elicitationId": params["elicitationId"]},
            }
        )
    return Flow.NEXT


async def offered(turn: TurnContext, command: Command) -> Flow:
    """``offered``: report the client's initialize ``clientCapabilities`` (what it offered:
    elicitation modes among them) as ``client capabilities: JSON``."""
    report = orjson.dumps(turn.client_capabilities, option=orjson.OPT_SORT_KEYS).decode()
    turn.emit(
        {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": f"client capabilities: {report}\n"},
        }
    )
    return Flow.NEXT


async def setup(turn: TurnContext, command: Command) -> Flow:
    """``setup``: report what session/new, load or resume set up beyond cwd and MCP servers
    (additional directories, the system prompt's mode and size) as an agent message."""
    report = orjson.dumps(turn.session.setup, option=orjson.OPT_SORT_KEYS).decode()
    turn.emit({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": report}})
    return Flow.NEXT


HANDLERS: Final[dict[str, Handler]] = {
    "setup": setup,
    "notice": notice,
    "compact": compact,
    "cost": cost,
    "subagent": subagent,
    "elicit": elicit,
    "offered": offered,
}
