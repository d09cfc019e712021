"""StreamRedactor's fast path for plain deltas publishes exactly what the full path would.

The fast path skips the cut search for a delta that arrives with nothing held, ends with ASCII
whitespace and holds nothing a rule could act on (``may_hold_credential``). These tests drive
the same deltas through a redactor whose fast path is disabled and compare every output.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from baton.redaction import SecretValues, StreamRedactor, redact_text
from baton.redaction import stream as stream_module
from baton.redaction.names import (
    CREDENTIAL_NAMES,
    CREDENTIAL_SUFFIXES,
    is_credential_name,
    may_end_with_credential_name,
)
from baton.redaction.text import credential_spans, may_hold_credential

CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "adapters"

#: Secret sets: none, values without whitespace (the fast path stays on), and one value with
#: whitespace (the fast path turns itself off).
SECRET_SETS = {
    "none": None,
    "plain": SecretValues(["hunter2hunter2", "sk-ant-api03-EXACTsecretVALUE-0123"]),
    "spaced": SecretValues(["hunter2hunter2", "pass phrase with spaces"]),
}

#: Fragments that start, end or are credentials, to mix into generated deltas.
FRAGMENTS = [
    "api_key",
    "api_key ",
    "token ",
    "password",
    ": ",
    "=",
    "@",
    "https://",
    "user:pw@host ",
    "Bearer ",
    "basic ",
    "sk-",
    "sk-ant-api03-abcdefghijklmnop ",
    "ghp_",
    "AKIA",
    "eyJ",
    "xoxb-",
    '"',
    "'",
    "\\",
    "Authorization: ",
    "hunter2",
    "hunter2hunter2",
    "pass phrase with spaces",
    "pass ",
    " ",
    "\n",
    "\t",
    "\u00a0",
    "chunk 5 of the flood ",
    "plain words here ",
]


def _capture_texts() -> list[str]:
    """Every text leaf of the real adapter transcripts (agent prose, tool output...)."""
    texts: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            texts.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for path in sorted(CAPTURES.glob("*/transcript*.jsonl")):
        for line in path.read_text().splitlines():
            if line.strip():
                record = json.loads(line)
                walk(record.get("frame") or record["msg"])
    return texts


CAPTURE_TEXTS = _capture_texts()


def _outputs(deltas: list[str], secrets: SecretValues | None) -> list[str]:
    redactor = StreamRedactor(secrets)
    return [redactor.feed(delta) for delta in deltas] + [redactor.finish()]


def _both_paths(
    deltas: list[str], secrets: SecretValues | None, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[str], list[str]]:
    fast = _outputs(deltas, secrets)
    with monkeypatch.context() as patch:
        patch.setattr(stream_module, "may_hold_credential", lambda _text: True)
        full = _outputs(deltas, secrets)
    return fast, full


def test_the_fast_path_is_taken_for_plain_deltas() -> None:
    redactor = StreamRedactor(None)
    # Observable through held(): a plain delta leaves nothing held.
    assert redactor.feed("chunk 1 of the flood ") == "chunk 1 of the flood "
    assert redactor.held == 0


def test_texts_without_hints_are_left_alone_by_every_rule() -> None:
    for text in [*CAPTURE_TEXTS, *FRAGMENTS]:
        if not may_hold_credential(text):
            assert redact_text(text) == text
            assert credential_spans(text) == []


@settings(max_examples=500, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=12)), max_size=8))
def test_no_hint_means_no_rule_and_no_span(pieces: list[str]) -> None:
    text = "".join(pieces)
    if not may_hold_credential(text):
        assert redact_text(text) == text
        assert credential_spans(text) == []


@pytest.mark.parametrize("name", sorted(SECRET_SETS))
def test_capture_texts_as_word_deltas_match_the_full_path(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    secrets = SECRET_SETS[name]
    for text in CAPTURE_TEXTS:
        # Deltas that end at spaces (the fast path's case) and deltas cut anywhere.
        words = [word + " " for word in text.split(" ")]
        thirds = [text[: len(text) // 3], text[len(text) // 3 :]]
        for deltas in (words, thirds, [text + " "]):
            fast, full = _both_paths(deltas, secrets, monkeypatch)
            assert fast == full, deltas


@pytest.mark.parametrize(
    "deltas",
    [
        ["say ", "hunter2hunter2 ", "done "],  # an exact secret in a delta of its own
        ["x ", "sk-ant-api03-EXACTsecretVALUE-0123\n"],
        ["my ", "api_key ", "= value ", "next "],  # a credential name waiting for its "="
        ["the ", "token\t", ": abc "],
        ["hello ", "Bearer ", "abcdefghijklmnop ", "ok "],
        ["mail me@example.com ", "now "],
        ["see https://user:pw@host/x ", "then "],
    ],
)
@pytest.mark.parametrize("name", sorted(SECRET_SETS))
def test_deltas_around_credentials_match_the_full_path(
    name: str, deltas: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    fast, full = _both_paths(deltas, SECRET_SETS[name], monkeypatch)
    assert fast == full
    assert "hunter2hunter2" not in "".join(fast) or SECRET_SETS[name] is None


@pytest.mark.parametrize("name", sorted(SECRET_SETS))
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    deltas=st.lists(
        st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=4).map("".join), max_size=12
    )
)
def test_generated_deltas_match_the_full_path(name: str, deltas: list[str]) -> None:
    secrets = SECRET_SETS[name]
    with pytest.MonkeyPatch.context() as monkeypatch:
        fast, full = _both_paths(deltas, secrets, monkeypatch)
    assert fast == full
    assert "".join(fast) == "".join(full)


names = st.sampled_from(sorted(CREDENTIAL_NAMES | set(CREDENTIAL_SUFFIXES)))


@st.composite
def spelled_names(draw: st.DrawFn) -> str:
    """A credential name as a key may spell it: any case, separators anywhere, a prefix."""
    name = draw(names)
    prefix = draw(st.sampled_from(["", "x_", "my-", "OPENAI_", "--", "a.b."]))
    chars = [c.upper() if draw(st.booleans()) else c for c in name]
    spelled = "".join(c + draw(st.sampled_from(["", "", "-", "_", "."])) for c in chars)
    return prefix + spelled


@settings(max_examples=500, deadline=None)
@given(spelled_names(), st.sampled_from(["", '"', "'", '\\"']), st.sampled_from(["", " ", " \t "]))
def test_the_cheap_ending_check_never_misses_a_credential_name(
    key: str, quote: str, spaces: str
) -> None:
    assume(is_credential_name(key))  # a prefix turns a whole-name rule ("jwt") into no match
    assert may_end_with_credential_name(f"some text {key}{quote}{spaces}")
