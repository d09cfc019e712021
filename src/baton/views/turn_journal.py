"""What the journal holds of one run's turn: the plan and the tool calls the agent reported
after the prompt, read back from the (redacted) protocol records.

A turn whose owner died (SIGKILL of `baton run`, `baton serve` or `baton worker`) never
wrote the output it still held in memory: tool calls and the plan are written when the turn
ends. The journal, though, recorded every ``session/update`` before it was acted on.
:func:`journal_turn` replays those updates for the run's provider session, from the prompt's
record to the prompt's answer (or the journal's end), into the same views a turn writes
(:func:`baton.runtime.turns.turn.tool_call_view`, ``plan_view``), so `baton recover` and the
service's recovery view show them whoever the owner was.

The reply's text is not there: the journal keeps a provider's streamed content as
``[REDACTED PROVIDER STREAM CONTENT]`` by design (docs/journal.md), so text streamed but not
yet written to the store when the owner died is lost with it.

Bounded: at most :data:`MAX_REPLAYED_RECORDS` records after the prompt are read and at most
:data:`MAX_REPLAYED_TOOL_CALLS` tool calls kept. ACP 1 updates only; a v2 turn's state
updates are left to the journal itself (``baton journal show``).

Never silent about a short read: when the replay stopped before the prompt's answer for a
reason other than the journal's end (a damaged or pruned segment, the record bound),
:attr:`JournalTurn.incomplete` says why, and the recovery view carries it as
``journalIncomplete`` (docs/api.md): what it shows is what was read up to there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

import orjson

from baton.errors import BatonError
from baton.journal import Journal
from baton.redaction import redact_text
from baton.runtime.turns.projection import plan_view, tool_call_view
from baton.wire.toolcalls import merge_tool_call

#: Records read after the prompt's at most (a long turn streams thousands of updates; a flood
#: past this is cut: the journal keeps it all).
MAX_REPLAYED_RECORDS: Final = 200_000
#: Tool calls replayed at most (the first ones seen).
MAX_REPLAYED_TOOL_CALLS: Final = 1000
#: The ``source`` of an item rebuilt from the journal (the store's items have none).
JOURNAL_SOURCE: Final = "journal"
#: :attr:`JournalTurn.incomplete` when the journal could not be read on (damaged, pruned).
INCOMPLETE_DAMAGED: Final = "damaged"
#: :attr:`JournalTurn.incomplete` when :data:`MAX_REPLAYED_RECORDS` were read.
INCOMPLETE_BOUNDED: Final = "bounded"


@dataclass
class JournalTurn:
    """One turn as the journal holds it."""

    plan: list[Any] | None = None
    tool_calls: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: The prompt's answer was recorded (the turn ended at the agent).
    answered: bool = False
    #: Why the replay stopped short (``damaged``: the journal could not be read on, a
    #: damaged or pruned segment; ``bounded``: :data:`MAX_REPLAYED_RECORDS` were read), or
    #: None: it read up to the prompt's answer or the journal's end.
    incomplete: str | None = None

    def items(self) -> list[dict[str, Any]]:
        """The turn's items as a run view lists them, each marked ``source: journal``."""
        found: list[dict[str, Any]] = []
        for state in self.tool_calls.values():
            found.append(_item("tool_call", tool_call_view(state, redact_text)))
        if self.plan is not None:
            found.append(_item("plan", {"entries": plan_view(self.plan)}))
        return found


def _item(kind: str, content: dict[str, Any]) -> dict[str, Any]:
    return {"kind": kind, "content": content, "source": JOURNAL_SOURCE}


def _ref_field(ref: Any, name: str) -> Any:
    return ref.get(name) if isinstance(ref, dict) else getattr(ref, name, None)


def journal_turn(journal: Journal, prompt_ref: Any, provider_session_id: str | None) -> JournalTurn:
    """The turn whose prompt the journal recorded at ``prompt_ref`` (a JournalRef or its plain
    dict), for ``provider_session_id``; empty when either is unknown or unreadable."""
    turn = JournalTurn()
    server, sequence = _ref_field(prompt_ref, "server"), _ref_field(prompt_ref, "sequence")
    if not isinstance(server, str) or not isinstance(sequence, int) or not provider_session_id:
        return turn
    prompt_id: object = None
    read = 0
    try:
        for record in journal.records(server):
            if record.sequence < sequence:
                continue
            if record.sequence == sequence:
                prompt_id = record.metadata.id
                continue
            read += 1
            if read > MAX_REPLAYED_RECORDS:
                turn.incomplete = INCOMPLETE_BOUNDED
                break
            if record.direction != "inbound":
                continue
            if record.metadata.method is None:
                if prompt_id is not None and record.metadata.id == prompt_id:
                    turn.answered = True
                    break
                continue
            if record.metadata.method == "session/update":
                _apply(turn, record.raw, provider_session_id)
    except (BatonError, OSError):
        # A damaged or pruned journal: what was read so far is the answer, and says so.
        turn.incomplete = INCOMPLETE_DAMAGED
    return turn


def _apply(turn: JournalTurn, raw: str, provider_session_id: str) -> None:
    try:
        message = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return
    params = message.get("params") if isinstance(message, dict) else None
    if not isinstance(params, dict) or params.get("sessionId") != provider_session_id:
        return
    update = params.get("update")
    if not isinstance(update, dict):
        return
    kind = update.get("sessionUpdate")
    if kind == "plan" and isinstance(update.get("entries"), list):
        turn.plan = list(update["entries"])
    elif kind in ("tool_call", "tool_call_update"):
        call_id = update.get("toolCallId")
        if not isinstance(call_id, str):
            return
        prior = turn.tool_calls.get(call_id)
        if prior is None and len(turn.tool_calls) >= MAX_REPLAYED_TOOL_CALLS:
            return
        turn.tool_calls[call_id] = merge_tool_call(prior, update)


def add_journal_items(view: dict[str, Any], journal: Journal) -> None:
    """Complete a run view whose turn did not end in order (RECOVERY_REQUIRED, or still
    marked running by a dead owner) with what the journal holds of it: the plan and tool
    calls, when the store has none of that kind (marked ``source: journal``); and
    ``journal_incomplete`` (``journalIncomplete`` in JSON): True when the replay stopped
    short (see :attr:`JournalTurn.incomplete`), with ``journal_incomplete_reason``."""
    session = view.get("session") or {}
    provider_id = session.get("provider_session_id") if isinstance(session, dict) else None
    replayed = journal_turn(journal, view.get("prompt_ref"), provider_id)
    stored = {item.get("kind") for item in view["items"]}
    view["items"] = [
        *view["items"],
        *(item for item in replayed.items() if item["kind"] not in stored),
    ]
    view["journal_incomplete"] = replayed.incomplete is not None
    view["journal_incomplete_reason"] = replayed.incomplete
