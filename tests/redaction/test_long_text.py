"""Long texts are redacted exactly like short ones: the single-character gates that ``redact_text``
puts before its hint scans from ``_LONG_TEXT_CHARS`` on never skip a rule that applies."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from baton.redaction import REDACTED, SecretValues, redact_text
from baton.redaction import text as text_module
from baton.redaction.text import _HINT_CHARS

LONG = text_module._LONG_TEXT_CHARS

#: Credentials (and credential-shaped text) every case of which a rule must redact.
SAMPLES = [
    "use Bearer abcdefghijklmnop now",
    "BEARER abcdefghijklmnop",
    "BeArEr abcdefghijklmnop",
    "bearer eyJabc.def-ghi_jkl",
    "Basic dXNlcjpwYXNzd29yZA==",
    "BASIC dXNlcjpwYXNzd29yZA==",
    "bAsIc UGw0bnRlZDpiYXNpYy1wYXNzd29yZA==",
    "curl -H 'Authorization: Bearer Pl4ntedOpaqueBearer0123456789' https://x",
    "key sk-abcdefghijklmnopqrstuvwx end",
    "sk-Pl4ntedOpenAiKey0123456789abcdefghijklmnopq",
    "sk-ant-api03-AbCdEfGhIjKlMnOp-QrStUv",
    "anthropic sk-ant-api03-Pl4ntedAnthropic-Key_0123456789ab",
    "sk-proj-AbCdEfGh12345678",
    "ghp_" + "A1b2" * 9,
    "gho_" + "x" * 36,
    "ghs_" + "x" * 36,
    "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
    "AIzaSyA-1234567890abcdefghijklmnopqrstu",
    "AIzaSyPl4ntedGoogleKey-0123456789abcdefgh",
    "AKIAIOSFODNN7EXAMPLE",
    "aws id ASIAPL4NTEDAWSTMP012 here",
    "xoxb-123456789012-abcdefghij",
    "xoxp-000111222333-Pl4ntedSlackBot",
    "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwbDRudGVkIn0.Pl4ntedJwtSignature_x",
    "api_key=abc123&user=bob",
    "clone https://bob:pa55@github.com/x.git",
    '{"password": "hunter22"}',
]

#: Prose without one character any hint needs (no ``b``/``B``, ``-``, ``_``, ``A``, ``J``,
#: ``:``, ``=``, ``@``): in a long text, only the sample can open a gate.
PLAIN_FILLER = "lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor. "

#: Prose full of hint characters and near-misses that no rule redacts.
HINT_FILLER = (
    "Job A-list x_y a=1 b:2 Bob basic bearings, the bearer of news, eyJ AKIA sk-learn "
    "ghp_short task-abcdefghijklmnopqrstuvwxyz std::string 10:30 Basic Authentication. "
)


def pad(filler: str, size: int = LONG + 100) -> str:
    """At least ``size`` characters of ``filler``, without a newline in them."""
    return (filler * (size // len(filler) + 1))[:size]


@contextmanager
def regex_only() -> Iterator[None]:
    """``redact_text`` with the long-text gates bypassed: every text takes the hint regexes."""
    with mock.patch.object(text_module, "_LONG_TEXT_CHARS", 10**12):
        yield


def test_the_fillers_are_left_alone() -> None:
    for filler in (PLAIN_FILLER, HINT_FILLER):
        long = pad(filler)
        assert len(long) >= LONG
        assert redact_text(long) == long
        with regex_only():
            assert redact_text(long) == long
    assert not any(c in PLAIN_FILLER for c in "bB-_AJ:=@")


@pytest.mark.parametrize("sample", SAMPLES)
def test_every_sample_is_redacted_on_its_own(sample: str) -> None:
    assert REDACTED in redact_text(sample)


@pytest.mark.parametrize("filler", [PLAIN_FILLER, HINT_FILLER], ids=["plain", "hints"])
@pytest.mark.parametrize("sample", SAMPLES)
def test_a_sample_inside_a_long_text_is_redacted_like_alone(sample: str, filler: str) -> None:
    left = pad(filler) + "\n"
    right = "\n" + pad(filler)
    text = left + sample + right
    assert len(text) >= LONG and len(sample) < LONG
    assert redact_text(text) == left + redact_text(sample) + right


@pytest.mark.parametrize("filler", [PLAIN_FILLER, HINT_FILLER], ids=["plain", "hints"])
@pytest.mark.parametrize("sample", SAMPLES)
def test_a_sample_at_either_end_of_a_long_text(sample: str, filler: str) -> None:
    body = pad(filler)
    assert redact_text(sample + "\n" + body) == redact_text(sample) + "\n" + body
    assert redact_text(body + "\n" + sample) == body + "\n" + redact_text(sample)


@pytest.mark.parametrize("sample", SAMPLES)
def test_a_sample_is_redacted_at_exactly_the_long_length(sample: str) -> None:
    for size in (LONG - 1, LONG, LONG + 1):
        body = pad(PLAIN_FILLER, size - len(sample) - 1)
        text = body + "\n" + sample
        assert len(text) == size
        assert redact_text(text) == body + "\n" + redact_text(sample)


def test_every_sample_in_one_long_text() -> None:
    text = "\n".join(SAMPLES)
    assert len(text) < LONG
    long = "\n".join([pad(PLAIN_FILLER), text, pad(HINT_FILLER)])
    assert redact_text(long) == "\n".join([pad(PLAIN_FILLER), redact_text(text), pad(HINT_FILLER)])


def test_exact_secrets_in_a_long_text() -> None:
    secret = "Pl4nted-Exact-Secret-Value-0123"
    secrets = SecretValues([secret])
    body = pad(PLAIN_FILLER)
    text = f"{body}\nthe value is {secret} and Bearer abcdefghijklmnop\n{body}"
    redacted = redact_text(text, secrets)
    assert secret not in redacted
    assert "abcdefghijklmnop" not in redacted
    with regex_only():
        assert redact_text(text, secrets) == redacted


# --- the property: the gates never change a result ------------------------------------------

_PIECES = [
    *SAMPLES,
    "Bearer",
    "bearer ",
    "BASIC ",
    "basic",
    "b",
    "B",
    "-",
    "_",
    "A",
    "J",
    "eyJ",
    "sk-",
    "ghp_",
    "AIza",
    "AKIA",
    "ASIA",
    "xoxb-",
    "github_pat_",
    ":",
    "=",
    "@",
    "://",
    "\n",
    " ",
    # Characters that lowering or case-insensitive matching treats specially.
    "ſ",  # long s: (?i) matches it to "s"
    "K",  # Kelvin sign
    "İ",  # lowers to "i" and a combining dot
    "ı",
    "ʙ",
    "Ｂearer abcdefghijklmnop",
    "baſic dXNlcjpwYXNzd29yZA==",
    "BEARİR abcdefghijklmnop",
]

_fragments = st.one_of(
    st.sampled_from(_PIECES),
    st.text(alphabet="bBeEaArRsSiIcC -_AJy:=@ſKİı\n", max_size=12),
    st.text(max_size=8),
)

_fillers = st.sampled_from(
    [PLAIN_FILLER, HINT_FILLER, "x" * 64, "Ab" * 32, "y" * 63 + "\n", "ſ" * 16 + " "]
)


@st.composite
def long_texts(draw: st.DrawFn) -> str:
    parts = draw(st.lists(_fragments, max_size=12))
    filler = draw(_fillers)
    size = draw(st.integers(LONG, LONG + 600))
    where = draw(st.integers(0, len(parts)))
    parts.insert(where, pad(filler, size))
    return "".join(parts)


@settings(max_examples=300, deadline=None)
@given(text=long_texts(), with_secret=st.booleans())
def test_long_texts_are_redacted_like_the_regex_scans_do(text: str, with_secret: bool) -> None:
    assert len(text) >= LONG
    secrets = SecretValues(["Pl4ntedOpaqueBearer0123456789"]) if with_secret else None
    gated = redact_text(text, secrets)
    with regex_only():
        assert redact_text(text, secrets) == gated


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=64), filler=_fillers)
def test_padding_a_random_text_to_long_changes_only_the_padding(text: str, filler: str) -> None:
    body = pad(filler).replace("\n", " ")
    assert redact_text(body) == body  # neutral padding
    long = body + "\n" + text.replace("\r", "").replace("\n", " ")
    short = text.replace("\r", "").replace("\n", " ")
    assert redact_text(long) == body + "\n" + redact_text(short)


def test_the_hint_characters_are_exactly_the_hint_class() -> None:
    from baton.redaction.text import _HINT_CHAR_RE, _HINT_CHARS

    for code in range(0x250):
        char = chr(code)
        assert (char in _HINT_CHARS) == (_HINT_CHAR_RE.fullmatch(char) is not None), repr(char)


@pytest.mark.parametrize("hint", [None, *_HINT_CHARS])
@pytest.mark.parametrize("where", ["start", "middle", "end"])
def test_long_texts_find_hint_characters_like_the_regex(hint: str | None, where: str) -> None:
    from baton.redaction.text import _HINT_CHAR_RE, _LONG_TEXT_CHARS, _has_hint_char

    filler = "chunk 0 of the flood " * (_LONG_TEXT_CHARS // 10)
    text = filler
    if hint is not None:
        index = {"start": 0, "middle": len(filler) // 2, "end": len(filler)}[where]
        text = filler[:index] + hint + filler[index:]
    assert len(text) >= _LONG_TEXT_CHARS
    assert _has_hint_char(text) == (_HINT_CHAR_RE.search(text) is not None) == (hint is not None)
