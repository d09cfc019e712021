"""Tool commands: write, shell, and the permission variants.

Every tool asks ``session/request_permission`` and reports the answer in a ``tool_call_update``
whose ``rawOutput.outcome`` is ``allowed``, ``rejected``, ``cancelled``, ``error`` (the client
answered with a JSON-RPC error), ``invalid`` (an optionId that was not offered) or ``refused``
(the agent's own safety rule). Only ``write`` with an allow answer touches the disk, inside the
session cwd; ``shell`` never executes anything.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from baton.agents.scripted import frames
from baton.agents.scripted.context import ClientReply, Flow, Handler, TurnContext
from baton.agents.scripted.options import PermissionChoice
from baton.agents.scripted.paths import PathRefused, confine, read_text, write_text
from baton.agents.scripted.script import Command
from baton.wire.jsonrpc import REQUEST_CANCELLED, Message

#: Namespace of the deterministic option ids of ``permission uuid_ids``.
UUID_NAMESPACE: Final = uuid.UUID("6f1c2a52-8d1e-4c3e-9a59-0b7a4f4e2d10")

_ALLOW_KINDS: Final = frozenset({"allow_once", "allow_always"})


@dataclass(frozen=True, slots=True)
class Answer:
    """How the client answered one permission request."""

    outcome: str
    option_id: str | None = None
    kind: str | None = None

    @property
    def allowed(self) -> bool:
        """True when the client selected an allow option."""
        return self.outcome == "allowed"

    def raw_output(self, **extra: Any) -> Message:
        """The rawOutput reported in the tool_call_update."""
        output: Message = {"outcome": self.outcome}
        if self.option_id is not None:
            output["optionId"] = self.option_id
        if self.kind is not None:
            output["kind"] = self.kind
        output.update(extra)
        return output


def interpret(reply: ClientReply, options: list[Message]) -> Answer:
    """Read a request_permission answer against the options that were offered."""
    if not reply.ok:
        # -32800: the client cancelled the request ($/cancel_request), or stdin closed.
        return Answer("cancelled" if reply.error_code == REQUEST_CANCELLED else "error")
    result = reply.result
    outcome = result.get("outcome") if isinstance(result, dict) else None
    if not isinstance(outcome, dict):
        return Answer("invalid")
    if outcome.get("outcome") == "cancelled":
        return Answer("cancelled")
    option_id = outcome.get("optionId")
    if outcome.get("outcome") != "selected" or not isinstance(option_id, str):
        return Answer("invalid")
    kinds = {str(option["optionId"]): str(option["kind"]) for option in options}
    kind = kinds.get(option_id)
    if kind is None:
        return Answer("invalid", option_id)
    return Answer("allowed" if kind in _ALLOW_KINDS else "rejected", option_id, kind)


def _options(choices: tuple[PermissionChoice, ...]) -> list[Message]:
    return [choice.to_json() for choice in choices]


def _permission_params(
    turn: TurnContext, tool_call: Message, options: list[Message], *, full: bool = False
) -> Message:
    if full or turn.options.permission_tool_call == "full":
        shown = {key: value for key, value in tool_call.items() if key != "sessionUpdate"}
    else:
        shown = {"toolCallId": tool_call["toolCallId"]}
    return {"sessionId": turn.session.session_id, "toolCall": shown, "options": options}


async def _ask(
    turn: TurnContext, tool_call: Message, options: list[Message], *, full: bool = False
) -> Answer:
    params = _permission_params(turn, tool_call, options, full=full)
    reply = await turn.request("session/request_permission", params)
    return interpret(reply, options)


def _after_refusal(turn: TurnContext, answer: Answer) -> Flow:
    """A rejected or cancelled tool ends the turn when the options say so."""
    if not answer.allowed and turn.options.reject_ends_turn:
        turn.stop_reason = "cancelled"
        return Flow.END
    return Flow.NEXT


def _text_content(text: str) -> list[Message]:
    return [{"type": "content", "content": {"type": "text", "text": text}}]


async def write(turn: TurnContext, command: Command) -> Flow:
    """``write PATH [TEXT]``: tool_call (edit, diff, locations), permission, then the write."""
    path = command.get_str("PATH")
    text = command.get_str("TEXT")
    cwd = turn.session.cwd
    call_id = turn.session.next_tool_call_id()
    try:
        target = confine(cwd, path)
        old_text = read_text(target)
    except PathRefused as exc:
        turn.emit(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": call_id,
                "title": f"Write {path}",
                "kind": "edit",
                "status": "pending",
                "rawInput": {"path": path, "content": text},
            }
        )
        turn.emit(
            frames.tool_call_update(call_id, "failed", {"outcome": "refused", "reason": str(exc)})
        )
        return Flow.NEXT
    tool_call: Message = {
        "sessionUpdate": "tool_call",
        "toolCallId": call_id,
        "title": f"Write {path}",
        "name": "Write",
        "kind": "edit",
        "status": "pending",
        "content": [{"type": "diff", "path": target.shown, "oldText": old_text, "newText": text}],
        "locations": [{"path": target.shown}],
        "rawInput": {"path": target.shown, "content": text},
    }
    turn.emit(tool_call)
    options = _options(turn.options.permission_options)
    answer = await _ask(turn, tool_call, options)
    if answer.allowed:
        try:
            written = write_text(cwd, path, text)
        except PathRefused as exc:
            turn.emit(frames.tool_call_update(call_id, "failed", answer.raw_output(error=str(exc))))
            return Flow.NEXT
        turn.emit(frames.tool_call_update(call_id, "completed", answer.raw_output(bytes=written)))
        return Flow.NEXT
    turn.emit(frames.tool_call_update(call_id, "failed", answer.raw_output()))
    return _after_refusal(turn, answer)


async def _file_tool(
    turn: TurnContext, kind: str, title: str, shown: list[str], act: Callable[[], None]
) -> Flow:
    """A reported file tool call (``delete``, ``move``): tool_call with ``locations``, the
    permission, then ``act`` when allowed."""
    call_id = turn.session.next_tool_call_id()
    tool_call: Message = {
        "sessionUpdate": "tool_call",
        "toolCallId": call_id,
        "title": title,
        "kind": kind,
        "status": "pending",
        "locations": [{"path": path} for path in shown],
        "rawInput": {"paths": shown},
    }
    turn.emit(tool_call)
    answer = await _ask(turn, tool_call, _options(turn.options.permission_options))
    if not answer.allowed:
        turn.emit(frames.tool_call_update(call_id, "failed", answer.raw_output()))
        return _after_refusal(turn, answer)
    try:
        act()
    except (OSError, PathRefused) as exc:
        turn.emit(frames.tool_call_update(call_id, "failed", answer.raw_output(error=str(exc))))
        return Flow.NEXT
    turn.emit(frames.tool_call_update(call_id, "completed", answer.raw_output()))
    return Flow.NEXT


def _refused_call(turn: TurnContext, kind: str, title: str, exc: PathRefused) -> Flow:
    call_id = turn.session.next_tool_call_id()
    turn.emit(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": call_id,
            "title": title,
            "kind": kind,
            "status": "pending",
        }
    )
    turn.emit(
        frames.tool_call_update(call_id, "failed", {"outcome": "refused", "reason": str(exc)})
    )
    return Flow.NEXT


async def delete(turn: TurnContext, command: Command) -> Flow:
    """``delete PATH``: tool_call (delete, locations), permission, then the unlink."""
    path = command.get_str("PATH")
    try:
        target = confine(turn.session.cwd, path)
    except PathRefused as exc:
        return _refused_call(turn, "delete", f"Delete {path}", exc)
    return await _file_tool(
        turn, "delete", f"Delete {path}", [target.shown], lambda: os.unlink(target.real)
    )


async def move(turn: TurnContext, command: Command) -> Flow:
    """``move OLD NEW``: tool_call (move, both locations), permission, then the rename."""
    old, new = command.get_str("OLD"), command.get_str("NEW")
    cwd = turn.session.cwd
    try:
        source, target = confine(cwd, old), confine(cwd, new)
    except PathRefused as exc:
        return _refused_call(turn, "move", f"Move {old} to {new}", exc)
    return await _file_tool(
        turn,
        "move",
        f"Move {old} to {new}",
        [source.shown, target.shown],
        lambda: os.rename(source.real, target.real),
    )


async def silent_write(turn: TurnContext, command: Command) -> Flow:
    """``silent_write PATH [TEXT]``: writes TEXT to PATH with no tool call and no permission
    request (what an agent in its own auto mode may do): only an independent comparison of
    the workspace sees it."""
    try:
        write_text(turn.session.cwd, command.get_str("PATH"), command.get_str("TEXT"))
    except PathRefused as exc:
        turn.emit(frames.message_chunk(f"silent_write refused: {exc}\n"))
    return Flow.NEXT


async def shell(turn: TurnContext, command: Command) -> Flow:
    """``shell CMD``: tool_call (execute), permission; never runs CMD, reports it instead."""
    cmd = command.get_str("CMD")
    call_id = turn.session.next_tool_call_id()
    tool_call: Message = {
        "sessionUpdate": "tool_call",
        "toolCallId": call_id,
        "title": cmd,
        "name": "Bash",
        "kind": "execute",
        "status": "pending",
        "content": _text_content(f"Run: {cmd}"),
        "rawInput": {"command": cmd},
    }
    turn.emit(tool_call)
    answer = await _ask(turn, tool_call, _options(turn.options.permission_options))
    if answer.allowed:
        output = answer.raw_output(executed=False, wouldRun=cmd)
        turn.emit(frames.tool_call_update(call_id, "completed", output))
        return Flow.NEXT
    turn.emit(frames.tool_call_update(call_id, "failed", answer.raw_output()))
    return _after_refusal(turn, answer)


def _variant_options(variant: str, call_id: str) -> list[Message]:
    if variant == "cancel_id":
        return [
            {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
            {"optionId": "cancel", "name": "Cancel", "kind": "reject_once"},
        ]
    if variant == "uuid_ids":
        kinds = ("allow_once", "allow_always", "reject_once", "reject_always")
        return [
            {
                "optionId": str(uuid.uuid5(UUID_NAMESPACE, f"{call_id}:{kind}")),
                "name": kind.replace("_", " ").capitalize(),
                "kind": kind,
            }
            for kind in kinds
        ]
    if variant == "always_only":
        return [
            {"optionId": "allow-always", "name": "Always allow", "kind": "allow_always"},
            {"optionId": "reject-always", "name": "Always reject", "kind": "reject_always"},
        ]
    return []


def _check_call(call_id: str, variant: str) -> Message:
    return {
        "sessionUpdate": "tool_call",
        "toolCallId": call_id,
        "title": f"Permission check ({variant})",
        "kind": "other",
        "status": "pending",
        "rawInput": {"variant": variant},
    }


async def permission(turn: TurnContext, command: Command) -> Flow:
    """``permission VARIANT [COUNT]``: a permission request in an unusual shape.

    - ``no_tool_call``: the request (carrying the full tool call) is the first time its
      toolCallId appears; an allow answer then sends ``tool_call`` in_progress and the update.
    - ``cancel_id``: a reject_once option whose optionId is ``cancel``.
    - ``uuid_ids``: all four kinds, with UUID optionIds.
    - ``always_only``: only allow_always and reject_always.
    - ``many``: COUNT tool calls and COUNT requests, all pending before any answer is read.
    """
    variant = command.get_str("VARIANT")
    if variant == "many":
        return await _many(turn, command.get_int("COUNT"))
    call_id = turn.session.next_tool_call_id()
    tool_call = _check_call(call_id, variant)
    if variant == "no_tool_call":
        options = _options(turn.options.permission_options)
        answer = await _ask(turn, tool_call, options, full=True)
        if answer.allowed:
            turn.emit({**tool_call, "status": "in_progress"})
            turn.emit(frames.tool_call_update(call_id, "completed", answer.raw_output()))
            return Flow.NEXT
        turn.emit(frames.tool_call_update(call_id, "failed", answer.raw_output()))
        return _after_refusal(turn, answer)
    options = _variant_options(variant, call_id)
    turn.emit(tool_call)
    answer = await _ask(turn, tool_call, options)
    status = "completed" if answer.allowed else "failed"
    turn.emit(frames.tool_call_update(call_id, status, answer.raw_output()))
    return _after_refusal(turn, answer)


async def _many(turn: TurnContext, count: int) -> Flow:
    options = _options(turn.options.permission_options)
    calls = []
    for _ in range(count):
        tool_call = _check_call(turn.session.next_tool_call_id(), "many")
        turn.emit(tool_call)
        calls.append(tool_call)
    waits = []
    for tool_call in calls:
        params = _permission_params(turn, tool_call, options)
        _request_id, future = turn.send_request("session/request_permission", params)
        waits.append(_labelled(str(tool_call["toolCallId"]), future))
    refused: Answer | None = None
    # Each answer is reported as it arrives, whatever order the client answers in.
    for next_answer in asyncio.as_completed(waits):
        call_id, reply = await next_answer
        answer = interpret(reply, options)
        status = "completed" if answer.allowed else "failed"
        turn.emit(frames.tool_call_update(call_id, status, answer.raw_output()))
        if not answer.allowed:
            refused = answer
    return _after_refusal(turn, refused) if refused is not None else Flow.NEXT


async def _labelled(call_id: str, future: asyncio.Future[ClientReply]) -> tuple[str, ClientReply]:
    return call_id, await future


HANDLERS: Final[dict[str, Handler]] = {
    "write": write,
    "delete": delete,
    "move": move,
    "silent_write": silent_write,
    "shell": shell,
    "permission": permission,
}
