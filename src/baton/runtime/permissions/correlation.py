"""Correlating a permission request with the tool-call state streamed before it.

ACP lets a permission request carry little more than a ``toolCallId``; the paths, command and
diff may have arrived earlier in ``tool_call`` and ``tool_call_update`` session updates (Claude
sends a bare ``tool_call`` and fills it in with an update). Other adapters ask first: Codex's
escalated shell command is a request whose ``toolCallId`` was never seen, and then the request's
own ``toolCall`` is the whole state. One :class:`ToolCallTracker` per session keeps that state.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, Final

from baton.errors import InternalError
from baton.wire.permission import PermissionRequest
from baton.wire.toolcalls import merge_tool_call

#: Tool calls remembered per session. Past it the least recently updated is forgotten: an agent
#: that opens tool calls without end cannot grow Baton's memory. A request for a forgotten tool
#: call correlates with its own toolCall only, so the local policy sees less and fails closed.
MAX_TRACKED_TOOL_CALLS: Final = 4096

#: The session updates that carry tool-call state.
TOOL_CALL_UPDATES: Final = frozenset({"tool_call", "tool_call_update"})


class ToolCallTracker:
    """The tool-call state of one session, fed in arrival order.

    Not thread-safe; one event loop feeds it. ``max_tracked`` bounds memory (see
    :data:`MAX_TRACKED_TOOL_CALLS`).
    """

    def __init__(self, session_id: str, *, max_tracked: int = MAX_TRACKED_TOOL_CALLS) -> None:
        if max_tracked < 1:
            raise InternalError("a tool-call tracker must keep at least one tool call")
        self.session_id = session_id
        self.max_tracked = max_tracked
        self._states: OrderedDict[str, dict[str, Any]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._states)

    def observe(self, update: Mapping[str, Any]) -> bool:
        """Apply one ``session/update`` ``update`` object. Returns True when it was tool-call
        state (``tool_call`` or ``tool_call_update`` with a string ``toolCallId``); any other
        update is ignored and returns False."""
        if update.get("sessionUpdate") not in TOOL_CALL_UPDATES:
            return False
        if not isinstance(update.get("toolCallId"), str):
            return False
        self._upsert(update)
        return True

    def observe_notification(self, params: Mapping[str, Any]) -> bool:
        """Apply the params of a ``session/update`` notification for this session. Updates for
        another session are ignored (and return False)."""
        update = params.get("update")
        if params.get("sessionId") != self.session_id or not isinstance(update, Mapping):
            return False
        return self.observe(update)

    def get(self, tool_call_id: str) -> dict[str, Any] | None:
        """The state of ``tool_call_id``, or None when it was never seen (or was forgotten)."""
        return self._states.get(tool_call_id)

    def forget(self, tool_call_id: str) -> None:
        """Drop the state of ``tool_call_id`` (a no-op when unknown)."""
        self._states.pop(tool_call_id, None)

    def correlate(self, request: PermissionRequest) -> dict[str, Any]:
        """The effective tool-call state of ``request``: the state seen before it with the
        request's own ``toolCall`` merged on top, or that ``toolCall`` alone when its id is new.
        The result is also kept, so a later request for the same tool call sees it.

        Raises :class:`InternalError` when the request belongs to another session: routing
        requests to their session's tracker is the caller's job.
        """
        if request.session_id != self.session_id:
            raise InternalError(
                f"permission request for session {request.session_id!r} routed to the tracker "
                f"of {self.session_id!r}"
            )
        return self._upsert(request.tool_call)

    def _upsert(self, update: Mapping[str, Any]) -> dict[str, Any]:
        tool_call_id: str = update["toolCallId"]
        state = merge_tool_call(self._states.get(tool_call_id), update)
        self._states[tool_call_id] = state
        self._states.move_to_end(tool_call_id)
        while len(self._states) > self.max_tracked:
            self._states.popitem(last=False)
        return state
