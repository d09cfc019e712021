"""Issue 30, item 1: a turn's questions reach whoever started it, with or without a
`baton serve` on the data directory.

One scenario run both ways gives the same JSON events and the same text; over a real pty the
terminal answers a question of a turn the service runs, and the inspector/API can answer it
first (the terminal's prompt then says so); without a terminal and with nobody else following
the run the question is answered at once (no hang); with someone else following, the CLI says
what is asked, its id and the inspector's URL, and a budget that elapses meanwhile names the
person, not the agent.
"""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson
import pexpect
import pytest

from baton.service.runtime_file import find_service
from cli.helpers import AGENT, baton, env, json_lines, spawn

#: Seconds a started `baton serve` gets to publish its runtime file.
START_WAIT_SECONDS = 60.0
WRITE = "write a.txt hello"


@dataclass
class Served:
    process: subprocess.Popen[str]
    url: str
    token: str

    def client(self) -> httpx.Client:
        return httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {self.token}"}, timeout=30
        )


def _serve(tmp_path: Path) -> Served:
    data = tmp_path / "d"
    process = subprocess.Popen(
        [sys.executable, "-m", "baton.cli.main", "serve"],
        cwd=str(tmp_path),
        env=env(tmp_path),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + START_WAIT_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"baton serve exited: {process.stderr.read()}")  # type: ignore[union-attr]
        info = find_service(data) if data.exists() else None
        if info is not None and info.pid == process.pid:
            return Served(process, info.url, info.token)
        time.sleep(0.05)
    process.kill()
    raise AssertionError("baton serve did not publish its runtime file")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    running = _serve(tmp_path)
    try:
        yield running
    finally:
        running.process.terminate()
        try:
            running.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            running.process.kill()


def _new_session(tmp_path: Path, name: str) -> None:
    created = baton(tmp_path, "session", "new", name, "--agent-command", AGENT)
    assert created.returncode == 0, created.stderr


_IDS = re.compile(r"\b(run|ses|perm|elic)-[0-9a-f]+\b")
_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
#: Fields that differ between two runs of one scenario by nature (ids, clocks, how the
#: provider session was reached: a warm agent in the service is already attached).
_VARYING = frozenset(
    {"durationMs", "revision", "attachedBy", "toolCallId", "idleTimeoutSource", "command"}
)


def _normal(event: dict[str, Any]) -> dict[str, Any]:
    kept = {k: v for k, v in event.items() if k not in _VARYING}
    text = orjson.dumps(kept).decode()
    return dict(orjson.loads(_UUID.sub("UUID", _IDS.sub(r"\1-ID", text))))


def _normal_text(text: str) -> str:
    text = _IDS.sub(r"\1-ID", text)
    return re.sub(r"\d+\.\d+s", "Ns", text)


def _both_ways(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], ...]:
    """The scenario as one session's two turns: without a service, then with one."""
    _new_session(tmp_path, "same")
    alone = baton(tmp_path, "run", "--session", "same", *args)
    served = _serve(tmp_path)
    try:
        through = baton(tmp_path, "run", "--session", "same", *args)
    finally:
        served.process.terminate()
        served.process.wait(timeout=60)
    return alone, through


def test_one_scenario_gives_the_same_json_events_with_or_without_the_service(
    tmp_path: Path,
) -> None:
    alone, through = _both_ways(tmp_path, "--json", "--fail-on-denied", WRITE)
    assert alone.returncode == through.returncode == 7, (alone.stderr, through.stderr)
    first, second = json_lines(alone.stdout), json_lines(through.stdout)
    assert [e["type"] for e in first] == [e["type"] for e in second]
    for one, other in zip(first, second, strict=True):
        assert _normal(one) == _normal(other) or one["type"] == "session", (one, other)
    [permission] = [e for e in second if e["type"] == "permission"]
    assert permission["reasonCode"] == "no_user" and permission["outcome"] == "cancelled"
    assert second[-1]["permissionOutcomes"] == {"granted": 0, "denied": 0, "cancelled": 1}
    assert not (tmp_path / "a.txt").exists()


def test_one_scenario_prints_the_same_text_with_or_without_the_service(tmp_path: Path) -> None:
    alone, through = _both_ways(tmp_path, "--fail-on-denied", WRITE)
    assert alone.returncode == through.returncode == 7
    assert _normal_text(alone.stdout) == _normal_text(through.stdout)
    assert _normal_text(through.stderr) == _normal_text(alone.stderr)
    assert "permission: cancelled (no user available)" in through.stderr


def test_without_a_terminal_a_question_nobody_can_answer_does_not_hang(
    tmp_path: Path, served: Served
) -> None:
    _new_session(tmp_path, "ci")
    # baton() gives up after 120 s, far below the service's permission wait (600 s): a question
    # waited for would fail the test.
    done = baton(tmp_path, "run", "--session", "ci", "--fail-on-denied", WRITE)
    assert done.returncode == 7, done.stderr
    assert "no user available" in done.stderr
    assert "waiting" not in done.stderr and "inspector" not in done.stderr


def _expect_choice(child: pexpect.spawn) -> str:
    """Wait for the terminal's question; the number of its Allow choice."""
    child.expect(r"(\d)\) Allow\r?\n")
    number = str(child.match.group(1))
    child.expect(r"Choose 1-\d, or c to cancel")
    return number


def test_the_terminal_answers_a_question_of_a_turn_the_service_runs(
    tmp_path: Path, served: Served
) -> None:
    _new_session(tmp_path, "tty")
    child = spawn(tmp_path, "run", "--session", "tty", WRITE)
    child.expect(r"\(question perm-[0-9a-f]+: answer here, or in the inspector, http://")
    allow = _expect_choice(child)
    with served.client() as client:
        [pending] = client.get("/api/v1/permissions").json()["permissions"]
    assert pending["local"]["permitsAllow"] is True  # Baton's own check travels with it
    child.send(f"{allow}\r")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    assert (tmp_path / "a.txt").read_text() == "hello"
    assert "permission: allow (chosen by user)" in (child.before or "")


def test_the_inspector_can_answer_first_and_the_terminal_says_so(
    tmp_path: Path, served: Served
) -> None:
    _new_session(tmp_path, "both")
    child = spawn(tmp_path, "run", "--session", "both", WRITE)
    _expect_choice(child)
    with served.client() as client:
        [pending] = client.get("/api/v1/permissions").json()["permissions"]
        answered = client.post(
            f"/api/v1/permissions/{pending['id']}/answer", json={"optionId": "allow"}
        )
        assert answered.status_code == 200
    child.expect(r"answered elsewhere")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert (tmp_path / "a.txt").read_text() == "hello"


def _follow_the_running_run(served: Served, seen: list[str], stop: threading.Event) -> None:
    """An API client following the session's running run (as the inspector's run page)."""
    with served.client() as client:
        while not stop.is_set():
            runs = client.get("/api/v1/runs", params={"status": "RUNNING"}).json()["runs"]
            if runs:
                break
            time.sleep(0.05)
        else:
            return
        run_id = runs[0].get("runId") or runs[0].get("id")
        with client.stream("GET", f"/api/v1/runs/{run_id}/events", timeout=None) as stream:
            for line in stream.iter_lines():
                seen.append(line)
                if line.startswith("event: permission_request"):
                    stop.set()
                if stop.is_set() and line.startswith("event: result"):
                    return


def _answer_when_asked(served: Served, option: str | None, stop: threading.Event) -> None:
    stop.wait(120)
    if option is None:
        return
    with served.client() as client:
        for _ in range(1200):
            pending = client.get("/api/v1/permissions").json()["permissions"]
            if pending:
                client.post(
                    f"/api/v1/permissions/{pending[0]['id']}/answer", json={"optionId": option}
                )
                return
            time.sleep(0.05)


def _run_with_a_follower(
    tmp_path: Path, served: Served, option: str | None, *args: str
) -> subprocess.CompletedProcess[str]:
    seen: list[str] = []
    stop = threading.Event()
    follower = threading.Thread(target=_follow_the_running_run, args=(served, seen, stop))
    answerer = threading.Thread(target=_answer_when_asked, args=(served, option, stop))
    follower.start()
    answerer.start()
    try:
        # The pause gives the follower time to find the run before the question.
        return baton(tmp_path, "run", "--session", "seen", *args, f"slow 4; {WRITE}")
    finally:
        stop.set()
        follower.join(60)
        answerer.join(60)


def test_without_a_terminal_it_says_where_to_answer_while_someone_else_follows(
    tmp_path: Path, served: Served
) -> None:
    _new_session(tmp_path, "seen")
    done = _run_with_a_follower(tmp_path, served, "allow")
    assert done.returncode == 0, done.stderr
    said = re.search(r"question (perm-[0-9a-f]+) of run (run-[0-9a-f]+)", done.stderr)
    assert said is not None, done.stderr
    assert "asks permission (tool kind: edit" in done.stderr
    assert f"{served.url}/#/runs/{said.group(2)}" in done.stderr
    assert "permission: allow (chosen by user)" in done.stderr
    assert (tmp_path / "a.txt").read_text() == "hello"


def test_a_budget_elapsing_while_a_person_was_asked_names_that(
    tmp_path: Path, served: Served
) -> None:
    _new_session(tmp_path, "seen")
    done = _run_with_a_follower(tmp_path, served, None, "--timeout", "8")
    assert done.returncode == 3, done.stderr
    assert "while a person was asked" in done.stderr
    assert "doctor --live" not in done.stderr


def test_the_spinner_says_it_waits_for_your_answer(tmp_path: Path, served: Served) -> None:
    _new_session(tmp_path, "seen")
    seen: list[str] = []
    stop = threading.Event()
    follower = threading.Thread(target=_follow_the_running_run, args=(served, seen, stop))
    answerer = threading.Thread(target=_answer_when_asked, args=(served, "allow", stop))
    follower.start()
    # Standard input is not a terminal (nobody can answer here), standard error is one.
    child = pexpect.spawn(
        "/bin/sh",
        [
            "-c",
            f'exec {sys.executable} -m baton.cli.main run --session seen "slow 4; {WRITE}"'
            " </dev/null",
        ],
        encoding="utf-8",
        timeout=60,
        cwd=str(tmp_path),
        env=env(tmp_path),
        dimensions=(40, 200),
    )
    try:
        child.expect(r"question perm-")
        # The answer is given only once the spinner has said so: answering at once could end
        # the wait before the spinner's first frame on a loaded machine.
        child.expect(r"waiting for your answer")
        answerer.start()
        child.expect(pexpect.EOF)
    finally:
        stop.set()
        follower.join(60)
        if answerer.is_alive():
            answerer.join(60)
    child.close()
    assert child.exitstatus == 0


def test_the_terminal_fills_in_a_form_of_a_turn_the_service_runs(
    tmp_path: Path, served: Served
) -> None:
    _new_session(tmp_path, "form")
    child = spawn(tmp_path, "run", "--session", "form", "elicit form")
    child.expect("The agent asks: The scripted agent needs a few details")
    child.expect("Answer\\? y = fill in")
    child.sendline("y")
    child.expect("Project name: ")
    child.sendline("web")
    child.expect("Replicas: ")
    child.sendline("9")
    child.expect("above the maximum 5")  # the form's rules, rebuilt from the service's view
    child.expect("Replicas: ")
    child.sendline("2")
    child.expect("Region \\(number or value\\): ")
    child.sendline("1")
    child.expect("Deploy now \\[y/n\\]: ")
    child.sendline("y")
    child.expect(
        '"action":"accept","content":\\{"name":"web","replicas":2,"region":"eu","confirm":true\\}'
    )
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
