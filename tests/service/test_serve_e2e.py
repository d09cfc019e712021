"""`baton serve` as a user runs it: a real subprocess on a loopback port, spoken to over
HTTP (auth matrix, event streams, permissions, concurrency, signals, recovery)."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from baton.service.runtime_file import find_service

AGENT = f"{sys.executable} -m baton.agents.scripted"
#: Seconds the fixture waits for the service's runtime file (a loaded machine starts Python
#: slowly); not an assertion on speed.
START_WAIT_SECONDS = 60.0


@dataclass
class Served:
    """A running `baton serve` and a client for it."""

    process: subprocess.Popen[str]
    url: str
    token: str
    data_dir: Path
    cwd: Path

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers=self.auth, timeout=60)

    def start(self, prompt: str, **fields: Any) -> str:
        body = {"prompt": prompt, "agentCommand": AGENT, "cwd": str(self.cwd), **fields}
        with self.client() as client:
            answer = client.post("/api/v1/runs", json=body)
        assert answer.status_code == 202, answer.text
        run_id: str = answer.json()["runId"]
        return run_id

    def events(self, run_id: str, last: str | None = None) -> list[dict[str, Any]]:
        headers = {} if last is None else {"Last-Event-ID": last}
        with self.client() as client:
            answer = client.get(f"/api/v1/runs/{run_id}/events", headers=headers)
        assert answer.status_code == 200
        return sse_events(answer.text)

    def show(self, run_id: str) -> dict[str, Any]:
        with self.client() as client:
            view: dict[str, Any] = client.get(f"/api/v1/runs/{run_id}").json()
        return view


def sse_events(text: str) -> list[dict[str, Any]]:
    found = []
    for block in text.split("\n\n"):
        fields: dict[str, Any] = {"id": None, "event": None, "data": None}
        for line in block.splitlines():
            if line and not line.startswith(":"):
                name, _, value = line.partition(": ")
                fields[name] = value
        if fields["data"] is not None:
            fields["data"] = orjson.loads(fields["data"])
            found.append(fields)
    return found


def launch(tmp_path: Path, *extra: str, allow_agent_command: bool = True) -> Served:
    data_dir = tmp_path / "data"
    cwd = tmp_path / "work"
    cwd.mkdir(exist_ok=True)
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "BATON_HOME": str(data_dir),
        "BATON_AUTOSTART": "0",
    }
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "baton.cli.main",
            "serve",
            *(["--allow-agent-command"] if allow_agent_command else []),
            *extra,
        ],
        cwd=str(cwd),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + START_WAIT_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"baton serve exited: {process.stderr.read()}")  # type: ignore[union-attr]
        info = find_service(data_dir) if data_dir.exists() else None
        if info is not None and info.pid == process.pid:
            return Served(process, info.url, info.token, data_dir, cwd)
        time.sleep(0.05)
    process.kill()
    raise AssertionError("baton serve did not publish its runtime file")


def stop(served: Served, signum: int = signal.SIGTERM) -> int:
    if served.process.poll() is None:
        served.process.send_signal(signum)
    try:
        return served.process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        served.process.kill()
        raise


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    running = launch(tmp_path)
    try:
        yield running
    finally:
        stop(running)


def wait_for(check: Any, what: str) -> Any:
    for _ in range(1500):
        value = check()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"never: {what}")


def test_the_runtime_file_is_owner_only_and_names_this_process(served: Served) -> None:
    path = served.data_dir / "serve.json"
    assert path.stat().st_mode & 0o777 == 0o600
    assert orjson.loads(path.read_bytes())["pid"] == served.process.pid
    assert served.url.startswith("http://127.0.0.1:")
    assert len(served.token) >= 43  # 256 bits, URL-safe base64


def test_the_auth_matrix_over_a_real_socket(served: Served) -> None:
    with httpx.Client(base_url=served.url, timeout=30) as anonymous:
        assert anonymous.get("/api/v1/runs").status_code == 401
        wrong = anonymous.get("/api/v1/runs", headers={"Authorization": "Bearer " + "x" * 43})
        assert wrong.status_code == 401
        host = anonymous.get("/api/v1/runs", headers={**served.auth, "Host": "attacker.example:80"})
        assert host.status_code == 421
        origin = anonymous.post(
            "/api/v1/runs",
            json={"prompt": "echo hi", "agentCommand": AGENT},
            headers={**served.auth, "Origin": "http://attacker.example"},
        )
        assert origin.status_code == 403
        assert anonymous.get(f"/api/v1?token={served.token}").status_code == 401
        issued = httpx.post(f"{served.url}/api/v1/login-codes", headers=served.auth).json()
        exchanged = anonymous.get(f"/api/v1?token={issued['code']}")
        assert exchanged.status_code == 303
        assert "HttpOnly" in exchanged.headers["set-cookie"]
        assert "SameSite=Strict" in exchanged.headers["set-cookie"]
        # The client's jar now holds the cookie: reads work, writes still need the Origin.
        assert anonymous.get("/api/v1").status_code == 200
        assert anonymous.post("/api/v1/runs", json={"prompt": "x"}).status_code == 403
        with_origin = anonymous.post(
            "/api/v1/runs", json={"prompt": "x"}, headers={"Origin": served.url}
        )
        assert with_origin.status_code == 400  # past the guard: the body lacks an agent


def test_an_event_stream_resumes_with_last_event_id(served: Served) -> None:
    run_id = served.start("echo one; slow 0.3; echo two; slow 0.3; echo three")
    seen: list[dict[str, Any]] = []
    with (
        served.client() as client,
        client.stream("GET", f"/api/v1/runs/{run_id}/events") as stream,
    ):
        buffer = ""
        for chunk in stream.iter_text():
            buffer += chunk
            seen = sse_events(buffer.rsplit("\n\n", 1)[0])
            if any(e["event"] == "text" for e in seen):
                break  # hang up after the first text
    last = seen[-1]["id"]
    rest = served.events(run_id, last=last)
    assert rest[-1]["event"] == "result"
    ids = [int(e["id"]) for e in seen + rest]
    assert ids == list(range(1, len(ids) + 1))  # nothing lost, nothing twice
    text = "".join(e["data"]["text"] for e in seen + rest if e["event"] == "text")
    assert text == "onetwothree"


def test_a_slow_consumer_is_dropped_and_the_turn_goes_on(tmp_path: Path) -> None:
    # 1 MiB of lag allowed; the turn streams about 5 MB of text (400,000 updates, within the
    # journal's per-server budget), far more than the slow client's socket and queue hold.
    served = launch(tmp_path, "--sse-queue-bytes", "1048576")
    try:
        run_id = served.start("slow 0.5; stream 400000")
        host, port = served.url.removeprefix("http://").split(":")
        slow = socket.socket()
        slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        slow.connect((host, int(port)))
        slow.sendall(
            f"GET /api/v1/runs/{run_id}/events HTTP/1.1\r\nHost: {host}:{port}\r\n"
            f"Authorization: Bearer {served.token}\r\n\r\n".encode()
        )
        # A reader that keeps up gets everything, while the slow one reads nothing.
        events = served.events(run_id)
        assert events[-1]["event"] == "result"
        assert events[-1]["data"]["status"] == "COMPLETED"
        assert "dropped" not in [e["event"] for e in events]
        slow.settimeout(30)
        received = b""
        while True:
            chunk = slow.recv(65536)
            if not chunk:
                break
            received += chunk
        slow.close()
        assert b"event: dropped" in received
        assert b"event: result" not in received
    finally:
        stop(served)


def test_a_permission_answered_through_the_api_reaches_the_agent(served: Served) -> None:
    run_id = served.start("write a.txt hello")
    with served.client() as client:
        pending = wait_for(
            lambda: client.get(f"/api/v1/permissions?runId={run_id}").json()["permissions"],
            "a pending permission",
        )
        [request] = pending
        assert client.post(
            f"/api/v1/permissions/{request['id']}/answer", json={"optionId": "allow"}
        ).is_success
        again = client.post(
            f"/api/v1/permissions/{request['id']}/answer", json={"optionId": "allow"}
        )
        assert again.status_code == 409
    events = served.events(run_id)
    assert events[-1]["data"]["status"] == "COMPLETED"
    assert (served.cwd / "a.txt").read_text() == "hello"
    with served.client() as client:
        records = client.get(f"/api/v1/runs/{run_id}/journal?limit=500").json()["records"]
    # Baton's answer, as written to the agent, and the agent's report of what it received.
    assert any(r["direction"] == "outbound" and '"optionId":"allow"' in r["raw"] for r in records)
    assert any(
        r["direction"] == "inbound" and '"outcome":"allowed"' in r["raw"] for r in records
    ) or any(r["direction"] == "inbound" and "tool_call_update" in r["raw"] for r in records)


def test_twenty_concurrent_runs_share_one_lane(served: Served) -> None:
    with ThreadPoolExecutor(20) as pool:
        run_ids = list(pool.map(lambda i: served.start(f"echo run {i}; slow 0.2"), range(20)))
        streams = list(pool.map(served.events, run_ids))
    results = [events[-1]["data"] for events in streams]
    assert all(r["status"] == "COMPLETED" for r in results), results
    servers = {served.show(run_id)["serverInstanceId"] for run_id in run_ids}
    assert len(servers) == 1  # one agent process carried all twenty sessions
    sessions = {r["sessionId"] for r in results}
    assert len(sessions) == 20


def test_sigterm_lets_a_short_turn_finish_and_interrupts_a_long_one(tmp_path: Path) -> None:
    served = launch(tmp_path, "--shutdown-grace", "1")
    short = served.start("slow 0.3; echo finished")
    long = served.start("wait_for_cancel 50")
    wait_for(lambda: served.show(long)["status"] == "RUNNING", "the long run to be running")
    assert stop(served) == 0
    assert not (served.data_dir / "serve.json").exists()
    relaunched = launch(tmp_path)
    try:
        assert relaunched.show(short)["status"] == "COMPLETED"
        assert relaunched.show(long)["status"] == "INTERRUPTED"
    finally:
        stop(relaunched)


def test_sigkill_then_restart_leaves_the_run_recoverable(tmp_path: Path) -> None:
    served = launch(tmp_path)
    run_id = served.start("ignore_cancel 50")
    wait_for(lambda: served.show(run_id)["status"] == "RUNNING", "the run to be running")
    stop(served, signal.SIGKILL)
    assert (served.data_dir / "serve.json").exists()  # left behind ...
    assert find_service(served.data_dir) is None  # ... but nobody holds the lock
    relaunched = launch(tmp_path)
    try:
        with relaunched.client() as client:
            recovery = client.get("/api/v1/recovery").json()["runs"]
            assert [r["id"] for r in recovery] == [run_id]
            marked = client.post(f"/api/v1/recovery/{run_id}/fail")
            assert marked.status_code == 200 and marked.json()["status"] == "FAILED"
    finally:
        stop(relaunched)


def test_one_service_per_data_directory_and_loopback_only(served: Served, tmp_path: Path) -> None:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "BATON_HOME": str(served.data_dir),
        "BATON_AUTOSTART": "0",
    }
    second = subprocess.run(
        [sys.executable, "-m", "baton.cli.main", "serve"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert second.returncode == 2
    assert "SERVICE_ALREADY_RUNNING" in second.stderr
    assert str(served.process.pid) in second.stderr
    assert "Traceback" not in second.stderr
    remote = subprocess.run(
        [sys.executable, "-m", "baton.cli.main", "serve", "--host", "0.0.0.0"],
        env={**env, "BATON_HOME": str(tmp_path / "other")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert remote.returncode == 2
    assert "SERVE_ADDRESS_NOT_LOOPBACK" in remote.stderr
    assert not (tmp_path / "other").exists()  # refused before anything was created


def test_runs_and_show_read_the_same_through_the_service_and_in_process(
    served: Served, tmp_path: Path
) -> None:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "BATON_HOME": str(served.data_dir),
        "BATON_AUTOSTART": "0",
    }

    def baton(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "baton.cli.main", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            cwd=str(served.cwd),
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    first = served.start("echo through the service")
    # A permission nobody answers within the turn's budget: an interaction to show.
    second = served.start("write x.txt hi", timeout=1.0)
    served.events(first)
    served.events(second)
    for args in (["runs", "--json"], ["runs"], ["show", second, "--json"], ["show", first[:10]]):
        assert baton(*args) == baton(*args, "--no-server"), args
    assert find_service(served.data_dir) is not None  # the plain commands went through it
    assert [orjson.loads(line)["id"] for line in baton("runs", "--json").splitlines()] == [
        second,
        first,
    ]


def test_run_session_through_the_service_prints_the_in_process_events(
    served: Served, tmp_path: Path
) -> None:
    agent = f"{AGENT} --state-dir {tmp_path / 'state'}"
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "BATON_HOME": str(served.data_dir),
        "BATON_AUTOSTART": "0",
    }

    def baton(*args: str) -> list[dict[str, Any]]:
        done = subprocess.run(
            [sys.executable, "-m", "baton.cli.main", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            cwd=str(served.cwd),
        )
        assert done.returncode == 0, done.stderr
        return [orjson.loads(line) for line in done.stdout.splitlines()]

    with served.client() as client:
        made = client.post(
            "/api/v1/sessions",
            json={"name": "remote", "agentCommand": agent, "cwd": str(served.cwd)},
        )
        assert made.status_code == 201, made.text
    baton("session", "new", "local", "--agent-command", agent, "--json")
    prompt = "echo hello; plan a|b; usage 7 100; echo bye"
    remote = baton("run", "--session", "remote", "--json", prompt)
    local = baton("run", "--session", "local", "--json", "--no-server", prompt)
    volatile = {"runId", "sessionId", "providerSessionId", "durationMs", "revision", "nextStep"}
    volatile |= {"session"}  # the two sessions' names, checked below

    def shape(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        kept = []
        for event in events:
            data = {k: v for k, v in event.items() if k not in volatile}
            if event["type"] == "session":
                data = {"type": "session"}  # attached here vs resumed: the ids differ
            if event["type"] == "run_started":
                data.pop("command", None)
            kept.append(data)
        return kept

    assert shape(remote) == shape(local)
    assert remote[-1]["session"] == "remote" and remote[-1]["text"] == "hellobye"
    with served.client() as client:
        history = client.get("/api/v1/sessions/remote/history").json()["turns"]
    assert [t["runId"] for t in history] == [remote[-1]["runId"]]  # the service ran it


def test_the_cli_creates_and_runs_a_command_session_where_http_clients_are_refused(
    tmp_path: Path,
) -> None:
    served = launch(tmp_path, allow_agent_command=False)
    try:
        # The bundled agent with its default state directory (under this test's HOME).
        agent = f"{AGENT}"
        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(tmp_path),
            "BATON_HOME": str(served.data_dir),
            "BATON_AUTOSTART": "0",
        }

        def baton(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [sys.executable, "-m", "baton.cli.main", *args],
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
                cwd=str(served.cwd),
            )

        made = baton("session", "new", "demo1", "--agent-command", agent)
        assert made.returncode == 0, made.stderr
        for word in ("one", "two"):
            done = baton("run", "--session", "demo1", f"echo {word}")
            assert done.returncode == 0, done.stderr
            assert done.stdout.strip() == word
        with served.client() as client:
            history = client.get("/api/v1/sessions/demo1/history").json()["turns"]
            assert len(history) == 2  # both turns ran in the service
            body = {"name": "web", "agentCommand": agent, "cwd": str(served.cwd)}
            refused = client.post("/api/v1/sessions", json=body)
            assert refused.status_code == 400, refused.text
            assert "agentCommand is refused" in refused.text
            wrong = client.post(
                "/api/v1/sessions", json=body, headers={"X-Baton-Launch-Key": "x" * 43}
            )
            assert wrong.status_code == 400
            run = client.post("/api/v1/runs", json={"prompt": "echo hi", **body})
            assert run.status_code == 400
        key = orjson.loads((served.data_dir / "serve.json").read_bytes())["launchKey"]
        assert key and key != served.token
    finally:
        stop(served)
    printed = served.process.stdout.read() + served.process.stderr.read()  # type: ignore[union-attr]
    assert key not in printed  # never printed, unlike the token


def test_a_stale_control_revision_is_refused(served: Served) -> None:
    with served.client() as client:
        made = client.post(
            "/api/v1/sessions", json={"name": "ctl", "agentCommand": AGENT, "cwd": str(served.cwd)}
        )
        assert made.status_code == 201, made.text
        controls = client.get("/api/v1/sessions/ctl/controls").json()
        control = next(c for c in controls["controls"] if c["mutable"] and c["type"] == "SELECT")
        other = next(ch["value"] for ch in control["choices"] if ch["value"] != control["value"])
        body = {"controlId": control["id"], "value": other, "revision": controls["revision"]}
        assert client.post("/api/v1/sessions/ctl/controls", json=body).status_code == 200
        stale = client.post("/api/v1/sessions/ctl/controls", json=body)  # the old revision
        assert stale.status_code == 409
        assert stale.json()["error"]["code"] == "CONTROL_REVISION_STALE"


def test_twenty_concurrent_sessions_share_one_lane(served: Served) -> None:
    names = [f"s{i}" for i in range(20)]

    def create_and_prompt(name: str) -> str:
        with served.client() as client:
            made = client.post(
                "/api/v1/sessions",
                json={"name": name, "agentCommand": AGENT, "cwd": str(served.cwd)},
            )
            assert made.status_code == 201, made.text
            answer = client.post(
                f"/api/v1/sessions/{name}/prompt", json={"prompt": f"echo {name}; slow 0.2"}
            )
            assert answer.status_code == 202, answer.text
            run_id: str = answer.json()["runId"]
            return run_id

    with ThreadPoolExecutor(20) as pool:
        run_ids = list(pool.map(create_and_prompt, names))
        streams = list(pool.map(served.events, run_ids))
    assert all(events[-1]["data"]["status"] == "COMPLETED" for events in streams)
    texts = ["".join(e["data"]["text"] for e in s if e["event"] == "text") for s in streams]
    assert texts == names
    servers = {served.show(run_id)["serverInstanceId"] for run_id in run_ids}
    assert len(servers) == 1  # one agent process carried all twenty sessions


def test_session_new_and_close_go_through_the_service(served: Served, tmp_path: Path) -> None:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "BATON_HOME": str(served.data_dir),
        "BATON_AUTOSTART": "0",
    }

    def baton(*args: str) -> dict[str, Any]:
        done = subprocess.run(
            [sys.executable, "-m", "baton.cli.main", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            cwd=str(served.cwd),
        )
        assert done.returncode == 0, done.stderr
        answer: dict[str, Any] = orjson.loads(done.stdout)
        return answer

    made = baton("session", "new", "warm", "--agent-command", AGENT, "--json")
    assert made["name"] == "warm" and made["status"] == "IDLE" and made["turns"] == 0
    with served.client() as client:
        shown = client.get("/api/v1/sessions/warm").json()
    assert shown["attachedHere"] is True  # its provider session lives in the service
    closed = baton("session", "close", "warm", "--json")
    assert closed["status"] == "CLOSED"
    assert "session/close" in closed["note"]  # closed where it was attached


def test_serve_refuses_a_store_that_is_not_a_postgresql_url(tmp_path: Path) -> None:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "BATON_HOME": str(tmp_path / "d"),
        "BATON_AUTOSTART": "0",
    }
    refused = subprocess.run(
        [sys.executable, "-m", "baton.cli.main", "serve", "--store", "sqlite:///tmp/x.db"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 2
    assert "STORE_URL_INVALID" in refused.stderr and "Traceback" not in refused.stderr
    assert not (tmp_path / "d").exists()  # refused before anything was created


def test_serve_status_and_stop_from_another_process(tmp_path: Path) -> None:
    served = launch(tmp_path)
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "BATON_HOME": str(served.data_dir),
        "BATON_AUTOSTART": "0",
    }

    def serve(*flags: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "baton.cli.main", "serve", *flags],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    try:
        running = serve("--status")
        assert running.returncode == 0, running.stderr
        assert f"running: pid {served.process.pid}, {served.url}" in running.stdout
        as_json = orjson.loads(serve("--status", "--json").stdout)
        assert (as_json["running"], as_json["pid"]) == (True, served.process.pid)
        stopped = serve("--stop")
        assert stopped.returncode == 0, stopped.stderr
        assert f"stopped the service (pid {served.process.pid})" in stopped.stdout
        assert served.process.wait(timeout=60) == 0  # its own graceful stop
        gone = serve("--status")
        assert gone.returncode == 1 and "no service runs on" in gone.stdout
        assert serve("--stop").returncode == 0  # nothing to stop is not an error
        assert serve("--status", "--stop").returncode == 2  # one or the other
    finally:
        stop(served)
