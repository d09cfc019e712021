"""An agent that dies at start can be diagnosed: its exit status or signal, its last redacted
stderr lines and a next step, in `baton run`, `baton show` and their JSON."""

from __future__ import annotations

from pathlib import Path

from .helpers import AGENT, baton, json_lines, last_run

DIES = "sh -c 'echo starting >&2; echo fatal: missing API key >&2; exit 3'"


def test_the_run_says_how_the_agent_ended_and_what_it_said(tmp_path: Path) -> None:
    done = baton(tmp_path, "run", "--agent-command", DIES, "hi")
    assert done.returncode == 1
    assert "exited with status 3" in done.stderr
    assert "fatal: missing API key" in done.stderr
    assert "next:" in done.stderr and "-v" in done.stderr


def test_json_and_show_carry_the_same_diagnostic(tmp_path: Path) -> None:
    done = baton(tmp_path, "run", "--agent-command", DIES, "--json", "hi")
    result = json_lines(done.stdout)[-1]
    assert "exited with status 3" in result["message"]
    assert "fatal: missing API key" in result["message"]
    assert result["nextStep"]
    run_id = result["runId"]
    shown = baton(tmp_path, "show", run_id)
    assert "exited with status 3" in shown.stdout and "fatal: missing API key" in shown.stdout
    view = json_lines(baton(tmp_path, "show", run_id, "--json").stdout)[0]
    assert "fatal: missing API key" in view["diagnostic"]


def test_a_signal_is_named(tmp_path: Path) -> None:
    done = baton(tmp_path, "run", "--agent-command", "sh -c 'kill -9 $$'", "hi")
    assert "killed by SIGKILL" in done.stderr


def test_stderr_of_the_dead_agent_is_redacted(tmp_path: Path) -> None:
    leaky = "sh -c 'echo token=$MY_AGENT_KEY >&2; exit 4'"
    secret = "sk-live-0123456789abcdefghij"
    done = baton(
        tmp_path,
        "run",
        "--agent-command",
        leaky,
        "--env",
        "MY_AGENT_KEY",
        "hi",
        MY_AGENT_KEY=secret,
    )
    assert "exited with status 4" in done.stderr
    assert secret not in done.stderr
    assert secret not in str(last_run(tmp_path))


def test_a_launch_failure_keeps_its_reason_readable(tmp_path: Path) -> None:
    target = tmp_path / "passwd"
    target.write_text("not a program\n")
    target.chmod(0o644)
    done = baton(tmp_path, "run", "--agent-command", str(target), "hi")
    assert done.returncode == 5
    assert "permission denied (EACCES)" in done.stderr, done.stderr


def test_verbose_streams_the_agents_redacted_stderr(tmp_path: Path) -> None:
    secret = "sk-live-abcdefghij0123456789"
    agent = f"sh -c 'echo hello from stderr $MY_AGENT_KEY >&2; exec {AGENT}'"
    done = baton(
        tmp_path,
        "run",
        "-v",
        "--agent-command",
        agent,
        "--env",
        "MY_AGENT_KEY",
        "slow 0.5; echo hi",
        MY_AGENT_KEY=secret,
    )
    assert done.returncode == 0, done.stderr
    assert "agent: hello from stderr" in done.stderr
    assert secret not in done.stderr
    quiet = baton(tmp_path, "run", "--agent-command", agent, "slow 0.5; echo hi")
    assert "hello from stderr" not in quiet.stderr
