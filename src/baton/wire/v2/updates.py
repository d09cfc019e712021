"""Decoding v2 session updates into the normalized updates the runtime reads.

The runtime reads one shape whatever the wire version: the v1 spelling of ``session/update``
(text chunks, ``tool_call`` / ``tool_call_update`` sparse merges, ``plan``), plus the v2
``state_update``. A :class:`SessionUpdateDecoder` per session turns v2's upserts into it:

- messages: ``*_chunk`` pass through (they carry ``messageId``). An upsert (``agent_message``,
  ``agent_thought``, ``user_message``) for a new id becomes chunks of its content; for a known id
  whose new text extends what was streamed, a chunk of the new suffix; any other replacement (a
  rewrite, a clear) cannot be appended to a stream and becomes a ``message_revised`` update
  (journal-only) that names the message.
- tool calls: the first ``tool_call_update`` of an id creates it (a ``tool_call``, omitted and
  ``null`` fields at their protocol defaults); later ones are sparse merges where ``null`` kind
  resets to ``other`` and ``null`` status to ``pending``; ``tool_call_content_chunk`` appends one
  content item (a ``tool_call_update`` carrying the whole new content).
- plans: ``plan_update`` of ``items`` becomes ``plan`` with its ``entries`` and ``planId``.
- everything else (``state_update``, usage, config, commands, session info, notices, unknown
  and ``_`` extension kinds) passes through unchanged.

The decoder is plain state fed in arrival order from one event loop; it keeps at most
:data:`MAX_TRACKED_MESSAGES` messages and :data:`MAX_TRACKED_TOOL_CALLS` tool calls.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, cast

from baton.wire.v2.enums import STATE_IDLE

if TYPE_CHECKING:
    from baton.wire.acp_types import (
        ContentBlock,
        SessionUpdateAgentMessageChunk,
        SessionUpdateToolCallUpdate,
        ToolCallContent,
    )

#: Messages whose streamed text a decoder remembers (as a running hash and a length) per
#: session. Past it the least recently updated is forgotten; a later upsert of it is then
#: treated as new, which can repeat text but never loses it.
MAX_TRACKED_MESSAGES: Final = 4096

#: Tool calls a decoder remembers per session (the same bound as the runtime's tracker).
MAX_TRACKED_TOOL_CALLS: Final = 4096

#: Content items kept per tool call from ``tool_call_content_chunk`` appends. Each append
#: copies the list, so the bound also caps the work of one chunk; items past it are counted in
#: :attr:`SessionUpdateDecoder.dropped_content_items` (the journal keeps every frame).
MAX_TOOL_CALL_CONTENT_ITEMS: Final = 1024

#: v2 upsert kinds and the chunk kind their content becomes.
MESSAGE_UPSERTS: Final[Mapping[str, str]] = {
    "agent_message": "agent_message_chunk",
    "agent_thought": "agent_thought_chunk",
    "user_message": "user_message_chunk",
}

#: Chunk kinds (they pass through, and feed the message table).
MESSAGE_CHUNKS: Final = frozenset(MESSAGE_UPSERTS.values())

#: The normalized kind for a replacement Baton cannot append to an output stream.
MESSAGE_REVISED: Final = "message_revised"

#: Tool-call fields whose ``null`` resets to a default instead of clearing (v2 draft).
_NULL_DEFAULTS: Final[Mapping[str, str]] = {"kind": "other", "status": "pending"}

#: A new tool call's status (the draft: "A new tool call starts as pending").
_NEW_STATUS: Final = "pending"


@dataclass(slots=True)
class _MessageText:
    """What was streamed of one message: its text's length and running hash."""

    length: int = 0
    digest: Any = field(default_factory=hashlib.sha256)

    def add(self, text: str) -> None:
        self.length += len(text)
        self.digest.update(text.encode("utf-8", "surrogatepass"))

    def extended_by(self, text: str) -> bool:
        if len(text) < self.length:
            return False
        head = hashlib.sha256(text[: self.length].encode("utf-8", "surrogatepass"))
        return bool(head.digest() == self.digest.digest())


def _text_of(blocks: list[Any]) -> str | None:
    """The concatenated text of ``blocks`` when every block is a text block, else None."""
    parts: list[str] = []
    for block in blocks:
        if not isinstance(block, Mapping) or block.get("type") != "text":
            return None
        text = block.get("text")
        if not isinstance(text, str):
            return None
        parts.append(text)
    return "".join(parts)


def _chunk_text(update: Mapping[str, Any]) -> str | None:
    content = update.get("content")
    if isinstance(content, Mapping) and content.get("type") == "text":
        text = content.get("text")
        if isinstance(text, str):
            return text
    return None


class SessionUpdateDecoder:
    """The v2 update state of one session (messages and tool calls), fed in arrival order."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self._messages: OrderedDict[tuple[str, str], _MessageText] = OrderedDict()
        self._tool_calls: OrderedDict[str, list[Any]] = OrderedDict()
        #: Content items past :data:`MAX_TOOL_CALL_CONTENT_ITEMS` that were not kept.
        self.dropped_content_items = 0

    # --- the entry point -------------------------------------------------------------------

    def decode(self, update: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The normalized updates for one v2 ``update`` object (zero, one or several)."""
        kind = update.get("sessionUpdate")
        if kind in MESSAGE_CHUNKS:
            return self._chunk(str(kind), update)
        if kind in MESSAGE_UPSERTS:
            return self._upsert_message(str(kind), update)
        if kind == "tool_call_update":
            return self._tool_call(update)
        if kind == "tool_call_content_chunk":
            return self._content_chunk(update)
        if kind == "plan_update":
            return self._plan(update)
        return [dict(update)]

    def tool_call(self, tool_call: Mapping[str, Any]) -> dict[str, Any] | None:
        """A permission request's ``toolCall`` (applied like a ``tool_call_update``, in order):
        the normalized update, or None without a string ``toolCallId``."""
        if not isinstance(tool_call.get("toolCallId"), str):
            return None
        return self._tool_call(tool_call)[0]

    # --- messages --------------------------------------------------------------------------

    def _message(self, role: str, message_id: str) -> _MessageText | None:
        key = (role, message_id)
        found = self._messages.get(key)
        if found is not None:
            self._messages.move_to_end(key)
        return found

    def _remember(self, role: str, message_id: str, text: _MessageText) -> None:
        self._messages[(role, message_id)] = text
        self._messages.move_to_end((role, message_id))
        while len(self._messages) > MAX_TRACKED_MESSAGES:
            self._messages.popitem(last=False)

    def _chunk(self, kind: str, update: Mapping[str, Any]) -> list[dict[str, Any]]:
        message_id = update.get("messageId")
        text = _chunk_text(update)
        if isinstance(message_id, str) and text is not None:
            known = self._message(kind, message_id)
            if known is None:
                known = _MessageText()
                self._remember(kind, message_id, known)
            known.add(text)
        return [dict(update)]

    def _upsert_message(self, kind: str, update: Mapping[str, Any]) -> list[dict[str, Any]]:
        chunk_kind = MESSAGE_UPSERTS[kind]
        message_id = update.get("messageId")
        if not isinstance(message_id, str) or "content" not in update:
            return []  # nothing to stream (metadata only, or no id: the journal keeps it)
        content = update.get("content")
        blocks = content if isinstance(content, list) else []
        known = self._message(chunk_kind, message_id)
        if known is None or known.length == 0:
            fresh = _MessageText()
            self._remember(chunk_kind, message_id, fresh)
            out = []
            for block in blocks:
                if isinstance(block, Mapping):
                    if block.get("type") == "text" and isinstance(block.get("text"), str):
                        fresh.add(block["text"])
                    out.append(_chunk_update(chunk_kind, message_id, block))
            return out
        text = _text_of(blocks)
        if text is not None and known.extended_by(text):
            suffix = text[known.length :]
            if not suffix:
                return []
            known.add(suffix)
            return [_chunk_update(chunk_kind, message_id, {"type": "text", "text": suffix})]
        replaced = _MessageText()
        if text is not None:
            replaced.add(text)
        self._remember(chunk_kind, message_id, replaced)
        return [{"sessionUpdate": MESSAGE_REVISED, "messageId": message_id, "kind": kind}]

    # --- tool calls ------------------------------------------------------------------------

    def _known_tool_call(self, tool_call_id: str) -> list[Any] | None:
        found = self._tool_calls.get(tool_call_id)
        if found is not None:
            self._tool_calls.move_to_end(tool_call_id)
        return found

    def _keep_content(self, tool_call_id: str, content: list[Any]) -> None:
        self._tool_calls[tool_call_id] = content
        self._tool_calls.move_to_end(tool_call_id)
        while len(self._tool_calls) > MAX_TRACKED_TOOL_CALLS:
            self._tool_calls.popitem(last=False)

    def _tool_call(self, update: Mapping[str, Any]) -> list[dict[str, Any]]:
        tool_call_id = update.get("toolCallId")
        if not isinstance(tool_call_id, str):
            return [dict(update)]  # kept for the journal; the tracker ignores it
        known = self._known_tool_call(tool_call_id)
        if known is None:
            # Not typed as v1's ToolCall: v2 need not send the ``title`` v1 requires, and the
            # runtime's tracker reads a tool call without one.
            created = {k: v for k, v in update.items() if v is not None}
            created["sessionUpdate"] = "tool_call"
            created.setdefault("status", _NEW_STATUS)
            content = created.get("content")
            self._keep_content(tool_call_id, list(content) if isinstance(content, list) else [])
            return [created]
        normalized = dict(update)
        normalized["sessionUpdate"] = "tool_call_update"
        for key, default in _NULL_DEFAULTS.items():
            if key in normalized and normalized[key] is None:
                normalized[key] = default
        if "content" in normalized:
            content = normalized["content"]
            self._keep_content(tool_call_id, list(content) if isinstance(content, list) else [])
        return [normalized]

    def _content_chunk(self, update: Mapping[str, Any]) -> list[dict[str, Any]]:
        tool_call_id = update.get("toolCallId")
        item = update.get("content")
        if not isinstance(tool_call_id, str) or not isinstance(item, Mapping):
            return [dict(update)]
        known = self._known_tool_call(tool_call_id)
        if known is None:
            self._keep_content(tool_call_id, [item])
            return [
                {
                    "sessionUpdate": "tool_call",
                    "toolCallId": tool_call_id,
                    "status": _NEW_STATUS,
                    "content": [item],
                }
            ]
        if len(known) >= MAX_TOOL_CALL_CONTENT_ITEMS:
            self.dropped_content_items += 1
            return []
        content = [*known, item]
        self._keep_content(tool_call_id, content)
        merged: SessionUpdateToolCallUpdate = {
            "sessionUpdate": "tool_call_update",
            "toolCallId": tool_call_id,
            "content": cast("list[ToolCallContent]", content),  # the agent's items, as sent
        }
        return [cast("dict[str, Any]", merged)]

    # --- plans -----------------------------------------------------------------------------

    def _plan(self, update: Mapping[str, Any]) -> list[dict[str, Any]]:
        plan = update.get("plan")
        if isinstance(plan, Mapping) and plan.get("type") == "items":
            # v1's ``plan`` plus v2's ``planId`` (not in v1's Plan type).
            entries = plan.get("entries")
            return [
                {
                    "sessionUpdate": "plan",
                    "planId": plan.get("planId"),
                    "entries": entries if isinstance(entries, list) else [],
                }
            ]
        return [dict(update)]


def _chunk_update(kind: str, message_id: str, block: Mapping[str, Any]) -> dict[str, Any]:
    """A v1 message chunk (``agent_message_chunk``, ``agent_thought_chunk`` or
    ``user_message_chunk``: one shape, checked as the agent's) of one content block."""
    chunk: SessionUpdateAgentMessageChunk = {
        "sessionUpdate": cast("Any", kind),  # one of MESSAGE_UPSERTS' values
        "messageId": message_id,
        "content": cast("ContentBlock", block),  # the agent's block, as sent
    }
    return cast("dict[str, Any]", chunk)


def is_idle(update: Mapping[str, Any]) -> bool:
    """True for a normalized ``state_update`` reporting ``idle``."""
    return update.get("sessionUpdate") == "state_update" and update.get("state") == STATE_IDLE
