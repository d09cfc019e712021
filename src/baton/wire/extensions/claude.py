"""``claude-agent-acp/subagent-parent@v1``: Claude's nested (subagent) tool calls.

Claude Agent marks a tool call a subagent made with the id of the tool call that started the
subagent (its ``Task`` call): ``_meta.claudeCode.parentToolUseId`` on the ``tool_call`` (and
sometimes on its updates). Claude's tool call ids are its tool-use ids, so the value names the
parent tool call of the same session. ``_meta`` is opaque by the protocol's rule: only the
claude profile, whose flag enables this contract, reads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

#: The contract's name (a profile's ``extensions`` entry).
EXTENSION: Final = "claude-agent-acp/subagent-parent@v1"

#: Characters of a parent id kept (Claude's ids are ``toolu_`` plus about 24 characters).
MAX_PARENT_ID_CHARS: Final = 256


def parent_tool_use_id(update: Mapping[str, Any]) -> str | None:
    """The parent tool call id a Claude tool call or update carries, or None."""
    meta = update.get("_meta")
    claude = meta.get("claudeCode") if isinstance(meta, Mapping) else None
    parent = claude.get("parentToolUseId") if isinstance(claude, Mapping) else None
    if not isinstance(parent, str) or not parent:
        return None
    return parent[:MAX_PARENT_ID_CHARS]
