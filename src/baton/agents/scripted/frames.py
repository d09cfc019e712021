"""The session/update payloads the scripted agent sends, and pre-serialized stream blobs.

:class:`StreamBlob` renders ``stream`` chunks straight to bytes from one template, so a
200,000-update flood costs one bytes-format per line and a few hundred writes, never a JSON
encode per update. Its bytes are identical to ``orjson.dumps`` of :func:`session_update` with
:func:`message_chunk` (tests hold it to that).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Final

import orjson

from baton.agents.scripted.script import COMMAND_SPECS, CommandSpec
from baton.wire.jsonrpc import Message, notification

#: Target size of one pre-serialized batch of stream lines: large writes, few syscalls, and
#: still a cancel check every half MiB.
STREAM_BATCH_BYTES: Final = 512 * 1024

#: Plan entries sent by ``plan`` with no TEXT.
DEFAULT_PLAN: Final = ("Read the prompt", "Run the script", "Report back")

_PLACEHOLDER: Final = "\x00scripted-placeholder\x00"


def session_update(session_id: str, update: Message) -> Message:
    """A ``session/update`` notification."""
    return notification("session/update", {"sessionId": session_id, "update": update})


def _chunk(kind: str, text: str) -> Message:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}}


def message_chunk(text: str) -> Message:
    """An ``agent_message_chunk`` update."""
    return _chunk("agent_message_chunk", text)


def thought_chunk(text: str) -> Message:
    """An ``agent_thought_chunk`` update."""
    return _chunk("agent_thought_chunk", text)


def user_chunk(text: str) -> Message:
    """A ``user_message_chunk`` update (session/load replays prompts as these)."""
    return _chunk("user_message_chunk", text)


def plan(entries: Sequence[str]) -> Message:
    """A ``plan`` update: the first entry completed, the second in progress, the rest pending."""
    statuses = ("completed", "in_progress")
    return {
        "sessionUpdate": "plan",
        "entries": [
            {
                "content": entry,
                "priority": "high" if index == 0 else "medium",
                "status": statuses[index] if index < len(statuses) else "pending",
            }
            for index, entry in enumerate(entries)
        ],
    }


def plan_entries(text: str) -> tuple[str, ...]:
    """Plan entries from ``plan`` TEXT (``|``-separated), or the default plan."""
    entries = tuple(part.strip() for part in text.split("|") if part.strip())
    return entries or DEFAULT_PLAN


def usage(used: int, size: int) -> Message:
    """A ``usage_update``."""
    return {"sessionUpdate": "usage_update", "used": used, "size": size}


def session_info(title: str) -> Message:
    """A ``session_info_update`` carrying a title."""
    return {"sessionUpdate": "session_info_update", "title": title}


def available_commands(specs: Sequence[CommandSpec] = COMMAND_SPECS) -> Message:
    """An ``available_commands_update`` listing the command language itself."""
    commands: list[Message] = []
    for spec in specs:
        command: Message = {"name": spec.name, "description": spec.summary}
        if spec.params:
            command["input"] = {"hint": " ".join(param.hint() for param in spec.params)}
        commands.append(command)
    return {"sessionUpdate": "available_commands_update", "availableCommands": commands}


def tool_call_update(tool_call_id: str, status: str, raw_output: Message) -> Message:
    """A sparse ``tool_call_update``: status and rawOutput only."""
    return {
        "sessionUpdate": "tool_call_update",
        "toolCallId": tool_call_id,
        "status": status,
        "rawOutput": raw_output,
    }


def stream_text(index: int) -> str:
    """The text of stream chunk ``index`` (1-based)."""
    return f"chunk {index}\n"


def encode(message: Message) -> bytes:
    """One frame with its newline."""
    return orjson.dumps(message, option=orjson.OPT_APPEND_NEWLINE)


def split_chunk_frame(session_id: str, message_id: str | None = None) -> tuple[bytes, bytes]:
    """Serialize an agent_message_chunk session/update around its text; return the bytes
    before the text and after it (the newline included in the second). ``message_id`` (the v2
    dialect's) is added to the update when given."""
    update = message_chunk(_PLACEHOLDER)
    if message_id is not None:
        update["messageId"] = message_id
    frame = encode(session_update(session_id, update))
    marker = orjson.dumps(_PLACEHOLDER)[1:-1]
    before, _sep, after = frame.partition(marker)
    return before, after


class StreamBlob:
    """Pre-serialized ``stream`` chunk lines for one session."""

    __slots__ = ("_template", "line_bytes")

    def __init__(self, session_id: str, message_id: str | None = None) -> None:
        before, after = split_chunk_frame(session_id, message_id)
        # Bytes %-formatting: escape every % of the fixed parts, leave one %d for the index.
        self._template = before.replace(b"%", b"%%") + b"chunk %d\\n" + after.replace(b"%", b"%%")
        #: Approximate size of one line (with a 6-digit index), for batch sizing.
        self.line_bytes = len(self._template) + 4

    def lines(self, start: int, stop: int) -> bytes:
        """Lines for chunk indexes ``start`` to ``stop - 1``, concatenated."""
        template = self._template
        return b"".join([template % index for index in range(start, stop)])

    def batches(self, start: int, stop: int) -> Iterator[tuple[int, bytes]]:
        """``(lines in batch, bytes)`` pairs of about :data:`STREAM_BATCH_BYTES` each."""
        per_batch = max(1, STREAM_BATCH_BYTES // self.line_bytes)
        index = start
        while index < stop:
            end = min(stop, index + per_batch)
            yield end - index, self.lines(index, end)
            index = end
