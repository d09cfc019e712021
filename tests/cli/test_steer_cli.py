"""`baton steer SESSION TEXT` (issue 29) without a service: the text cannot reach a running
turn from this process, so Baton says so and runs it as the session's next turn."""

from __future__ import annotations

from pathlib import Path

from tests.cli.helpers import AGENT, baton


def test_without_a_service_the_text_is_queued_as_the_next_turn(tmp_path: Path) -> None:
    state = tmp_path / "agent-state"
    state.mkdir()
    command = " ".join([AGENT, "--state-dir", str(state), "--steering"])
    created = baton(tmp_path, "session", "new", "work", "--agent-command", command)
    assert created.returncode == 0, created.stderr
    done = baton(tmp_path, "steer", "work", "echo steered later")
    assert done.returncode == 0, done.stderr
    assert "not steered (no `baton serve` runs for this data directory" in done.stderr
    assert "queued as the next turn of work" in done.stderr
    assert "steered later" in done.stdout  # it ran as the next turn
    missing = baton(tmp_path, "steer", "nobody", "hi")
    assert missing.returncode != 0 and "SESSION_NOT_FOUND" in missing.stderr


def test_run_session_steer_is_the_same_verb(tmp_path: Path) -> None:
    state = tmp_path / "agent-state"
    state.mkdir()
    command = " ".join([AGENT, "--state-dir", str(state)])
    assert baton(tmp_path, "session", "new", "w2", "--agent-command", command).returncode == 0
    done = baton(tmp_path, "run", "--session", "w2", "--steer", "echo via run")
    assert done.returncode == 0, done.stderr
    assert "queued as the next turn of w2" in done.stderr and "via run" in done.stdout
    alone = baton(tmp_path, "run", "--agent-command", command, "--steer", "hi")
    assert alone.returncode == 2 and "--steer needs --session" in alone.stderr
