"""The scan test, end to end: real turns whose prompts, environment and agent output carry 20
planted credentials; afterwards no file under the data directory contains any of them."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

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


# --- every shape, through the `baton` command, both output formats ---------------------------

sys.path.insert(0, str(Path(__file__).parents[1] / "redaction"))

import shape_tokens  # noqa: E402

# Exact values Baton was given: an --env value and two MCP server env values (--tools). None
# has a shape: only the exact-match set can remove them.
CLI_ENV_VALUE = "harbor-quartz-6161-willow-ember"
TOOLS_VALUE_A = "orchid-signal-4410-tundra-maple"
TOOLS_VALUE_B = "saffron-delta-9032-granite-pine"
EXACT = {"env": CLI_ENV_VALUE, "tools-a": TOOLS_VALUE_A, "tools-b": TOOLS_VALUE_B}


def _all_hits(content: bytes) -> list[str]:
    found = shape_tokens.hits(content)
    return found + [name for name, value in EXACT.items() if value.encode() in content]


def _cli_script() -> str:
    """A scripted-agent prompt that sends every planted secret through every output kind."""
    line = f"{shape_tokens.planted_line()} {CLI_ENV_VALUE} {TOOLS_VALUE_A} {TOOLS_VALUE_B}"
    commands = [f"echo {line}\\n", f"think {line}", f"title {line}"]
    # Every shaped token split in two deltas (the cut inside its body), then the PEM block
    # over one delta per line.
    for secret in (*shape_tokens.TOKENS.values(), TOOLS_VALUE_A, CLI_ENV_VALUE):
        half = len(secret) // 2 + 1
        commands += [f"echo {secret[:half]}", f"echo {secret[half:]}\\n"]
    pem = shape_tokens.PEM.split("\n")
    commands += [f"echo {part}\\n" for part in pem]
    commands.append(f"plan {' | '.join(shape_tokens.TOKENS.values())} | {TOOLS_VALUE_B}")
    commands.append(f"shell deploy {line}")
    commands.append(f"write notes.txt {line}")
    commands.append("stop end_turn")
    return "; ".join(c.replace(";", "\\;") for c in commands)


def _wrapper(tmp_path: Path) -> Path:
    """An agent command that writes every planted secret to its stderr, then runs the scripted
    agent (or, given ``die``, exits before answering: the stderr tail then goes to the server
    record's diagnostics)."""
    script = tmp_path / "agent.sh"
    stderr_line = f"{shape_tokens.planted_line()} {TOOLS_VALUE_A} {CLI_ENV_VALUE}"
    pem = shape_tokens.PEM.replace("\n", "\\n")
    script.write_text(
        "#!/bin/sh\n"
        f"printf '%s\\n' '{stderr_line}' >&2\n"
        f"printf '%b\\n' '{pem}' >&2\n"
        'if [ "$1" = die ]; then read -r line; exit 3; fi\n'
        f'exec {sys.executable} -m baton.agents.scripted "$@"\n'
    )
    script.chmod(0o755)
    return script


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_every_shape_stays_out_of_the_data_dir_and_the_cli_output(tmp_path: Path, fmt: str) -> None:
    home = tmp_path / "home"
    work = tmp_path / "work"
    work.mkdir()
    tools = tmp_path / "tools.json"
    tools.write_text(
        orjson.dumps(
            {
                "mcpServers": [
                    {
                        "name": "search",
                        "command": sys.executable,
                        "args": ["--stdio"],
                        "env": {"SEARCH_TOKEN": TOOLS_VALUE_A, "SEARCH_INDEX": TOOLS_VALUE_B},
                    }
                ]
            }
        ).decode()
    )
    agent = _wrapper(tmp_path)
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "BATON_HOME": str(home),
        "SCAN_ENV": CLI_ENV_VALUE,
    }
    common = ["--format", fmt, "--tools", str(tools), "--env", "SCAN_ENV", "--cwd", str(work)]
    done = subprocess.run(
        [sys.executable, "-m", "baton.cli.main", "run", "--agent-command", str(agent),
         "--policy", "full", "--allow-unattended", *common, _cli_script()],
        capture_output=True, timeout=120, cwd=str(tmp_path), env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    died = subprocess.run(
        [sys.executable, "-m", "baton.cli.main", "run", "--agent-command", f"{agent} die",
         *common, f"echo {TOOLS_VALUE_A}"],
        capture_output=True, timeout=120, cwd=str(tmp_path), env=env,
    )  # fmt: skip
    assert died.returncode != 0
    # The turns really carried the secrets through every kind of output (not vacuous).
    output = done.stdout + done.stderr
    assert output.count(b"[REDACTED") >= len(shape_tokens.TOKENS)
    assert b"[REDACTED PRIVATE KEY]" in output
    with contextlib.closing(sqlite3.connect(home / "baton.sqlite3")) as db:
        tails = [row[0] or "" for row in db.execute("SELECT diagnostics FROM server_instances")]
    assert any("[REDACTED PRIVATE KEY]" in tail for tail in tails)  # the agent's stderr
    if fmt == "json":
        kinds = {orjson.loads(line)["type"] for line in done.stdout.splitlines()}
        assert {"text", "thought", "plan", "tool_call", "session_info", "permission"} <= kinds
    files = [p for p in home.rglob("*") if p.is_file()]
    assert any(p.suffix == ".ndjson" or "journal" in str(p) for p in files), files
    hits = [(p.name, name) for p in files for name in _all_hits(p.read_bytes())]
    hits += [("stdout", n) for n in _all_hits(done.stdout + died.stdout)]
    hits += [("stderr", n) for n in _all_hits(done.stderr + died.stderr)]
    assert hits == []
