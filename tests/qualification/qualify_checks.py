"""Assertions shared by the per-adapter qualification tests."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Any, Final

from qualify_drivers import (
    EXIT_BUDGET,
    EXIT_INTERRUPTED,
    Baton,
    Outcome,
    Rig,
    executable,
    secret_files,
    store_rows,
    survivors,
)
from qualify_installs import Pin

#: How long the stdin-EOF control waits for an adapter that would exit on EOF (seconds).
EOF_CONTROL_SECONDS: Final = 3.0
#: How long the control waits for initialize to be answered before closing stdin (seconds).
INITIALIZE_WAIT_SECONDS: Final = 60.0

UUID: Final = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")

FIXTURES: Final = Path(__file__).resolve().parents[1] / "fixtures" / "adapters"


def aftermath(baton: Baton, pin: Pin) -> None:
    """After a run: the journal verifies, the key is on no file, no adapter process survives."""
    verified = baton.verify_journal()
    assert verified.returncode == 0, f"baton journal verify --all failed\n{verified.describe()}"
    leaked = secret_files(baton.rig.data, baton.rig.key)
    assert not leaked, f"the API key given to the agent is in {leaked} under {baton.rig.data}"
    alive = survivors(pin, baton.rig.home)
    assert not alive, f"adapter processes survived the command: {alive}"


def completed(outcome: Outcome, stop_reason: str = "end_turn") -> dict[str, Any]:
    """Assert exit 0 and ``stop_reason``; return the result event."""
    result = outcome.result()
    assert outcome.returncode == 0, outcome.describe()
    assert result["status"] == "COMPLETED" and result["stopReason"] == stop_reason, (
        outcome.describe()
    )
    return result


def interrupted(outcome: Outcome, exit_code: int) -> dict[str, Any]:
    """Assert an INTERRUPTED run with stopReason cancelled and ``exit_code``."""
    result = outcome.result()
    assert outcome.returncode == exit_code, outcome.describe()
    assert result["status"] == "INTERRUPTED", outcome.describe()
    assert result["stopReason"] == "cancelled", outcome.describe()
    return result


#: The mock's marker for a turn that streams ticks for 40 s (long enough that only a cancel
#: ends it within the step).
SLOW_STREAM_PROMPT: Final = "[[slow:40]]"


def ticking(event: dict[str, Any]) -> bool:
    """True once the slow turn's ticks are streaming (the moment to interrupt it)."""
    return event.get("type") == "text" and "tick" in str(event.get("text"))


def cancel_with_sigint(baton: Baton, pin: Pin) -> None:
    """SIGINT to baton mid-stream: the turn ends cancelled, exit 130, no bound named."""
    outcome = baton.run_interrupted(SLOW_STREAM_PROMPT, ticking)
    result = interrupted(outcome, EXIT_INTERRUPTED)
    assert outcome.seconds < 40, "the cancel did not end the stream"
    assert result["bound"] is None
    aftermath(baton, pin)


def cancel_with_budget(baton: Baton, pin: Pin, timeout: str) -> None:
    """A ``--timeout`` bound mid-stream: the turn ends cancelled, exit 3, the bound named."""
    outcome = baton.run(SLOW_STREAM_PROMPT, "--timeout", timeout)
    result = interrupted(outcome, EXIT_BUDGET)
    assert result["bound"] is not None and result["errorCode"] == "BUDGET_EXPIRED", (
        outcome.describe()
    )
    assert "tick" in outcome.text()
    aftermath(baton, pin)


def interactions(baton: Baton, run_id: str) -> list[dict[str, Any]]:
    """The run's permission interactions, as ``baton show RUN --json`` records them."""
    found: list[dict[str, Any]] = baton.show(run_id).get("interactions") or []
    return found


def cancelled_by_default(baton: Baton, run_id: str) -> dict[str, Any]:
    """Assert exactly one interaction, answered cancelled by Baton's default (no user)."""
    records = interactions(baton, run_id)
    assert len(records) == 1, records
    record = records[0]
    assert record["state"] == "CANCELLED", record
    assert record["chosenBy"] == "default", record
    assert record["choice"] is None, record
    return record


def allow_once_name(adapter_fixture: str) -> str:
    """The label the adapter gives its allow_once option, read from its captured transcript."""
    for path in sorted((FIXTURES / adapter_fixture).glob("transcript.*.jsonl")):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            frame = record.get("frame") or record.get("msg") or {}
            if frame.get("method") == "session/request_permission":
                for option in frame["params"]["options"]:
                    if option.get("kind") == "allow_once":
                        return str(option["name"])
    raise AssertionError(f"no captured permission request for {adapter_fixture}")


def server_states(rig: Rig) -> list[str]:
    """The states of every server instance the rig's store knows."""
    return [row["state"] for row in store_rows(rig.data, "SELECT state FROM server_instances")]


def _await_answer(process: subprocess.Popen[bytes], request_id: int) -> dict[str, Any]:
    assert process.stdout is not None
    deadline = time.monotonic() + INITIALIZE_WAIT_SECONDS
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if (
            isinstance(message, dict)
            and message.get("id") == request_id
            and "method" not in message
        ):
            return message
    raise AssertionError(f"the adapter did not answer request {request_id}")


def ignores_stdin_eof(rig: Rig, pin: Pin) -> bool:
    """The control for the stdin-EOF quirk: start the adapter directly (with the variables its
    profile would pass), answer initialize and session/new, close stdin, and report whether it
    is still running :data:`EOF_CONTROL_SECONDS` later. The group is killed either way.

    (claude-agent-acp 0.23.1 does exit on EOF before any session exists; once one does, it
    keeps running.)"""
    env = {k: v for k, v in rig.env.items() if not k.startswith("BATON_")}
    process = subprocess.Popen(
        [str(executable(pin))],
        cwd=rig.work,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    assert process.stdin is not None
    try:
        for request in (INITIALIZE, new_session(str(rig.work))):
            process.stdin.write((json.dumps(request) + "\n").encode())
            process.stdin.flush()
            _await_answer(process, int(request["id"]))  # type: ignore[call-overload]
        process.stdin.close()
        time.sleep(EOF_CONTROL_SECONDS)
        return process.poll() is None
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        survivors(pin, rig.home)


def new_session(cwd: str) -> dict[str, Any]:
    """A session/new request (id 2)."""
    return {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "session/new",
        "params": {"cwd": cwd, "mcpServers": []},
    }


INITIALIZE: Final = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": 1,
        "clientCapabilities": {
            "fs": {"readTextFile": False, "writeTextFile": False},
            "terminal": False,
        },
    },
}


def is_uuid(value: object) -> bool:
    """True for a UUID string."""
    return isinstance(value, str) and UUID.match(value) is not None


#: A word only the first turn's prompt holds: the second turn's model request must carry it
#: (the agent kept the conversation, across two `baton` processes).
CONVERSATION_TOKEN: Final = "PAPAYA-7319"


def conversation_across_processes(baton: Baton, mock: Any, pin: Pin) -> None:
    """Issue 17: `session new`, two turns of it from two `baton run --session` processes (the
    second attaches by resume or load and its model request holds the first prompt), then
    `session close` from another process (closed locally: it never starts the agent)."""
    rig = baton.rig
    where = ("--data-dir", str(rig.data))
    created = baton.command(
        "session", "new", "qual", "--agent", rig.profile, "--cwd", str(rig.work), *where, "--json"
    )
    assert created.returncode == 0, created.describe()
    [record] = created.events()
    assert record["status"] == "IDLE" and record["providerSessionId"], record
    turns = []
    for prompt in (
        f"Remember the word {CONVERSATION_TOKEN}. [[text:Noted.]]",
        "Which word was it? [[text:It was the word you gave me.]]",
    ):
        turn = baton.command("run", "--session", "qual", *where, "--format", "json", prompt)
        result = completed(turn)
        assert result["session"] == "qual", turn.describe()
        turns.append(turn)
    [session] = turns[1].of_type("session")
    assert session["attachedBy"] in ("session/resume", "session/load"), turns[1].describe()
    # The first turn ran in another process than `session new`: the adapters keep a session
    # only once prompted, so it opened a fresh one (docs/sessions.md); the second resumes it.
    first_id = turns[0].result()["providerSessionId"]
    assert session["providerSessionId"] == first_id, turns[1].describe()
    scripted = [r for r in mock.posts() if r.reply.startswith("script")]
    assert len(scripted) >= 2, [r.reply for r in mock.posts()]
    assert CONVERSATION_TOKEN in json.dumps(scripted[-1].body), "the second turn lost the first"
    history = baton.command("session", "history", "qual", *where, "--json")
    assert history.returncode == 0, history.describe()
    assert [t["status"] for t in history.events()] == ["COMPLETED", "COMPLETED"]
    closed = baton.command("session", "close", "qual", *where, "--json")
    assert closed.returncode == 0, closed.describe()
    assert closed.events()[0]["status"] == "CLOSED", closed.describe()
    aftermath(baton, pin)


def mislabelled(outcome: Outcome) -> None:
    """Assert the refusal of an agent that answered ``--protocol 2`` with 2 in the v1 layout:
    AGENT_PROTOCOL_MISLABELLED naming ``--protocol auto``, exit 5 (issue 29)."""
    result = outcome.result()
    assert result["errorCode"] == "AGENT_PROTOCOL_MISLABELLED", outcome.describe()
    assert "--protocol auto" in result["message"], outcome.describe()
    assert outcome.returncode == 5, outcome.describe()
