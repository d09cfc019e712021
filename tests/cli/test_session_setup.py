"""`baton run --add-dir` and `--system-prompt` / `--append-system-prompt` (issue 20): sent on
session setup only when the agent advertises them, refused locally (naming the capability)
otherwise; bad values refused before anything starts; the setup kept on the session record."""

from __future__ import annotations

import json
from pathlib import Path

from .helpers import AGENT, baton, json_lines

DIRS = "--cap sessionCapabilities.additionalDirectories={}"
APPEND_ONLY = "--cap sessionCapabilities.systemPrompt={}"
OVERRIDE = "--cap sessionCapabilities.systemPrompt.mode.override={}"


def _result(tmp_path: Path, *args: str) -> tuple[dict[str, object], str]:
    done = baton(tmp_path, "run", "--format", "json", *args)
    result = json_lines(done.stdout)[-1]
    return result, str(result.get("text") or "")


def test_add_dir_when_advertised(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "work").mkdir()
    result, text = _result(
        tmp_path, "--agent-command", f"{AGENT} {DIRS}", "--cwd", "work", "--add-dir", "lib", "setup"
    )
    assert result["status"] == "COMPLETED", result
    assert json.loads(text) == {"additionalDirectories": [str(tmp_path / "lib")]}
    shown = baton(tmp_path, "show", str(result["runId"]), "--json")
    observations = json_lines(shown.stdout)[0]["observations"]
    setups = [o["payload"]["sessionSetup"] for o in observations if "sessionSetup" in o["payload"]]
    assert setups == [{"additionalDirectories": [str(tmp_path / "lib")]}]


def test_add_dir_refused_when_not_advertised(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "work").mkdir()
    result, _ = _result(
        tmp_path, "--agent-command", AGENT, "--cwd", "work", "--add-dir", "lib", "setup"
    )
    assert result["errorCode"] == "CAPABILITY_NOT_ADVERTISED"
    assert "sessionCapabilities.additionalDirectories" in str(result["message"])
    assert result["exitCode"] == 2


def test_a_bad_add_dir_starts_nothing(tmp_path: Path) -> None:
    done = baton(tmp_path, "run", "--agent-command", AGENT, "--add-dir", "missing", "echo hi")
    assert done.returncode == 2
    assert "ADD_DIR_INVALID" in done.stderr and "missing" in done.stderr
    assert "Traceback" not in done.stderr


def test_system_prompts_by_mode(tmp_path: Path) -> None:
    (tmp_path / "rules.md").write_text("Be brief.")
    result, text = _result(
        tmp_path,
        "--agent-command",
        f"{AGENT} {APPEND_ONLY}",
        "--append-system-prompt",
        "@rules.md",
        "setup",
    )
    assert result["status"] == "COMPLETED", result
    assert json.loads(text) == {"systemPrompt": {"chars": 9, "mode": "append"}}
    refused, _ = _result(
        tmp_path,
        "--agent-command",
        f"{AGENT} {APPEND_ONLY}",
        "--system-prompt",
        "Only this.",
        "setup",
    )
    assert refused["errorCode"] == "CAPABILITY_NOT_ADVERTISED"
    assert "sessionCapabilities.systemPrompt.mode.override" in str(refused["message"])
    result, text = _result(
        tmp_path, "--agent-command", f"{AGENT} {OVERRIDE}", "--system-prompt", "Only this.", "setup"
    )
    assert json.loads(text) == {"systemPrompt": {"chars": 10, "mode": "override"}}
    bare, _ = _result(tmp_path, "--agent-command", AGENT, "--append-system-prompt", "x", "setup")
    assert bare["errorCode"] == "CAPABILITY_NOT_ADVERTISED"
    assert "sessionCapabilities.systemPrompt" in str(bare["message"])


def test_system_prompt_flags_refused_early(tmp_path: Path) -> None:
    both = baton(
        tmp_path,
        "run",
        "--agent-command",
        AGENT,
        "--system-prompt",
        "a",
        "--append-system-prompt",
        "b",
        "echo",
    )
    assert both.returncode == 2 and "not allowed with" in both.stderr
    missing = baton(
        tmp_path, "run", "--agent-command", AGENT, "--system-prompt", "@nope.md", "echo"
    )
    assert missing.returncode == 2 and "@nope.md" in missing.stderr
    empty = baton(tmp_path, "run", "--agent-command", AGENT, "--append-system-prompt", " ", "echo")
    assert empty.returncode == 2 and "INVALID_ARGUMENT" in empty.stderr
    for done in (both, missing, empty):
        assert "Traceback" not in done.stderr


def test_system_prompts_under_v2(tmp_path: Path) -> None:
    # The v2 draft advertises system prompts as session.systemPrompt (unstable, v1's shape), as
    # claude-agent-acp 0.101.0 and codex-acp 2.6.0 do under --protocol auto.
    v2 = ("--protocol", "2")
    result, text = _result(
        tmp_path,
        *v2,
        "--agent-command",
        f"{AGENT} --protocol 2 {APPEND_ONLY}",
        "--append-system-prompt",
        "Be brief.",
        "setup",
    )
    assert result["status"] == "COMPLETED", result
    assert json.loads(text) == {"systemPrompt": {"chars": 9, "mode": "append"}}
    refused, _ = _result(
        tmp_path,
        *v2,
        "--agent-command",
        f"{AGENT} --protocol 2 {APPEND_ONLY}",
        "--system-prompt",
        "Only this.",
        "setup",
    )
    assert refused["errorCode"] == "CAPABILITY_NOT_ADVERTISED"
    result, text = _result(
        tmp_path,
        *v2,
        "--agent-command",
        f"{AGENT} --protocol 2 {OVERRIDE}",
        "--system-prompt",
        "Only this.",
        "setup",
    )
    assert json.loads(text) == {"systemPrompt": {"chars": 10, "mode": "override"}}
    bare, _ = _result(
        tmp_path,
        *v2,
        "--agent-command",
        f"{AGENT} --protocol 2",
        "--append-system-prompt",
        "x",
        "setup",
    )
    assert bare["errorCode"] == "CAPABILITY_NOT_ADVERTISED"
