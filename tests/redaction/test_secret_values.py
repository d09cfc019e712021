"""SecretValues: exact values, longest first, with a minimum length and no fragment left."""

from __future__ import annotations

import pytest

from baton.errors import ConfigurationError
from baton.redaction import MIN_SECRET_CHARS, REDACTED, SecretValues, redact_text


def test_values_shorter_than_the_minimum_are_ignored() -> None:
    short = "a" * (MIN_SECRET_CHARS - 1)
    exact = "b" * MIN_SECRET_CHARS
    assert not SecretValues([short])
    assert SecretValues([exact])
    assert redact_text(f"{short} {exact}", SecretValues([short, exact])) == f"{short} {REDACTED}"


def test_a_one_letter_value_never_masks_every_letter() -> None:
    assert redact_text("a banana", SecretValues(["a"])) == "a banana"


def test_empty_set_is_false_and_longest_is_zero() -> None:
    values = SecretValues([])
    assert not values
    assert values.longest() == 0
    assert len(values) == 0


def test_longest_first_and_deduplicated() -> None:
    values = SecretValues(["short-secret", "a-much-longer-secret", "short-secret"])
    assert list(values) == ["a-much-longer-secret", "short-secret"]
    assert values.longest() == len("a-much-longer-secret")


def test_repr_never_shows_a_value() -> None:
    values = SecretValues(["hunter2-the-secret"])
    assert "hunter2" not in repr(values)


def test_non_string_values_are_refused_without_echoing_them() -> None:
    with pytest.raises(ConfigurationError) as caught:
        SecretValues([12345678])  # type: ignore[list-item]
    assert "12345678" not in str(caught.value)


def test_a_value_that_contains_another_is_masked_whole() -> None:
    values = SecretValues(["inner-secret", "outer-inner-secret-tail"])
    assert redact_text("x outer-inner-secret-tail y", values) == f"x {REDACTED} y"


def test_overlapping_values_leave_no_fragment() -> None:
    values = SecretValues(["abcdefgh1234", "1234wxyz5678"])
    out = redact_text("--abcdefgh1234wxyz5678--", values)
    assert out == f"--{REDACTED}--"


def test_overlapping_occurrences_of_one_repetitive_value_are_all_masked() -> None:
    values = SecretValues(["abababab"])
    assert redact_text("xababababababx", values) == f"x{REDACTED}x"


def test_stripped_json_escaped_and_percent_encoded_spellings_are_matched() -> None:
    values = SecretValues(['pa"ss/word 99\n'])
    assert redact_text('x pa"ss/word 99 y', values) == f"x {REDACTED} y"
    assert redact_text('{"k": "pa\\"ss/word 99"}', values) == f'{{"k": "{REDACTED}"}}'
    assert redact_text("?p=pa%22ss%2Fword%2099&", values) == f"?p={REDACTED}&"


def test_pending_prefix_is_the_longest_proper_beginning() -> None:
    values = SecretValues(["sk-live-0123456789"])
    assert values.pending_prefix("text sk-li") == len("sk-li")
    assert values.pending_prefix("text") == 0
    # The whole value is not a *proper* prefix.
    assert values.pending_prefix("sk-live-0123456789") < len("sk-live-0123456789")


def test_straddling_start() -> None:
    values = SecretValues(["0123456789"])
    text = "ab0123456789cd"
    assert values.straddling_start(text, 5) == 2
    assert values.straddling_start(text, 2) is None
    assert values.straddling_start(text, 12) is None
