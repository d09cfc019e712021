"""`baton session ...`, `baton sessions` and `baton run --session` as a user runs them: real
processes, one data directory, the scripted agent keeping its sessions in a state directory so
a conversation outlives each `baton` process (issue 17)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from tests.cli.helpers import AGENT, BATON, baton, env, json_lines

#: Seconds a test waits for another `baton` process to reach a state (a loaded machine's
#: Python start included); a bound on the test's patience, not an assertion on speed.
PATIENCE_SECONDS = 60.0


def agent(tmp_path: Path, *flags: str) -> str:
    state = tmp_path / "agent-state"
    state.mkdir(exist_ok=True)
    return " ".join([AGENT, "--state-dir", str(state), *flags])


def new_session(tmp_path: Path, name: str, *flags: str) -> None:
    done = baton(tmp_path, "session", "new", name, "--agent-command", agent(tmp_path, *flags))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == name


def listing(tmp_path: Path) -> dict[str, dict[str, Any]]:
    done = baton(tmp_path, "sessions", "--json")
    assert done.returncode == 0, done.stderr
    return {row["name"]: row for row in json_lines(done.stdout)}


def background(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*BATON, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        cwd=str(tmp_path),
        env=env(tmp_path),
    )


def wait_for_status(tmp_path: Path, name: str, status: str) -> dict[str, Any]:
    deadline = time.monotonic() + PATIENCE_SECONDS
    while time.monotonic() < deadline:
        row = listing(tmp_path).get(name)
        if (
            row is not None
            and row["status"] == status
            and (status != "ACTIVE" or row["activeRunId"])
        ):
            return row
        time.sleep(0.1)
    raise AssertionError(f"{name} never became {status}")


def test_a_conversation_continues_across_processes_and_closes(tmp_path: Path) -> None:
    new_session(tmp_path, "work")
    first = baton(tmp_path, "run", "--session", "work", "echo one")
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("one")
    second = baton(tmp_path, "run", "--session", "work", "echo two", "--json")
    assert second.returncode == 0, second.stderr
    events = json_lines(second.stdout)
    [session] = [e for e in events if e["type"] == "session"]
    assert session["attachedBy"] == "session/resume"  # a new process: resumed, not re-created
    result = events[-1]
    assert (result["status"], result["text"], result["session"]) == ("COMPLETED", "two", "work")

    row = listing(tmp_path)["work"]
    assert (row["status"], row["turns"], row["schemaVersion"]) == ("IDLE", 2, 1)
    assert row["capabilities"] == {
        "resume": True,
        "load": True,
        "close": True,
        "list": True,
        "fork": False,
        "forkAtTurn": False,
    }
    assert row["providerSessionId"] == result["providerSessionId"]

    show = baton(tmp_path, "session", "show", "work", "--json")
    assert show.returncode == 0, show.stderr
    [view] = json_lines(show.stdout)
    assert [r["prompt"] for r in view["runs"]] == ["echo one", "echo two"]
    history = baton(tmp_path, "session", "history", "work", "--json", "--limit", "1")
    assert [(t["prompt"], t["reply"]) for t in json_lines(history.stdout)] == [("echo two", "two")]
    text = baton(tmp_path, "session", "history", "work")
    assert "echo one" in text.stdout and "two" in text.stdout

    export = baton(tmp_path, "session", "export", "work", "--format", "md")
    assert export.returncode == 0, export.stderr
    assert "> echo one" in (tmp_path / "work.md").read_text()
    again = baton(tmp_path, "session", "export", "work", "--format", "md")
    assert again.returncode == 2 and "EXPORT_FILE_EXISTS" in again.stderr

    closed = baton(tmp_path, "session", "close", "work", "--json")
    assert closed.returncode == 0, closed.stderr
    [record] = json_lines(closed.stdout)
    assert record["status"] == "CLOSED" and "provider keeps the session" in record["note"]
    refused = baton(tmp_path, "run", "--session", "work", "echo three")
    assert refused.returncode == 2 and "SESSION_CLOSED" in refused.stderr
    assert baton(tmp_path, "session", "rm", "work").returncode == 0
    assert listing(tmp_path) == {}


def test_continue_picks_the_most_recent_session_of_this_cwd_and_agent(tmp_path: Path) -> None:
    command = agent(tmp_path)
    for name in ("older", "newer"):
        done = baton(tmp_path, "session", "new", name, "--agent-command", command)
        assert done.returncode == 0, done.stderr
    done = baton(tmp_path, "run", "--continue", "--agent-command", command, "echo hi", "--json")
    assert done.returncode == 0, done.stderr
    assert json_lines(done.stdout)[-1]["session"] == "newer"
    nothing = baton(tmp_path, "run", "--continue", "--agent", "claude", "echo hi")
    assert nothing.returncode == 2 and "SESSION_NOT_FOUND" in nothing.stderr


def test_usage_errors_name_the_rule(tmp_path: Path) -> None:
    bad = baton(tmp_path, "session", "new", "-bad", "--agent-command", agent(tmp_path))
    assert bad.returncode == 2
    bad = baton(tmp_path, "session", "new", "a/b", "--agent-command", agent(tmp_path))
    assert bad.returncode == 2 and "SESSION_NAME_INVALID" in bad.stderr
    new_session(tmp_path, "s")
    taken = baton(tmp_path, "session", "new", "s", "--agent-command", agent(tmp_path))
    assert taken.returncode == 2 and "SESSION_NAME_TAKEN" in taken.stderr
    both = baton(tmp_path, "run", "--session", "s", "--mode", "plan", "echo hi")
    assert both.returncode == 2 and "--mode is the session's own setting" in both.stderr
    missing = baton(tmp_path, "run", "--session", "nope", "echo hi", "--json")
    assert missing.returncode == 2 and "SESSION_NOT_FOUND" in missing.stderr
    assert json_lines(missing.stdout)[-1]["errorCode"] == "SESSION_NOT_FOUND"
    none = baton(tmp_path, "run", "echo hi")
    assert none.returncode == 2 and "name an agent" in none.stderr
    shown = baton(tmp_path, "session", "show", "nope")
    assert shown.returncode == 2 and "SESSION_NOT_FOUND" in shown.stderr
    assert "Traceback" not in shown.stderr + missing.stderr + none.stderr


def test_reading_verbs_on_a_missing_data_dir_create_nothing(tmp_path: Path) -> None:
    listed = baton(tmp_path, "sessions")
    assert listed.returncode == 0 and listed.stdout.strip() == "no sessions"
    shown = baton(tmp_path, "session", "show", "x")
    assert shown.returncode == 2 and "DATA_DIR_NOT_FOUND" in shown.stderr
    assert not (tmp_path / "d").exists()


def test_a_second_process_waits_its_turn_or_fails_busy_with_no_wait(tmp_path: Path) -> None:
    new_session(tmp_path, "q")
    # A turn that lasts until it is interrupted (at most 30 s): the checks below never race
    # its end, however slowly a loaded machine starts the other processes.
    first = background(tmp_path, "run", "--session", "q", "echo first; slow 30")
    patient: subprocess.Popen[str] | None = None
    try:
        wait_for_status(tmp_path, "q", "ACTIVE")
        busy = baton(tmp_path, "run", "--session", "q", "--no-wait", "echo impatient")
        assert busy.returncode == 8, busy.stderr
        assert "SESSION_BUSY" in busy.stderr
        patient = background(tmp_path, "run", "--session", "q", "echo patient")
        first.send_signal(signal.SIGINT)  # the first turn ends (interrupted) ...
        assert first.wait(timeout=PATIENCE_SECONDS) == 130
        out, err = patient.communicate(timeout=PATIENCE_SECONDS)  # ... and the waiter runs
        assert patient.returncode == 0, err
        assert out.startswith("patient")
    finally:
        for process in (first, patient):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()
    history = baton(tmp_path, "session", "history", "q", "--json")
    assert [(t["prompt"], t["status"]) for t in json_lines(history.stdout)] == [
        ("echo first; slow 30", "INTERRUPTED"),
        ("echo patient", "COMPLETED"),
    ]


@pytest.mark.slow
def test_sigkill_mid_turn_needs_recovery_then_the_next_prompt_attaches(tmp_path: Path) -> None:
    new_session(tmp_path, "k")
    victim = background(tmp_path, "run", "--session", "k", "echo started; hang")
    try:
        row = wait_for_status(tmp_path, "k", "ACTIVE")
        assert row["owner"].startswith(f"{victim.pid}:")
        deadline = time.monotonic() + PATIENCE_SECONDS
        while not _prompt_sent(tmp_path, row["activeRunId"]):
            assert time.monotonic() < deadline, "the prompt was never sent"
            time.sleep(0.1)
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait(timeout=PATIENCE_SECONDS)
    finally:
        if victim.poll() is None:
            victim.kill()
            victim.wait()
    run_id = row["activeRunId"]
    assert listing(tmp_path)["k"]["status"] == "RECOVERY_REQUIRED"
    refused = baton(tmp_path, "run", "--session", "k", "echo next")
    assert refused.returncode == 6, refused.stderr
    assert "SESSION_RECOVERY_REQUIRED" in refused.stderr and run_id in refused.stderr
    settled = baton(tmp_path, "recover", run_id, "--mark-failed")
    assert settled.returncode == 0, settled.stderr
    after = baton(tmp_path, "run", "--session", "k", "echo after", "--json")
    assert after.returncode == 0, after.stderr
    events = json_lines(after.stdout)
    assert [e["attachedBy"] for e in events if e["type"] == "session"] == ["session/resume"]
    assert events[-1]["text"] == "after"
    history = baton(tmp_path, "session", "history", "k", "--json")
    turns = json_lines(history.stdout)
    assert [(t["prompt"], t["status"]) for t in turns] == [
        ("echo started; hang", "FAILED"),
        ("echo after", "COMPLETED"),
    ]


def _prompt_sent(tmp_path: Path, run_id: str) -> bool:
    shown = baton(tmp_path, "show", run_id, "--json")
    if shown.returncode != 0:
        return False
    [view] = json_lines(shown.stdout)
    return view["status"] == "RUNNING" and view["promptRef"] is not None


def test_remote_lists_the_agents_sessions_marking_those_baton_knows(tmp_path: Path) -> None:
    new_session(tmp_path, "one")
    new_session(tmp_path, "two")
    known = {row["providerSessionId"]: name for name, row in listing(tmp_path).items()}
    done = baton(tmp_path, "sessions", "--remote", "--agent-command", agent(tmp_path), "--json")
    assert done.returncode == 0, done.stderr
    rows = json_lines(done.stdout)
    assert {row["sessionId"]: row["knownAs"] for row in rows} == known
    assert all(row["schemaVersion"] == 1 for row in rows)
    text = baton(tmp_path, "sessions", "--remote", "--agent-command", agent(tmp_path))
    assert "one" in text.stdout and "two" in text.stdout
    unlisted = agent(tmp_path, "--cap", "sessionCapabilities.list=omit")
    refused = baton(tmp_path, "sessions", "--remote", "--agent-command", unlisted)
    assert refused.returncode == 2 and "CAPABILITY_NOT_ADVERTISED" in refused.stderr
    alone = baton(tmp_path, "sessions", "--remote")
    assert alone.returncode == 2 and "--remote needs exactly one" in alone.stderr


def test_remote_delete_is_explicit_gated_and_refused_for_a_live_conversation(
    tmp_path: Path,
) -> None:
    new_session(tmp_path, "kept")
    provider_id = listing(tmp_path)["kept"]["providerSessionId"]
    held = baton(
        tmp_path,
        "sessions",
        "--remote",
        "--agent-command",
        agent(tmp_path),
        "--delete",
        provider_id,
    )
    assert held.returncode == 2 and "'kept' holds provider session" in held.stderr
    assert baton(tmp_path, "session", "rm", "kept").returncode == 0
    before = baton(tmp_path, "sessions", "--remote", "--agent-command", agent(tmp_path), "--json")
    assert provider_id in [row["sessionId"] for row in json_lines(before.stdout)]
    undeletable = agent(tmp_path, "--cap", "sessionCapabilities.delete=omit")
    refused = baton(
        tmp_path, "sessions", "--remote", "--agent-command", undeletable, "--delete", provider_id
    )
    assert refused.returncode == 2 and "CAPABILITY_NOT_ADVERTISED" in refused.stderr
    done = baton(
        tmp_path, "sessions", "--remote", "--agent-command", agent(tmp_path),
        "--delete", provider_id, "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json_lines(done.stdout) == [
        {"sessionId": provider_id, "deleted": True, "schemaVersion": 1}
    ]
    left = baton(tmp_path, "sessions", "--remote", "--agent-command", agent(tmp_path), "--json")
    assert provider_id not in [row["sessionId"] for row in json_lines(left.stdout)]
    alone = baton(tmp_path, "sessions", "--delete", provider_id)
    assert alone.returncode == 2 and "use it with --remote" in alone.stderr


def test_remote_listing_exits_like_a_run_for_sign_in_and_launch_failures(tmp_path: Path) -> None:
    # The scripted agent advertises a method and ends session/new and session/list -32000
    # until authenticate: the verb exits 4 as a signed-out run does, not a generic 1.
    signed_out = agent(tmp_path, "--auth-required", "new")
    done = baton(tmp_path, "sessions", "--remote", "--agent-command", signed_out)
    assert done.returncode == 4, done.stderr
    assert "AUTHENTICATION_REQUIRED" in done.stderr
    missing = str(tmp_path / "no-such-agent")
    gone = baton(tmp_path, "sessions", "--remote", "--agent-command", missing)
    assert gone.returncode == 5, gone.stderr
    assert "Traceback" not in gone.stderr


def test_the_bundled_agent_keeps_a_session_across_processes_by_default(tmp_path: Path) -> None:
    made = baton(tmp_path, "session", "new", "demo1", "--agent-command", AGENT)
    assert made.returncode == 0, made.stderr
    for word in ("one", "two", "three"):
        done = baton(tmp_path, "run", "--session", "demo1", f"echo {word}")
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == word


def test_an_agent_that_lost_the_session_is_not_resumable_with_the_next_step(
    tmp_path: Path,
) -> None:
    forgetful = f"{AGENT} --no-state-dir"  # sessions in memory: gone with each process
    assert baton(tmp_path, "session", "new", "lost", "--agent-command", forgetful).returncode == 0
    assert baton(tmp_path, "run", "--session", "lost", "echo one").returncode == 0
    done = baton(tmp_path, "run", "--session", "lost", "echo two")
    assert done.returncode == 2, done.stderr
    assert "SESSION_NOT_RESUMABLE: the agent no longer has provider session" in done.stderr
    assert "Next: start a new session (`baton session new NAME ...`)" in done.stderr
    as_json = baton(tmp_path, "run", "--session", "lost", "--json", "echo two")
    result = json_lines(as_json.stdout)[-1]
    assert (result["errorCode"], result["exitCode"]) == ("SESSION_NOT_RESUMABLE", 2)
