"""Text redaction: every rule, what it must leave alone, idempotence, and linear cost."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from baton.redaction import REDACTED, SecretValues, redact_text

R = REDACTED

REDACTS = [
    # Bearer and Basic tokens.
    ("use Bearer abcdefghijklmnop now", f"use Bearer {R} now"),
    ("bearer eyJabc.def-ghi_jkl", f"bearer {R}"),
    ("Basic dXNlcjpwYXNzd29yZA==", f"Basic {R}"),
    # Headers: the value runs to the end of the line.
    ("Authorization: Bearer abc def\nnext", f"Authorization: {R}\nnext"),
    ("proxy-authorization: Digest x y z", f"proxy-authorization: {R}"),
    ("Cookie: session=abc; theme=dark\r\n", f"Cookie: {R}\r\n"),
    ("set-cookie: id=a3fWa; Secure", f"set-cookie: {R}"),
    # ...or of the quoted string the header opens.
    ('["Authorization: token abc", "Accept: */*"]', f'["Authorization: {R}", "Accept: */*"]'),
    # key=value and key: value credentials.
    ("api_key=abc123&user=bob", f"api_key={R}&user=bob"),
    ("token: abc123, next", f"token: {R}, next"),
    ("secret = s3cr3t", f"secret = {R}"),
    ("password=hunter2", f"password={R}"),
    ("export OPENAI_API_KEY=sk-live", f"export OPENAI_API_KEY={R}"),
    ("--password=p4ss --verbose", f"--password={R} --verbose"),
    ("client_secret='a b c'", f"client_secret='{R}'"),
    # JSON-ish text.
    ('{"api_key": "abc def", "n": 1}', f'{{"api_key": "{R}", "n": 1}}'),
    ('{"password":"p\\"w"}', f'{{"password":"{R}"}}'),
    ('{\\"token\\": \\"abc\\"}', f'{{\\"token\\": \\"{R}\\"}}'),
    ('{"refresh_token": 12345}', f'{{"refresh_token": {R}}}'),
    # URL userinfo.
    ("clone https://bob:pa55@github.com/x.git", f"clone https://{R}@github.com/x.git"),
    ("ssh://ghp_token@host/repo", f"ssh://{R}@host/repo"),
    ("postgres://u:p@w@db:5432/x", f"postgres://{R}@db:5432/x"),
    # Well-known shapes.
    ("key sk-abcdefghijklmnopqrstuvwx end", f"key {R} end"),
    ("sk-ant-api03-AbCdEfGhIjKlMnOp-QrStUv", R),
    ("sk-proj-AbCdEfGh12345678", R),
    ("ghp_" + "A1b2" * 9, R),
    ("gho_" + "x" * 36, R),
    ("ghu_" + "x" * 36, R),
    ("ghs_" + "x" * 36, R),
    ("ghr_" + "x" * 36, R),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnop", R),
    ("AIzaSyA-1234567890abcdefghijklmnopqrstu", R),
    ("AKIAIOSFODNN7EXAMPLE", R),
    ("ASIAIOSFODNN7EXAMPLE", R),
    ("xoxb-123456789012-abcdefghij", R),
    ("xoxp-123456789012-abcdefghij", R),
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N", f"jwt {R}"),
]


@pytest.mark.parametrize(("text", "expected"), REDACTS)
def test_rule_redacts(text: str, expected: str) -> None:
    assert redact_text(text) == expected


KEEPS = [
    "plain prose with no secrets at all",
    "Basic Authentication is a scheme",
    "the bearer of bad news",
    "task-abcdefghijklmnopqrstuvwxyz",  # "sk-" inside a word is no key
    "sk-learn",
    "ghp_short",
    "AKIAIOSFODNN7EXAMPLEANDMORE",  # not an access-key id: too long
    "https://github.com/org/repo",
    "https://host:8080/path?q=1",
    "sessionId: sess_123, toolCallId: call_1",
    "std::string and 10:30 and a=b",
    "maxTokens=4096 inputTokens: 12",
    "authMethods: [codex-api-key]",
    f"password={R}",
    f"Authorization: {R}",
    f"https://{R}@host",
]


@pytest.mark.parametrize("text", KEEPS)
def test_rule_keeps(text: str) -> None:
    assert redact_text(text) == text


def test_exact_secrets_come_first_so_no_rule_splits_them() -> None:
    secret = "u:p4ss-w0rd@h"  # would otherwise be cut by the userinfo rule
    values = SecretValues([secret])
    assert redact_text(f"see https://{secret}ost/x", values) == f"see https://{R}ost/x"


def test_exact_secret_anywhere_in_text() -> None:
    values = SecretValues(["correct-horse-battery"])
    assert redact_text("the value correct-horse-battery!", values) == f"the value {R}!"


def test_secret_plus_extra_value_characters_are_all_redacted() -> None:
    values = SecretValues(["prefix-secret-1"])
    assert redact_text("password=prefix-secret-1xyz", values) == f"password={R}"


VOCABULARY = st.sampled_from(
    [
        " ",
        "\n",
        "a",
        "word",
        "=",
        ":",
        '"',
        "'",
        "\\",
        "@",
        "://",
        "https",
        "token",
        "password",
        "Authorization",
        "Bearer",
        "Basic",
        "sk-",
        "ant-",
        "abcdefgh12345678",
        "ghp_",
        "AKIA",
        "eyJ",
        ".",
        "-",
        "[REDACTED]",
        "hunter2hunter2",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(VOCABULARY, max_size=40).map("".join))
def test_redaction_is_idempotent(text: str) -> None:
    values = SecretValues(["hunter2hunter2"])
    once = redact_text(text, values)
    assert redact_text(once, values) == once
    assert "hunter2hunter2" not in once


ADVERSARIAL = {
    "colons": "a:" * (1 << 19),
    "equals": "=" * (1 << 20),
    "keys": ("k" * 63 + "=") * (1 << 14),
    "long key": "x" * (1 << 20) + "=1",
    "dotted": "a." * (1 << 19),
    "jwt runs": "eyJa-" * (1 << 18),
    "sk runs": "sk-" * (1 << 18),
    "url no at": "a://" + "b" * (1 << 20),
    "url many at": "x://" + "@" * (1 << 20),
    "bearers": "Bearer " * (1 << 17),
    "quoted keys": '"token": "' * (1 << 16),
    "escaped quotes": '{\\"password\\": \\"' + "\\a" * (1 << 19),
    "spaces": "a" + " " * (1 << 20) + "=",
    "unterminated quote": 'password="' + "x" * (1 << 20),
    "header": "Authorization:" + " x" * (1 << 19),
}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_adversarial_megabyte_inputs_finish(name: str) -> None:
    # No timing assertion: a catastrophic pattern would hang here until the suite timeout.
    text = ADVERSARIAL[name]
    out = redact_text(text, SecretValues(["aaaaaaaaaaaa", "eyJa-eyJa-"]))
    assert isinstance(out, str)
