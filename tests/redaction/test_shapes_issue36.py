"""The credential formats issue 36 lists (taken from gitleaks' published rule set as facts):
each is in the table, and a sample of each, as long as the format says, is redacted whole."""

from __future__ import annotations

import random

import pytest

from baton.redaction import redact_text
from baton.redaction.shapes import SHAPES

LOWER_DIGITS = "abcdefghijklmnopqrstuvwxyz0123456789"
ALNUM = LOWER_DIGITS + "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
HEX = "0123456789abcdef"
BASE64 = ALNUM + "+/"


def _run(chars: str, length: int, seed: str) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(chars) for _ in range(length))


#: One sample per listed format, built the way the format is specified (prefix, alphabet,
#: length), independently of Baton's table.
SAMPLES = {
    "bedrock long-lived": "ABSK" + _run(BASE64, 132, "absk") + "==",
    "bedrock short-lived": "bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t" + _run(BASE64, 200, "b"),
    "alibaba": "LTAI" + _run(ALNUM, 20, "ltai"),
    "artifactory": "AKCp" + _run(ALNUM, 69, "akcp"),
    "rubygems": "rubygems_" + _run(HEX, 48, "rg"),
    "clojars": "CLOJARS_" + _run(LOWER_DIGITS, 60, "cj"),
    "brevo": "xkeysib-" + _run(HEX, 64, "xk") + "-" + _run(ALNUM, 16, "xk2"),
    "grafana legacy": "eyJrIjoi" + _run(ALNUM, 90, "gf"),
    "readme": "rdme_" + _run(LOWER_DIGITS, 70, "rdme"),
    "planetscale oauth": "pscale_oauth_" + _run(ALNUM + "_.-", 48, "ps"),
    "shippo": "shippo_live_" + _run(HEX, 40, "sh"),
    "shippo test": "shippo_test_" + _run(HEX, 40, "sht"),
    "duffel": "duffel_live_" + _run(ALNUM + "_-", 43, "df"),
    "duffel test": "duffel_test_" + _run(ALNUM + "_-", 43, "dft"),
    "flutterwave secret": "FLWSECK_TEST-" + _run("abcdefgh0123456789", 32, "fw") + "-X",
    "flutterwave encryption": "FLWSECK_TEST-" + _run("abcdefgh0123456789", 12, "fwe"),
    "flutterwave public": "FLWPUBK_TEST-" + _run("abcdefgh0123456789", 32, "fwp") + "-X",
    "settlemint application": "sm_aat_" + _run(ALNUM, 16, "aat"),
    "settlemint personal": "sm_pat_" + _run(ALNUM, 16, "pat"),
    "settlemint service": "sm_sat_" + _run(ALNUM, 16, "sat"),
    "frame.io": "fio-u-" + _run(ALNUM + "-_=", 64, "fio"),
    "adobe": "p8e-" + _run(ALNUM, 32, "p8e"),
    "gitlab session": "_gitlab_session=" + _run(LOWER_DIGITS, 32, "gl"),
}


def test_every_listed_prefix_is_in_the_table() -> None:
    prefixes = {shape.prefix for shape in SHAPES}
    listed = {
        "ABSK", "bedrock-api-key-", "LTAI", "AKCp", "rubygems_", "CLOJARS_", "xkeysib-",
        "eyJrIjoi", "rdme_", "pscale_oauth_", "shippo_live_", "shippo_test_", "duffel_live_",
        "duffel_test_", "FLWSECK_TEST-", "FLWPUBK_TEST-", "sm_aat_", "sm_pat_", "sm_sat_",
        "fio-u-", "p8e-", "_gitlab_session=",
    }  # fmt: skip
    assert listed <= prefixes, sorted(listed - prefixes)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_a_sample_of_every_listed_format_is_redacted_whole(name: str) -> None:
    sample = SAMPLES[name]
    secret_part = sample.split("=", 1)[1] if name == "gitlab session" else sample
    for text in (sample, f"here: {sample} (done)", f'{{"k": "{sample}"}}', f"x\n{sample}\n"):
        out = redact_text(text)
        assert secret_part not in out and secret_part[-12:] not in out, (name, out)


def test_the_bedrock_variable_is_a_credential_name() -> None:
    value = _run(ALNUM, 24, "v")
    for text in (f"AWS_BEARER_TOKEN_BEDROCK={value}", f'"AWS_BEARER_TOKEN_BEDROCK": "{value}"'):
        assert value not in redact_text(text)


def test_words_that_only_look_like_a_prefix_stay() -> None:
    prose = "ALTAIR LTAI shippo_live_ is short, sm_pat_x and p8e-1 and fio-u-z stay"
    assert redact_text(prose) == prose
