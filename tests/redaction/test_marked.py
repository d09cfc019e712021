"""Text redacted once (issue 34): the stream redactor marks what it publishes, the streaming
buffer marks a part's whole text when it is one stream's output, and structural redaction
keeps marked text only when the mark vouches for the sink's own secrets."""

from __future__ import annotations

import copy
import pickle

import pytest

from baton.redaction import RedactedText, SecretValues, StreamRedactor, is_trusted, redact_json
from baton.redaction import structural as structural_module
from baton.runtime.turns.streaming import TextPart

SECRET = "lantern-quartz-5512-hollow-reef"
SHAPED = "sk-proj-" + "Zx81Qw72Er63Ty54Ui45Op36As27Df18Gh09Jk"


def test_the_mark_vouches_only_for_the_same_unchanged_secrets() -> None:
    secrets = SecretValues([SECRET])
    marked = RedactedText.of("clean text", secrets, secrets.snapshot)
    assert is_trusted(marked, secrets)
    assert is_trusted(marked, None)  # a sink without exact values applies only the rules
    assert not is_trusted(marked, SecretValues(["another-value-4455-abcdef"]))
    assert not is_trusted("clean text", secrets)  # a plain str carries no mark
    secrets.add(["a-value-added-later-7788"])
    assert not is_trusted(marked, secrets)  # redacted before the set grew
    # Anything made from marked text is a plain str again, pickles and copies too (the mark
    # and the secret set it points to stay in this process).
    assert type(marked + " more") is str and type(marked[:3]) is str
    assert type(copy.deepcopy(marked)) is str and type(copy.copy(marked)) is str
    assert type(pickle.loads(pickle.dumps(marked))) is str
    assert SECRET.encode() not in pickle.dumps({"text": marked})


def test_structural_redaction_keeps_trusted_text_without_scanning_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    secrets = SecretValues([SECRET])
    scanned: list[str] = []
    real = structural_module.redact_text

    def counting(text: str, values: SecretValues | None = None) -> str:
        scanned.append(text)
        return real(text, values)

    monkeypatch.setattr(structural_module, "redact_text", counting)
    trusted = RedactedText.of("already clean", secrets, secrets.snapshot)
    out = redact_json({"text": trusted, "coalescedEvents": 3}, secrets)
    assert out["text"] is trusted
    assert "already clean" not in scanned
    # A mark made under another set does not vouch: the text is redacted as usual.
    foreign = RedactedText.of(f"{SECRET} and {SHAPED}", None, None)
    redacted = redact_json({"text": foreign}, secrets)["text"]
    assert SECRET not in redacted and SHAPED not in redacted


def test_the_stream_redactor_marks_what_it_publishes() -> None:
    secrets = SecretValues([SECRET])
    stream = StreamRedactor(secrets)
    half = len(SECRET) // 2
    published = [
        stream.feed("hello "),
        stream.feed(SECRET[:half]),
        stream.feed(SECRET[half:] + " "),
    ]
    published.append(stream.finish())
    assert all(type(text) is RedactedText for text in published if text)
    assert SECRET not in "".join(published)
    assert all(is_trusted(text, secrets) for text in published if text)


def test_a_parts_whole_text_is_marked_when_it_is_one_streams_output() -> None:
    secrets = SecretValues([SECRET])
    part = TextPart("m1", "text", secrets)
    half = len(SECRET) // 2
    for delta in ("a secret ", SECRET[:half], SECRET[half:], " and ", SHAPED, " done "):
        part.feed(delta)
    _tail, whole = part.finish()
    assert SECRET not in whole and SHAPED not in whole
    assert is_trusted(whole, secrets)


@pytest.mark.parametrize("interruption", ["cut", "secrets grew"])
def test_a_parts_whole_text_is_left_to_the_sinks_after_an_interruption(
    interruption: str,
) -> None:
    secrets = SecretValues([SECRET])
    part = TextPart("m1", "text", secrets)
    part.feed("first words ")
    if interruption == "cut":
        part.cut()  # another part's output came between: a new stream follows
    else:
        secrets.add(["grown-value-9911-abcdefgh"])
    part.feed("more words ")
    _tail, whole = part.finish()
    assert not is_trusted(whole, secrets)
    # The sink redacts such text itself (the store, the event encoder): still clean.
    assert redact_json({"text": whole}, secrets)["text"] == "first words more words "
