"""The run-side projection of usage, session notices and context compaction.

One :class:`LiveUpdates` per run turns the wire parsers' values (:mod:`baton.wire.usage`,
:mod:`baton.wire.notices`, :mod:`baton.wire.compaction`) into events as they arrive and into
items when the turn ends:

- ``usage``: every readable ``usage_update`` (context ``used``/``size``, optional ``cost``), and
  the end-of-turn token counts under ``turn`` (v1: the ``session/prompt`` answer's ``usage``;
  v2: the ``usage`` of the ``idle`` state that ends the turn); one ``usage`` item at the end. Only what the agent sent: nothing is invented or zero-filled.
- ``notice``: a live event per notice (``severity``, ``title``, ``description``), recorded as a
  ``notice`` item. Notices are never session history: nothing here replays them.
- ``compaction``: an event per upsert or summary chunk with the compaction's current state; one
  ``compaction`` item per compaction at the end.

Agent text (titles, descriptions, summaries, error texts) is redacted with the lane's rules
before it is kept; events are redacted again as they leave the runtime.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from baton.runtime.turns.events import RunEvent, RunEventType
from baton.runtime.turns.streaming import Item
from baton.wire.compaction import COMPACTION_SUMMARY_CHUNK, COMPACTION_UPDATE, CompactionTracker
from baton.wire.notices import NOTICE_UPDATE, parse_notice
from baton.wire.usage import ContextUsage, TurnUsage, parse_turn_usage, parse_usage_update

#: The session updates this module projects.
LIVE_UPDATE_KINDS: Final = frozenset(
    {"usage_update", NOTICE_UPDATE, COMPACTION_UPDATE, COMPACTION_SUMMARY_CHUNK}
)

#: Elicitations kept (as items) per run: each is a question a person answered or Baton
#: declined; an agent asking in a loop must not grow the run's record without bound.
MAX_ELICITATIONS_PER_RUN: Final = 64

#: Notices kept (as items) per run. A notice is shown when it arrives whatever the count; an
#: agent that floods them must not grow the run's record without bound.
MAX_NOTICES_PER_RUN: Final = 64


class LiveUpdates:
    """Usage, notices and compactions of one run."""

    def __init__(
        self,
        run_id: str,
        emit: Callable[[RunEvent], None],
        redact: Callable[[str], str],
        before_event: Callable[[], None],
    ) -> None:
        self.run_id = run_id
        self._emit = emit
        self._redact = redact
        #: Called before each event (the turn flushes pending output so events keep order).
        self._before_event = before_event
        self.context: ContextUsage | None = None
        self.turn_usage: TurnUsage | None = None
        self.notices: list[dict[str, Any]] = []
        #: Notices beyond :data:`MAX_NOTICES_PER_RUN` (shown, counted, not kept).
        self.notices_dropped = 0
        self.compactions = CompactionTracker()
        self.elicitations: list[dict[str, Any]] = []
        #: Elicitations beyond :data:`MAX_ELICITATIONS_PER_RUN` (answered, counted, not kept).
        self.elicitations_dropped = 0

    def elicitation(self, record: dict[str, Any]) -> None:
        """An answered ``elicitation/create`` (already redacted): an ``elicitation`` event now,
        an ``elicitation`` item at the end."""
        if len(self.elicitations) < MAX_ELICITATIONS_PER_RUN:
            self.elicitations.append(record)
        else:
            self.elicitations_dropped += 1
        self._event("elicitation", dict(record))

    def handle(self, kind: object, update: Mapping[str, Any]) -> bool:
        """Project one session update; False when ``kind`` is not one of
        :data:`LIVE_UPDATE_KINDS` (the caller handles it). An unreadable update of a known kind
        is consumed and ignored (it stays in the journal)."""
        if kind not in LIVE_UPDATE_KINDS:
            return False
        if kind == "usage_update":
            context = parse_usage_update(update)
            if context is not None:
                self.context = context
                self._event("usage", self.usage_view() or {})
        elif kind == NOTICE_UPDATE:
            notice = parse_notice(update)
            if notice is not None:
                view = notice.to_json()
                view["title"] = self._redact(notice.title)
                if notice.description is not None:
                    view["description"] = self._redact(notice.description)
                if len(self.notices) < MAX_NOTICES_PER_RUN:
                    self.notices.append(view)
                else:
                    self.notices_dropped += 1
                self._event("notice", view)
        else:
            compaction = self.compactions.apply(update)
            if compaction is not None:
                self._event("compaction", self._compaction_view(compaction.to_json()))
        return True

    def on_prompt_answer(self, result: object) -> None:
        """v1: read the end-of-turn usage of the ``session/prompt`` answer, if it carries any
        (:meth:`record_turn_usage`)."""
        usage = result.get("usage") if isinstance(result, Mapping) else None
        self.record_turn_usage(parse_turn_usage(usage))

    def record_turn_usage(self, turn: TurnUsage | None) -> None:
        """The end-of-turn usage (v1's prompt answer, v2's ending ``idle`` state), once per
        turn: a ``usage`` event with the last context usage, when there was one. None (not
        reported) changes nothing."""
        if turn is not None:
            self.turn_usage = turn
            self._event("usage", self.usage_view() or {})

    def usage_view(self) -> dict[str, Any] | None:
        """``{used, size, cost?, turn?}`` with only what the agent sent, or None."""
        view: dict[str, Any] = {}
        if self.context is not None:
            view.update(self.context.to_json())
        if self.turn_usage is not None:
            view["turn"] = self.turn_usage.to_json()
        return view or None

    def items(self) -> list[Item]:
        """The items the run keeps: usage, each notice, each compaction."""
        found: list[Item] = []
        usage = self.usage_view()
        if usage is not None:
            found.append(Item("usage", usage))
        found += [Item("notice", dict(n)) for n in self.notices]
        found += [Item("elicitation", dict(e)) for e in self.elicitations]
        found += [
            Item("compaction", self._compaction_view(c.to_json()))
            for c in self.compactions.compactions.values()
        ]
        return found

    def _compaction_view(self, view: dict[str, Any]) -> dict[str, Any]:
        view["summary"] = self._redact(view["summary"])
        if view["error"] is not None:
            view["error"] = self._redact(view["error"])
        return view

    def _event(self, kind: RunEventType, data: dict[str, Any]) -> None:
        self._before_event()
        self._emit(RunEvent(kind, self.run_id, data))
