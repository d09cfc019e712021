"""The turn a damaged journal holds: the replay of a dead owner's turn says when it stopped
short (``journalIncomplete`` in the recovery view) instead of stopping silently."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from baton.errors import JournalCorrupt
from baton.journal.records import JournalRecord, RecordMetadata
from baton.views import turn_journal
from baton.views.turn_journal import add_journal_items, journal_turn

SERVER = "srv-1"
SESSION = "sess-1"
PROMPT_REF = {"server": SERVER, "sequence": 1}


def record(sequence: int, direction: str, method: str | None, raw: Any, rid: int | None = None):
    return JournalRecord(
        SERVER,
        0,
        sequence,
        direction,  # type: ignore[arg-type]
        "2026-12-04T00:00:00Z",
        orjson.dumps(raw).decode(),
        RecordMetadata("notification" if method else "response", method, rid),  # type: ignore[arg-type]
        "",
    )


def tool_call(sequence: int, call_id: str) -> JournalRecord:
    update = {"sessionUpdate": "tool_call", "toolCallId": call_id, "title": "t", "kind": "read"}
    params = {"sessionId": SESSION, "update": update}
    message = {"jsonrpc": "2.0", "method": "session/update", "params": params}
    return record(sequence, "inbound", "session/update", message)


class Journal:
    """A journal whose records are ``records``, then (``damaged``) a corrupt segment."""

    def __init__(self, records: list[JournalRecord], *, damaged: bool) -> None:
        self._records = records
        self._damaged = damaged

    def records(self, server: str) -> Iterator[JournalRecord]:
        assert server == SERVER
        prompt = {"jsonrpc": "2.0", "id": 7, "method": "session/prompt"}
        yield record(1, "outbound", "session/prompt", prompt, 7)
        yield from self._records
        if self._damaged:
            raise JournalCorrupt("segment 1", "a record's sha256 does not match")


def view() -> dict[str, Any]:
    return {"prompt_ref": PROMPT_REF, "session": {"provider_session_id": SESSION}, "items": []}


def test_a_journal_read_to_its_end_is_complete() -> None:
    turn = journal_turn(Journal([tool_call(2, "a")], damaged=False), PROMPT_REF, SESSION)  # type: ignore[arg-type]
    assert list(turn.tool_calls) == ["a"] and turn.incomplete is None
    shown = view()
    add_journal_items(shown, Journal([tool_call(2, "a")], damaged=False))  # type: ignore[arg-type]
    assert shown["journal_incomplete"] is False and shown["journal_incomplete_reason"] is None


def test_a_damaged_journal_is_said_with_what_was_read_before_it() -> None:
    journal = Journal([tool_call(2, "a"), tool_call(3, "b")], damaged=True)
    turn = journal_turn(journal, PROMPT_REF, SESSION)  # type: ignore[arg-type]
    assert list(turn.tool_calls) == ["a", "b"]
    assert turn.incomplete == "damaged"
    shown = view()
    add_journal_items(shown, journal)  # type: ignore[arg-type]
    assert [item["content"]["toolCallId"] for item in shown["items"]] == ["a", "b"]
    assert shown["journal_incomplete"] is True
    assert shown["journal_incomplete_reason"] == "damaged"


def test_the_record_bound_is_said_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(turn_journal, "MAX_REPLAYED_RECORDS", 2)
    journal = Journal([tool_call(n, f"c{n}") for n in range(2, 6)], damaged=False)
    turn = journal_turn(journal, PROMPT_REF, SESSION)  # type: ignore[arg-type]
    assert list(turn.tool_calls) == ["c2", "c3"] and turn.incomplete == "bounded"


def test_an_answered_prompt_is_complete_even_with_damage_after_it() -> None:
    answer = record(3, "inbound", None, {"jsonrpc": "2.0", "id": 7, "result": {}}, 7)
    turn = journal_turn(Journal([tool_call(2, "a"), answer], damaged=True), PROMPT_REF, SESSION)  # type: ignore[arg-type]
    assert turn.answered and turn.incomplete is None
