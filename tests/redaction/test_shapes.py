"""The credential shape table: every shape is found alone, in any surrounding text, split across
stream deltas at any points; PEM blocks (also streamed); no over-redaction of ordinary text."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import shape_tokens
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from baton.redaction import (
    PRIVATE_KEY_MARKER,
    REDACTED,
    UNRESOLVED_SECRET_MARKER,
    StreamRedactor,
    redact_json,
    redact_text,
)
from baton.redaction.shapes import ALPHABETS, SHAPES, Shape


def _stream(deltas: list[str]) -> str:
    redactor = StreamRedactor(None)
    return "".join(redactor.feed(d) for d in deltas) + redactor.finish()


def _split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts})
    pieces, last = [], 0
    for point in points:
        pieces.append(text[last:point])
        last = point
    pieces.append(text[last:])
    return pieces


def test_the_table_covers_the_providers_the_issue_names() -> None:
    prefixes = {shape.prefix for shape in SHAPES}
    required = {
        "AKIA", "ASIA", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "gldt-",
        "glrt-", "glptt-", "GR1348941", "xoxb-", "xoxa-", "xoxp-", "xoxr-", "xoxs-", "xapp-",
        "hooks.slack.com/", "sk_live_", "rk_live_", "sk_test_", "pk_live_", "whsec_", "sk-",
        "sk-proj-", "sk-svcacct-", "sk-ant-", "AIza", "ya29.", "npm_", "pypi-AgEIcHlwaS5vcmc",
        "dckr_pat_", "hf_", "SK", "AC", "SG.", "key-", "shpat_", "shpss_", "shpca_", "shppa_",
        "ATATT3", "dop_v1_", "doo_v1_", "HRKU-", "lin_api_", "PMAK-", "dapi", "dp.pt.", "glc_",
        "glsa_", "NRAK-", "hvs.", "hvb.", "AGE-SECRET-KEY-1",
    }  # fmt: skip
    assert required <= prefixes, sorted(required - prefixes)
    assert len(SHAPES) >= 100


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.name)
def test_every_shape_is_redacted_whole(shape: Shape) -> None:
    token = shape_tokens.token(shape)
    for text in (token, f"key is {token}.", f'{{"v": "{token}"}}', f"({token})", f"\n{token}\n"):
        out = redact_text(text)
        assert token not in out and token[len(shape.prefix) :][:8] not in out, (text, out)
        assert REDACTED in out
        assert redact_text(out) == out  # idempotent
    # Longer than the least length: the whole run goes, no tail is left behind.
    if not shape.exact:
        long = shape_tokens.token(shape, extra=40)
        assert redact_text(f"x {long} y") == f"x {REDACTED} y"


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.name)
def test_a_token_one_character_short_of_its_shape_is_kept(shape: Shape) -> None:
    short = shape_tokens.token(shape)[: len(shape.prefix) + shape.min_body - 1]
    assert redact_text(f"say {short} now") == f"say {short} now"


@pytest.mark.parametrize("shape", [s for s in SHAPES if s.boundary], ids=lambda s: s.name)
def test_short_prefixes_need_a_word_boundary(shape: Shape) -> None:
    token = shape_tokens.token(shape)
    assert redact_text(f"x{token}") == f"x{token}"
    assert redact_text(f"-{token}") == f"-{REDACTED}"


_SEPARATORS = st.sampled_from([" ", "\n", "\t", '"', "'", "(", ")", ",", ";", "<", ">"])
_SURROUNDING = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40
)


@st.composite
def _planted(draw: st.DrawFn) -> tuple[Shape, str, str]:
    shape = draw(st.sampled_from(SHAPES))
    size = shape.min_body if shape.exact else draw(st.integers(shape.min_body, shape.min_body + 30))
    body = draw(st.text(alphabet=shape.body.chars, min_size=size, max_size=size))
    token = shape.prefix + body
    text = draw(_SURROUNDING) + draw(_SEPARATORS) + token + draw(_SEPARATORS) + draw(_SURROUNDING)
    return shape, token, text


@settings(max_examples=600, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(_planted(), st.lists(st.integers(min_value=0), max_size=12))
def test_a_generated_token_never_survives_text_streams_or_json(
    planted: tuple[Shape, str, str], cuts: list[int]
) -> None:
    _shape, token, text = planted
    assert token not in redact_text(text)
    assert token not in str(redact_json({"content": [{"text": text}], "title": text}))
    streamed = _stream(_split(text, cuts))
    assert token not in streamed
    assert streamed == redact_text(text)


@pytest.mark.parametrize("planted", shape_tokens.CONTEXT_TOKENS)
def test_context_shapes_lose_their_secret_part(planted: str) -> None:
    secret = next(v for v in shape_tokens.OTHER_SECRETS.values() if v in planted)
    for text in (planted, f"x {planted}.", f'"{planted}"'):
        out = redact_text(text)
        assert secret not in out and secret[:10] not in out and REDACTED in out
        assert redact_text(out) == out
    for cut in range(1, len(planted)):
        assert secret not in _stream(["got ", planted[:cut], planted[cut:], " ok"])


# --- PEM private-key blocks ----------------------------------------------------------------

KINDS = ["RSA ", "EC ", "DSA ", "OPENSSH ", "ENCRYPTED ", ""]


@pytest.mark.parametrize("kind", KINDS)
def test_a_private_key_block_becomes_one_marker(kind: str) -> None:
    block = shape_tokens.PEM.replace("RSA ", kind)
    out = redact_text(f"here:\n{block}\nthat was it")
    assert out == f"here:\n{PRIVATE_KEY_MARKER}\nthat was it"
    assert redact_text(out) == out


def test_pgp_ssh2_and_json_escaped_blocks() -> None:
    body = "\n".join(shape_tokens.PEM_BODY)
    pgp = f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{body}\n-----END PGP PRIVATE KEY BLOCK-----"
    ssh2 = f"---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\n{body}\n---- END SSH2 ENCRYPTED PRIVATE KEY ----"
    escaped = shape_tokens.PEM.replace("\n", "\\n")
    for block in (pgp, ssh2, escaped):
        assert redact_text(f"a {block} b") == f"a {PRIVATE_KEY_MARKER} b"
    # A service-account JSON: the private_key field goes whole.
    account = {"type": "service_account", "private_key": shape_tokens.PEM, "client_id": "123"}
    assert redact_json(account)["private_key"] == REDACTED


def test_an_unterminated_block_is_redacted_to_the_end() -> None:
    text = "key:\n-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(shape_tokens.PEM_BODY)
    assert redact_text(text) == f"key:\n{PRIVATE_KEY_MARKER}"


def test_a_text_that_starts_inside_a_block_loses_the_body_before_its_end_line() -> None:
    # A bounded tail (stderr, a window) whose BEGIN line was cut off.
    body = "\n".join(shape_tokens.PEM_BODY)
    for head in (body[7:], body[40:]):
        text = f"{head}\n-----END RSA PRIVATE KEY-----\nexit 1"
        assert redact_text(text) == f"{PRIVATE_KEY_MARKER}\nexit 1"
    text = f"reading key\n{body}\n-----END PRIVATE KEY-----"
    assert redact_text(text) == f"reading key\n{PRIVATE_KEY_MARKER}"
    # A mention of an END line is not a key.
    for text in ("the file ends with -----END PRIVATE KEY-----.", "-----END RSA PRIVATE KEY-----"):
        assert redact_text(text) == text


def test_public_material_is_kept() -> None:
    for text in (
        "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
        "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----",
        "BEGIN TRANSACTION; COMMIT",
    ):
        assert redact_text(text) == text


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=0), max_size=40), st.sampled_from(KINDS))
def test_a_private_key_split_over_many_deltas_never_leaks(cuts: list[int], kind: str) -> None:
    block = shape_tokens.PEM.replace("RSA ", kind)
    text = f"Here is the key you asked for:\n{block}\nkeep it safe."
    redactor = StreamRedactor(None)
    published = ""
    for delta in _split(text, cuts):
        published += redactor.feed(delta)
        for line in shape_tokens.PEM_BODY:
            assert line[:16] not in published  # no body line is out before the END line
    published += redactor.finish()
    assert published == f"Here is the key you asked for:\n{PRIVATE_KEY_MARKER}\nkeep it safe."


def test_a_streamed_block_without_end_becomes_a_marker_at_finish() -> None:
    redactor = StreamRedactor(None)
    out = redactor.feed("key:\n-----BEGIN RSA ")
    out += redactor.feed("PRIVATE KEY-----\n")
    for line in shape_tokens.PEM_BODY:
        out += redactor.feed(line + "\n")
    assert "MII" not in out
    out += redactor.finish()
    assert out == f"key:\n{PRIVATE_KEY_MARKER}"


def test_a_block_longer_than_the_carry_bound_is_masked_not_published() -> None:
    redactor = StreamRedactor(None, max_carry=256)
    out = redactor.feed("-----BEGIN PRIVATE KEY-----\n")
    for _ in range(20):
        out += redactor.feed(shape_tokens.PEM_BODY[0] + "\n")
    out += redactor.feed("-----END PRIVATE KEY-----\nbye ")
    out += redactor.finish()
    assert "MII" not in out and out.endswith("bye ")
    assert out.startswith(PRIVATE_KEY_MARKER)  # the mask says what it hides


# --- what is not a credential --------------------------------------------------------------

# ("Bearer" and "Basic" are left out: a long word after them is redacted, as documented.)
VOCABULARY = [
    "Permission", "denied", "passwd", "token", "tokens", "secret", "secrets", "key", "keys",
    "task", "monkey", "ACE", "Skip", "hf", "sk", "AC", "dapi", "ghp", "xoxb", "BEGIN", "END",
    "PRIVATE", "KEY", "auth", "the", "a", "of", "EACCES", "(EACCES)",
    "/etc/passwd:", "/home/me/.ssh/id_rsa:", "No", "such", "file", "git", "commit", "-m",
    "README.md", "src/baton/cli/main.py", "line", "42", "OK.", "done,", "tests", "passed",
]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=30),
    st.lists(st.sampled_from([" ", "\n", ", "]), min_size=30, max_size=30),
    st.lists(st.integers(min_value=0), max_size=8),
)
def test_ordinary_text_is_not_redacted(words: list[str], gaps: list[str], cuts: list[int]) -> None:
    text = "".join(word + gap for word, gap in zip(words, gaps, strict=False))
    assert redact_text(text) == text
    assert _stream(_split(text, cuts)) == text


def test_a_path_before_a_colon_is_not_a_credential_key() -> None:
    # `baton run --agent-command /etc/passwd` said "[REDACTED] denied (EACCES)".
    message = "cannot start /etc/passwd: Permission denied (EACCES)"
    assert redact_text(message) == message
    assert redact_text("path/password=hunter2hunter2") == f"path/password={REDACTED}"
    assert redact_text("passwd: hunter2hunter2") == f"passwd: {REDACTED}"


def test_a_short_prefix_cut_short_at_the_end_of_a_stream() -> None:
    assert _stream(["it was ", "ACE"]) == "it was ACE"  # a word, not a Twilio sid
    assert _stream(["sid ", "AC0123456789"]) == f"sid {UNRESOLVED_SECRET_MARKER}"
    assert _stream(["token ", "glpat-abc"]) == f"token {UNRESOLVED_SECRET_MARKER}"


def test_alphabets_match_their_regex() -> None:
    for alphabet in ALPHABETS:
        pattern = re.compile(alphabet.regex)
        assert all(pattern.fullmatch(c) for c in alphabet.chars)
        assert not any(pattern.fullmatch(c) for c in " \n\"';,()<>[]{}")


def test_the_docs_list_every_shape() -> None:
    docs = (Path(__file__).parents[2] / "docs" / "redaction.md").read_text()
    missing = [s.name for s in SHAPES if f"| {s.name} | `{s.prefix}` |" not in docs]
    assert missing == []
