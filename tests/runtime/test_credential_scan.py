"""The scan test, end to end: real turns whose prompts, environment and agent output carry 20
planted credentials; afterwards no file under the data directory contains any of them."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from baton.runtime.runtime import RunRequest, Runtime

AGENT = [sys.executable, "-m", "baton.agents.scripted"]

OPENAI = "sk-proj-" + "Zx81Qw72Er63Ty54Ui45Op36As27Df18Gh09Jk"
ANTHROPIC = "sk-ant-api03-" + "Lm0Nb9Vc8Xz7Lk6Jh5Gf4Ds3Ap2Qo1Iu0Yt9Re8Wq7"
GITHUB_PAT = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
GITHUB_OAUTH = "gho_" + "Q9w8E7r6T5y4U3i2O1p0A9s8D7f6G5h4J3k2"
GOOGLE = "AIza" + "SyB3kX9-vQ2mL7nP4rT8wZ1cF6hJ0dG5sA_"
AWS = "AKIA" + "QX7RZ2M4N6P8T3V5"
JWT = (
    "eyJhbGciOiJIUzI1NiJ9"
    + "."
    + "eyJzdWIiOiJiYXRvbi10ZXN0In0"
    + "."
    + "c2lnbmF0dXJlLXBsYW50ZWQtZm9yLXRlc3Rz"
)
BEARER = "tkn9Fq2Lx7Pv4Rm8Zs1Wd6Hy3Ja5Kc0Eb"
BASIC = "ZGVwbG95OmhvcnNlLWJhdHRlcnktOTk4Mg=="
KV_API_KEY = "kv4Tz8Rw2Qm6Lp0Xn3Vb7Hc1Jd5Fs9Ga"
KV_PASSWORD = "pw3Gh7Jk1Lz5Xc9Vb2Nm6Qw0Er4Ty8Ui"
URL_PASSWORD = "url8Pq3Wx7Zr1Tk5Mn9Lb2Vc6Hd0Js4Fa"
COOKIE = "ck5Rt9Yu3Io7Pa1Sd5Fg9Hj3Kl7Zx1Cv"
AUTH_TOKEN = "hdr7Mz2Qk9Lw4Rx8Ns3Bv6Ct1Yj5Pu0Ge"
# Exact values of the agent's environment (passed with --env): no shape gives them away.
ENV_A = "correct-horse-battery-staple-4242"
ENV_B = "zebra-quantum-7781-lantern-mosaic"
ENV_C = "lighthouse-orbit-5523-velvet-anchor"
ENV_D = "marble-sprocket-9034-quiet-harbor"
ENV_E = "copper-meadow-2287-silent-falcon"
SPLIT = "split-secret-Ty6Ui0Op4As8Df2Gh6Jk0"

PLANTED = [
    OPENAI, ANTHROPIC, GITHUB_PAT, GITHUB_OAUTH, GOOGLE, AWS, JWT, BEARER, BASIC, KV_API_KEY,
    KV_PASSWORD, URL_PASSWORD, COOKIE, AUTH_TOKEN, ENV_A, ENV_B, ENV_C, ENV_D, ENV_E, SPLIT,
]  # fmt: skip

ENV = {
    "SCAN_ENV_A": ENV_A,
    "SCAN_ENV_B": ENV_B,
    "SCAN_ENV_C": ENV_C,
    "SCAN_ENV_D": ENV_D,
    "SCAN_ENV_E": ENV_E,
    "SCAN_SPLIT": SPLIT,
}


def _escape(text: str) -> str:
    return text.replace(";", "\\;")


async def test_no_planted_credential_reaches_any_durable_file(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shaped = (
        f"keys {OPENAI} {ANTHROPIC} {GITHUB_PAT} {GITHUB_OAUTH} {GOOGLE} {AWS} {JWT} "
        f"Authorization: Bearer {BEARER} and Basic {BASIC} api_key={KV_API_KEY} "
        f"password={KV_PASSWORD} https://deploy:{URL_PASSWORD}@git.example.com/r.git "
        f"Cookie: sid={COOKIE} auth_token={AUTH_TOKEN}"
    )
    exact = f"{ENV_A} {ENV_B} {ENV_C} {ENV_D} {ENV_E}"
    # The split secret reaches the agent's output as two separate deltas.
    half = len(SPLIT) // 2
    script = "; ".join(
        [
            f"echo {_escape(shaped)} ",
            f"echo {_escape(exact)} ",
            f"echo {SPLIT[:half]}",
            f"echo {SPLIT[half:]} ",
            f"think {_escape(shaped)}",
            f"title {ENV_A} {OPENAI}",
            f"shell curl -H 'Authorization: Bearer {BEARER}' https://x:{URL_PASSWORD}@h/ {ENV_B}",
            f"write notes-{ENV_C}.txt {ENV_D} {ANTHROPIC}",
            "stop end_turn",
        ]
    )
    env = {**os.environ, **ENV}
    async with Runtime(data_dir=data, environ=env) as rt:
        for policy in ("ask", "full"):
            result = await rt.run(
                RunRequest(
                    prompt=script,
                    agent_command=AGENT,
                    env_keys=tuple(ENV),
                    cwd=str(tmp_path),
                    policy=policy,
                    allow_unattended=True,
                )
            )
            assert result.status == "COMPLETED", result
            assert SPLIT not in result.text
    files = [p for p in data.rglob("*") if p.is_file()]
    assert files, "the runs wrote a journal and a store"
    hits = []
    for path in files:
        content = path.read_bytes()
        for secret in PLANTED:
            if secret.encode() in content:
                hits.append((path.name, secret[:12]))
    assert hits == []
