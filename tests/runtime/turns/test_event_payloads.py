"""docs/events.md's event table and the payload types of baton.runtime.turns.event_payloads say
the same: every run event type is documented, with exactly its payload's keys (a ``?`` on the
page for each key the payload marks ``NotRequired``; the fields the CLI adds are left aside)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final, get_args

import pytest

from baton.errors import InternalError
from baton.runtime.turns.event_payloads import (
    EVENT_TYPES,
    PAYLOAD_TYPES,
    RunEventType,
    TextPayload,
)
from baton.runtime.turns.events import RunEvent, event_type

DOC: Final = Path(__file__).resolve().parents[3] / "docs" / "events.md"
#: A table row of docs/events.md's event table: | `type` | fields | when |
ROW: Final = re.compile(r"^\| `(?P<type>[a-z_]+)` \| (?P<fields>.*) \| (?P<when>[^|]*) \|$")


def top_level_fields(text: str) -> dict[str, bool]:
    """The backquoted names outside parentheses, each with whether a ``?`` follows it (the
    field is optional); a part (``;``-separated, outside parentheses) that says "on the CLI"
    lists the CLI's own fields and is left aside."""
    parts: list[list[tuple[str, bool]]] = [[]]
    texts = [""]
    depth = 0
    for match in re.finditer(r"[();]|`([A-Za-z]+)`(\?)?|[^();`]+|`", text):
        token = match.group(0)
        if token == "(":
            depth += 1
        elif token == ")":
            depth -= 1
        elif token == ";" and depth == 0:
            parts.append([])
            texts.append("")
            continue
        elif depth == 0 and match.group(1):
            parts[-1].append((match.group(1), bool(match.group(2))))
        texts[-1] += token
    return {
        name: optional
        for part, said in zip(parts, texts, strict=True)
        if "on the CLI" not in said
        for name, optional in part
    }


def documented() -> dict[str, dict[str, bool]]:
    rows: dict[str, dict[str, bool]] = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        match = ROW.match(line)
        if match and match.group("type") in EVENT_TYPES:
            rows[match.group("type")] = top_level_fields(match.group("fields"))
    return rows


def test_every_event_type_is_documented() -> None:
    assert set(documented()) == set(EVENT_TYPES) == set(PAYLOAD_TYPES)


@pytest.mark.parametrize("kind", get_args(RunEventType))
def test_the_page_lists_exactly_the_payload_keys(kind: str) -> None:
    payload = PAYLOAD_TYPES[kind]
    keys = {key: key in payload.__optional_keys__ for key in payload.__annotations__}
    assert documented()[kind] == keys


def test_the_field_reader_sees_depth_and_optional_marks() -> None:
    text = "`a`, `b`? (`c`; `d` (`e`)), `f`; `g` on the CLI (`h`)"
    assert top_level_fields(text) == {"a": False, "b": True, "f": False}


def test_payload_reads_the_data_typed_and_refuses_the_wrong_type() -> None:
    event = RunEvent("text", "run-1", {"text": "hi", "coalescedEvents": 1})
    assert event.payload(TextPayload)["text"] == "hi"
    with pytest.raises(InternalError):
        RunEvent("plan", "run-1", {"entries": []}).payload(TextPayload)


def test_an_unknown_type_reads_as_none() -> None:
    assert event_type("text") == "text"
    assert event_type("permission_request") == "permission_request"
    assert event_type("from_the_future") is None
    assert event_type(None) is None
