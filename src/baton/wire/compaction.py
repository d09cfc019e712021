"""Context compaction (stable ACP, SDK 2.4.0): ``compaction_update`` and
``compaction_summary_chunk``.

An agent sends these only to a client that advertised ``session.compaction``. A compaction is an
agent-owned entity addressed by ``compactionId``:

- ``compaction_update`` upserts it. The first sight fixes its position; later updates patch it:
  ``status`` is required and replaces; ``summary`` and ``error`` have patch semantics (omitted
  keeps, ``null`` clears, a value replaces; ``summary: []`` clears too);
- ``compaction_summary_chunk`` appends one content block to its summary; a first-seen id creates
  an ``in_progress`` compaction.

:class:`CompactionTracker` holds the compactions of one run in first-seen order. Only text
blocks become summary text (other block types are counted, not kept). Everything is bounded:
the number of compactions, the summary text of each, the error text.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

#: The two ``sessionUpdate`` discriminators.
COMPACTION_UPDATE: Final = "compaction_update"
COMPACTION_SUMMARY_CHUNK: Final = "compaction_summary_chunk"

#: The status a compaction first seen through a summary chunk has.
IN_PROGRESS: Final = "in_progress"

#: Statuses the schema names; any other string is kept verbatim (custom or future).
KNOWN_COMPACTION_STATUSES: Final = frozenset({IN_PROGRESS, "completed", "failed", "cancelled"})

#: Compactions tracked per run. Real agents compact a handful of times in a long session; a
#: stream of fresh ids must not grow the run's memory: later ids are counted, not kept.
MAX_COMPACTIONS: Final = 64

#: Characters kept of a compaction id (agent-chosen, stored and shown).
MAX_COMPACTION_ID_CHARS: Final = 256

#: Characters kept of one compaction's summary text: a summary is shown and stored whole, and
#: chunks arrive without limit.
MAX_SUMMARY_CHARS: Final = 64 * 1024

#: Characters kept of a compaction's error text.
MAX_COMPACTION_ERROR_CHARS: Final = 4096

#: Characters kept of a status (the known ones are at most 11).
MAX_STATUS_CHARS: Final = 32


@dataclass(slots=True)
class Compaction:
    """One compaction's current state. ``summary`` is the concatenated text of its text blocks
    (cut at :data:`MAX_SUMMARY_CHARS`, ``truncated`` then True); ``other_blocks`` counts the
    summary blocks that were not text."""

    compaction_id: str
    status: str
    summary: str = ""
    error: str | None = None
    truncated: bool = False
    other_blocks: int = 0

    def to_json(self) -> dict[str, Any]:
        """The view events and records carry."""
        return {
            "compactionId": self.compaction_id,
            "status": self.status,
            "summary": self.summary,
            "error": self.error,
            "truncated": self.truncated,
            "otherBlocks": self.other_blocks,
        }

    def _set_summary(self, blocks: object) -> None:
        self.summary, self.truncated, self.other_blocks = "", False, 0
        if isinstance(blocks, list):
            for block in blocks:
                self._append(block)

    def _append(self, block: object) -> None:
        text = block.get("text") if isinstance(block, Mapping) else None
        if (
            not isinstance(block, Mapping)
            or block.get("type") != "text"
            or not isinstance(text, str)
        ):
            self.other_blocks += 1
            return
        room = MAX_SUMMARY_CHARS - len(self.summary)
        if len(text) > room:
            self.truncated = True
            text = text[: max(room, 0)]
        self.summary += text


@dataclass(slots=True)
class CompactionTracker:
    """The compactions of one run, upserted by id in first-seen order."""

    compactions: dict[str, Compaction] = field(default_factory=dict)
    #: Updates for compactions beyond :data:`MAX_COMPACTIONS` (counted, not kept).
    dropped: int = 0

    def apply(self, update: Mapping[str, Any]) -> Compaction | None:
        """Apply a ``compaction_update`` or ``compaction_summary_chunk``; return the
        compaction's new state, or None when the update is unreadable (no string id, no status
        on an update) or its compaction is beyond the bound."""
        kind = update.get("sessionUpdate")
        raw_id = update.get("compactionId")
        if not isinstance(raw_id, str) or not raw_id:
            return None
        compaction_id = raw_id[:MAX_COMPACTION_ID_CHARS]
        if kind == COMPACTION_UPDATE:
            status = update.get("status")
            if not isinstance(status, str) or not status:
                return None
            current = self._get(compaction_id, status[:MAX_STATUS_CHARS])
            if current is None:
                return None
            current.status = status[:MAX_STATUS_CHARS]
            if "summary" in update:
                current._set_summary(update["summary"])
            if "error" in update:
                error = update["error"]
                current.error = (
                    error[:MAX_COMPACTION_ERROR_CHARS] if isinstance(error, str) else None
                )
            return current
        if kind == COMPACTION_SUMMARY_CHUNK:
            current = self._get(compaction_id, IN_PROGRESS)
            if current is None:
                return None
            current._append(update.get("content"))
            return current
        return None

    def _get(self, compaction_id: str, status: str) -> Compaction | None:
        current = self.compactions.get(compaction_id)
        if current is not None:
            return current
        if len(self.compactions) >= MAX_COMPACTIONS:
            self.dropped += 1
            return None
        current = self.compactions[compaction_id] = Compaction(compaction_id, status)
        return current
