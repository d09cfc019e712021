"""Twenty planted credentials of every shape: none survives any redaction entry point.

Each credential is planted where Baton meets it (JSON fields, paired env and header entries,
URLs, headers, free text, stderr, stream deltas split across boundaries); the check looks for
the credential and for its last ten characters, so a partial leak fails too.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from baton.redaction import (
    SecretValues,
    StreamRedactor,
    redact_frame_message,
    redact_json,
    redact_text,
)

# (credential, how it appears in text). Every credential is unique and opaque.
TEXT_PLANTS: list[tuple[str, str]] = [
    ("sk-Pl4ntedOpenAiKey0123456789abcdefghijklmnopq", "OpenAI key {} in use"),
    ("sk-ant-api03-Pl4ntedAnthropic-Key_0123456789ab", "anthropic {}"),
    ("sk-proj-Pl4ntedProjectKey0123456789", "project key={}"),
    ("ghp_Pl4ntedGithubClassic0123456789abcdefg", "gh token {}"),
    ("gho_Pl4ntedGithubOauth00123456789abcdefgh", "oauth {}."),
    ("ghs_Pl4ntedGithubServer0123456789abcdefgh", "({})"),
    ("github_pat_11Pl4ntedFineGrained_0123456789abcdef", "pat: {}"),
    ("AIzaSyPl4ntedGoogleKey-0123456789abcdefgh", "google={}"),
    ("AKIAPL4NTEDAWSKEY012", "aws id {} here"),
    ("ASIAPL4NTEDAWSTMP012", "sts {}"),
    ("xoxb-000111222333-Pl4ntedSlackBot", "slack {}"),
    (
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwbDRudGVkIn0.Pl4ntedJwtSignature_x",
        "jwt {} end",
    ),
    ("Pl4ntedOpaqueBearer0123456789", "curl -H 'Authorization: Bearer {}' https://x"),
    ("Pl4ntedBearerInProse98765", "then send Bearer {} to it"),
    ("UGw0bnRlZDpiYXNpYy1wYXNzd29yZA==", "Basic {}"),
    ("Pl4nted-Url-Passw0rd", "git clone https://deploy:{}@git.example.com/r.git"),
    ("Pl4ntedCookieSession42", "Cookie: session={}; theme=dark"),
    ("Pl4ntedKeyValuePassword", "db password={} ok"),
    ("Pl4nted Json Api Key", 'config {{"api_key": "{}", "n": 1}}'),
    ("Pl4ntedExactEnvSecret-77", "the agent echoed {} back"),
]

# Values only their place marks as secret (no shape, no telling name): structural only.
ENV_VALUE = "Pl4ntedEnvValueNoShape"
HEADER_VALUE = "Pl4ntedHeaderValueNoShape"
FIELD_VALUE = "Pl4ntedFieldValueNoShape"
EMAIL = "pl4nted.person@pl4nted-mail.test"

# The exact sensitive values of the profile in use (the last text plant is only known this way).
SECRETS = SecretValues([TEXT_PLANTS[-1][0], ENV_VALUE])

ALL_CREDENTIALS = [credential for credential, _ in TEXT_PLANTS] + [
    ENV_VALUE,
    HEADER_VALUE,
    FIELD_VALUE,
    EMAIL,
]


def _assert_clean(output: str) -> None:
    for credential in ALL_CREDENTIALS:
        assert credential not in output, credential
        assert credential[-10:] not in output, credential


def _free_text() -> str:
    return "\n".join(template.format(credential) for credential, template in TEXT_PLANTS) + "\n"


def _frames() -> list[dict[str, Any]]:
    text = _free_text()
    return [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "session/new",
            "params": {
                "cwd": "/work",
                "mcpServers": [
                    {
                        "name": "db",
                        "command": "/usr/bin/db-mcp",
                        "args": [f"--url=https://admin:{TEXT_PLANTS[15][0]}@db.local"],
                        "env": [{"name": "DB_SETTING", "value": ENV_VALUE}],
                    },
                    {
                        "type": "http",
                        "name": "api",
                        "url": "https://api.example.com",
                        "headers": [{"name": "X-Custom", "value": HEADER_VALUE}],
                    },
                ],
            },
        },
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/prompt",
            "params": {"sessionId": "s-1", "prompt": [{"type": "text", "text": text}]},
        },
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": "s-1",
                "update": {
                    "sessionUpdate": "tool_call",
                    "toolCallId": "call-1",
                    "title": text,
                    "rawInput": {"command": text},
                    "rawOutput": {"stdout": text},
                    "locations": [{"path": f"/tmp/{TEXT_PLANTS[0][0]}"}],
                },
            },
        },
        {
            "jsonrpc": "2.0",
            "id": 3,
            "result": {
                "client_secret": FIELD_VALUE,
                "owner": {"email": EMAIL},
                "notes": text,
                "settings": [{"key": "access_token", "value": FIELD_VALUE}],
            },
        },
        {"jsonrpc": "2.0", "id": 4, "error": {"code": -32000, "message": text, "data": text}},
    ]


def test_nothing_survives_redact_frame_message() -> None:
    for frame in _frames():
        _assert_clean(json.dumps(redact_frame_message(frame, SECRETS), ensure_ascii=False))


def test_nothing_survives_redact_json() -> None:
    _assert_clean(json.dumps(redact_json(_frames(), SECRETS), ensure_ascii=False))


def test_nothing_survives_redact_text() -> None:
    stderr = _free_text() + f"ENV: DB_SETTING={ENV_VALUE}\n"
    _assert_clean(redact_text(stderr, SECRETS))


@pytest.mark.parametrize("seed", range(25))
def test_nothing_survives_a_stream_split_at_random_boundaries(seed: int) -> None:
    rng = random.Random(seed)
    text = _free_text()
    redactor = StreamRedactor(SECRETS)
    published: list[str] = []
    position = 0
    while position < len(text):
        size = rng.randint(1, 9)
        published.append(redactor.feed(text[position : position + size]))
        position += size
    published.append(redactor.finish())
    _assert_clean("".join(published))


@pytest.mark.parametrize(("credential", "template"), TEXT_PLANTS)
def test_nothing_survives_a_stream_split_inside_each_credential(
    credential: str, template: str
) -> None:
    text = template.format(credential) + "\n"
    start = text.index(credential)
    for i in range(start, start + len(credential) + 1):
        redactor = StreamRedactor(SECRETS)
        out = redactor.feed(text[:i]) + redactor.feed(text[i:]) + redactor.finish()
        _assert_clean(out)
