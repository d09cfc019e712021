"""StreamRedactor: a credential split across deltas never reaches the published output."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from baton.errors import ConfigurationError
from baton.redaction import (
    MAX_STREAM_CREDENTIAL_CARRY_BYTES,
    MIN_UNRESOLVED_PREFIX_CHARS,
    REDACTED,
    UNRESOLVED_SECRET_MARKER,
    SecretValues,
    StreamRedactor,
    redact_text,
)

SECRETS = ["sk-ant-api03-EXACTsecretVALUE-0123", "hunter2hunter2", "pass phrase with spaces"]
VALUES = SecretValues(SECRETS)


def _run(deltas: list[str], secrets: SecretValues | None = VALUES, **kwargs: int) -> str:
    redactor = StreamRedactor(secrets, **kwargs)
    return "".join(redactor.feed(d) for d in deltas) + redactor.finish()


@pytest.mark.parametrize("secret", SECRETS)
def test_secret_split_at_every_position_across_two_deltas(secret: str) -> None:
    text = f"before {secret} after\n"
    for i in range(len(text) + 1):
        out = _run([text[:i], text[i:]])
        assert secret not in out, i
        assert out == redact_text(text, VALUES), i


@pytest.mark.parametrize("secret", SECRETS)
def test_secret_split_at_every_pair_of_positions_across_three_deltas(secret: str) -> None:
    text = f"x{secret}y {secret}"
    for i in range(len(text) + 1):
        for j in range(i, len(text) + 1):
            out = _run([text[:i], text[i:j], text[j:]])
            assert secret not in out, (i, j)


def test_secret_split_into_single_characters() -> None:
    secret = SECRETS[0]
    out = _run(list(f"a {secret} b"))
    assert secret not in out
    assert out == f"a {REDACTED} b"


def test_ordinary_text_passes_through_unchanged() -> None:
    text = "Here is the plan:\n1. read the file\n2. edit it, carefully.\n"
    assert _run([text[i : i + 3] for i in range(0, len(text), 3)]) == text
    assert _run(list(text), secrets=None) == text


def test_text_is_published_as_soon_as_a_word_ends() -> None:
    redactor = StreamRedactor(None)
    assert redactor.feed("Hello") == ""
    assert redactor.feed(" wor") == "Hello "
    assert redactor.feed("ld!\n") == "world!\n"
    assert redactor.finish() == ""


def test_fast_path_holds_without_work_until_whitespace() -> None:
    redactor = StreamRedactor(None)
    for _ in range(100):
        assert redactor.feed("abc") == ""
    assert redactor.held == 300
    assert redactor.feed(" ") == "abc" * 100 + " "


def test_a_partial_secret_at_the_end_becomes_the_unresolved_marker() -> None:
    secret = SECRETS[0]
    cut = secret[: MIN_UNRESOLVED_PREFIX_CHARS + 3]
    assert _run(["the key is ", cut]) == f"the key is {UNRESOLVED_SECRET_MARKER}"
    assert cut not in _run(["the key is ", cut])


def test_a_very_short_secret_prefix_at_the_end_is_ordinary_text() -> None:
    # "sk" begins a secret but is too short to be treated as one.
    assert _run(["please ask"]) == "please ask"


def test_a_cut_short_key_shape_at_the_end_becomes_the_marker() -> None:
    assert _run(["key: ", "sk-ant-abc"], secrets=None) == f"key: {UNRESOLVED_SECRET_MARKER}"
    assert _run(["auth ", "Bearer ab"], secrets=None) == f"auth {UNRESOLVED_SECRET_MARKER}"


SPLIT_CONSTRUCTS = [
    "Authorization: Bearer abcdefghijk lmn\nok",
    "curl -H 'Cookie: a=1; b=2'\n",
    "export OPENAI_API_KEY=sk-live-abcdefghijklmnopqrstu now",
    'config {"password": "p w d", "x": 1} end',
    "password  =  hunter \n",
    "clone https://bob:s3cret@github.com/x done",
    "token: Bearer abcdefghijkl\n",
    "use ghp_" + "a1" * 18 + " then",
    "jwt eyJhbGciOiJI.eyJzdWIiOiIx.sig-_0 end",
    "Basic dXNlcjpwYXNz and Basic Authentication\n",
]


@pytest.mark.parametrize("text", SPLIT_CONSTRUCTS)
def test_pattern_constructs_split_anywhere_match_whole_text_redaction(text: str) -> None:
    want = redact_text(text)
    for i in range(len(text) + 1):
        for j in range(i, len(text) + 1, 3):
            assert _run([text[:i], text[i:j], text[j:]], secrets=None) == want, (i, j)


def test_an_open_header_holds_until_its_newline() -> None:
    redactor = StreamRedactor(None)
    assert redactor.feed("ok Authorization: Bearer") == "ok "
    assert redactor.feed(" abc def ghi") == ""
    assert redactor.feed(" more\nnext ") == f"Authorization: {REDACTED}\nnext "


def test_a_carry_past_its_bound_is_masked_and_memory_stays_bounded() -> None:
    redactor = StreamRedactor(None, max_carry=16)
    out = redactor.feed("start " + "x" * 10)
    assert out == "start "
    out += redactor.feed("y" * 10)  # the run is now 20 > 16 characters
    assert out == f"start {REDACTED}"
    assert redactor.held == 0
    assert redactor.feed("zzz") == ""  # the rest of the masked run is dropped
    assert redactor.feed("zz tail ") == " tail "
    assert redactor.finish() == ""


def test_a_secret_longer_than_the_carry_bound_is_masked_with_its_chunk() -> None:
    secret = "s" + "e" * 40
    out = _run(["a ", secret[:20], secret[20:], " b"], SecretValues([secret]), max_carry=16)
    assert secret[:17] not in out
    assert out == f"a {REDACTED} b"


def test_an_overlong_open_header_is_masked_to_its_newline() -> None:
    out = _run(["Cookie: ", "a=1; " * 10, "b=2\nafter "], secrets=None, max_carry=32)
    assert out == f"{REDACTED}\nafter "


def test_carry_bound_validation() -> None:
    assert MAX_STREAM_CREDENTIAL_CARRY_BYTES == 64 * 1024
    for bad in (0, -1, True, 1.5):
        with pytest.raises(ConfigurationError):
            StreamRedactor(None, max_carry=bad)  # type: ignore[arg-type]


def test_finish_resets_for_a_new_stream() -> None:
    redactor = StreamRedactor(VALUES)
    assert redactor.feed("one two") == "one "
    assert redactor.finish() == "two"
    assert redactor.held == 0
    assert redactor.feed("three ") == "three "


def test_pathological_chained_constructs_finish() -> None:
    # No timing assertion: the back-off keeps this linear; a regression would hang until the
    # suite's timeout.
    redactor = StreamRedactor(VALUES)
    text = '"token": "' * (1 << 16)
    out = [redactor.feed(text[i : i + 1000]) for i in range(0, len(text), 1000)]
    out.append(redactor.finish())
    assert "".join(out)


FRAGMENTS = st.sampled_from(
    [
        " ",
        "\n",
        "word",
        "x",
        "=",
        ":",
        '"',
        "@",
        "https://",
        "token",
        "password",
        "Authorization",
        "Bearer ",
        "sk-ant-",
        "abcdefgh12345678",
        "hunter2",
        "pass phrase",
        " with spaces",
    ]
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(FRAGMENTS, max_size=30).map(lambda parts: "".join(parts) + "\n"),
    st.lists(st.integers(min_value=0, max_value=400), max_size=6),
)
def test_any_split_publishes_the_whole_text_redaction(text: str, cuts: list[int]) -> None:
    points = sorted({min(c, len(text)) for c in cuts})
    deltas = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
    out = _run(deltas)
    assert out == redact_text(text, VALUES)
    for secret in SECRETS:
        assert secret not in out
