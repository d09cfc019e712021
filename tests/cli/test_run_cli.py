"""`baton run` as a command: JSON events, exit codes, errors with stable codes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

AGENT = f"{sys.executable} -m baton.agents.scripted"


def baton(tmp_path: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "baton.cli.main", *args],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=60,
        cwd=str(tmp_path),
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "BATON_HOME": str(tmp_path / "d")},
    )


def test_json_events_end_with_the_result(tmp_path: Path) -> None:
    done = baton(tmp_path, "run", "--agent-command", AGENT, "--format", "json", "echo hi; stream 2")
    assert done.returncode == 0, done.stderr
    events = [orjson.loads(line) for line in done.stdout.splitlines()]
    assert events[0]["type"] == "run_started"
    result = events[-1]
    assert result["type"] == "result"
    assert (result["status"], result["stopReason"], result["exitCode"]) == (
        "COMPLETED",
        "end_turn",
        0,
    )
    assert "".join(e["text"] for e in events if e["type"] == "text") == "hichunk 1\nchunk 2\n"
    assert all(e["runId"] == result["runId"] for e in events)


def test_the_prompt_can_come_from_stdin(tmp_path: Path) -> None:
    done = baton(tmp_path, "run", "--agent-command", AGENT, "-", stdin="echo from stdin")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "from stdin\n"  # the reply line is ended before the summary
    assert "end_turn" in done.stderr and "run run-" in done.stderr


@pytest.mark.parametrize(
    ("prompt", "extra", "code", "error"),
    [
        ("stop refusal", [], 1, "STOP_REFUSAL"),
        ("wait_for_cancel 0", ["--idle-timeout", "0.4"], 3, "BUDGET_EXPIRED"),
        ("crash 9", [], 6, "AGENT_MUTATION_AMBIGUOUS"),
    ],
)
def test_exit_codes(tmp_path: Path, prompt: str, extra: list[str], code: int, error: str) -> None:
    done = baton(tmp_path, "run", "--agent-command", AGENT, *extra, prompt)
    assert done.returncode == code, done.stderr
    assert error in done.stderr


def test_authentication_required_is_exit_4_naming_the_methods(tmp_path: Path) -> None:
    done = baton(tmp_path, "run", "--agent-command", f"{AGENT} --auth-required new", "echo hi")
    assert done.returncode == 4
    assert "AUTHENTICATION_REQUIRED" in done.stderr


def test_usage_errors_are_exit_2_with_a_stable_code(tmp_path: Path) -> None:
    done = baton(tmp_path, "run", "--agent-command", AGENT, "--policy", "full", "echo hi")
    assert done.returncode == 2
    assert "POLICY_NOT_AVAILABLE" in done.stderr and "--allow-unattended" in done.stderr
    done = baton(tmp_path, "run", "--agent-command", AGENT, "--config", "novalue", "echo hi")
    assert done.returncode == 2
    done = baton(tmp_path, "run", "--agent-command", "/nonexistent/agent", "echo hi")
    assert done.returncode in (2, 5)


def test_a_restricted_workspace_is_refused_not_downgraded(tmp_path: Path) -> None:
    done = baton(tmp_path, "run", "--agent-command", AGENT, "--network", "disabled", "echo hi")
    assert done.returncode == 2
    assert "EXECUTION_SETTING_UNSUPPORTED" in done.stderr


def test_an_uninstalled_profile_is_exit_5(tmp_path: Path) -> None:
    done = baton(tmp_path, "run", "--agent", "gemini", "echo hi")
    assert done.returncode == 5
    assert "AGENT_NOT_INSTALLED" in done.stderr


def test_runs_and_show_report_the_run(tmp_path: Path) -> None:
    done = baton(tmp_path, "run", "--agent-command", AGENT, "--format", "json", "garbage 2; echo x")
    run_id = orjson.loads(done.stdout.splitlines()[-1])["runId"]
    listed = baton(tmp_path, "runs", "--json")
    [record] = [orjson.loads(line) for line in listed.stdout.splitlines()]
    assert record["id"] == run_id and record["skippedFrames"] == 2
    shown = baton(tmp_path, "show", run_id, "--json")
    view = orjson.loads(shown.stdout)
    assert view["status"] == "COMPLETED" and view["items"][0]["kind"] == "text"
    assert baton(tmp_path, "show", "run-nope").returncode == 2


def test_the_config_files_idle_bound_ends_a_silent_agent(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    # 3 s: the bound covers setup too, and a loaded machine's Python start can take a second.
    config.write_text("[turns]\nidle_timeout = 3\n")
    done = baton(
        tmp_path, "run", "--config", str(config), "--agent-command", AGENT, "--json",
        "wait_for_cancel 0",
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    events = [orjson.loads(line) for line in done.stdout.splitlines()]
    assert events[0]["idleTimeout"] == 3 and events[0]["idleTimeoutSource"] == "config"
    assert (events[-1]["errorCode"], events[-1]["bound"]) == ("BUDGET_EXPIRED", "idle")


def test_idle_timeout_off_is_passed_as_off(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[turns]\nidle_timeout = 900\n")
    done = baton(
        tmp_path, "run", "--config", str(config), "--agent-command", AGENT, "--json",
        "--idle-timeout", "off", "echo hi",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    first = orjson.loads(done.stdout.splitlines()[0])
    assert (first["idleTimeout"], first["idleTimeoutSource"]) == (None, "run")


def test_an_invalid_idle_bound_in_the_config_file_is_exit_2(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[turns]\nidle_timeout = -3\n")
    done = baton(tmp_path, "run", "--config", str(config), "--agent-command", AGENT, "echo hi")
    assert done.returncode == 2
    assert "CONFIG_FILE_INVALID" in done.stderr and "CONFIG_INVALID_VALUE" in done.stderr
