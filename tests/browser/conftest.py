"""Fixtures of the browser tests (`make test-browser`): Debian's Chromium driven by Playwright.

Playwright is the Python package from PyPI; it never downloads a browser here: it launches the
Chromium that `make test-browser` installs from Debian's packages (``/usr/bin/chromium``, or
``BATON_CHROMIUM``), with the flags a closed network needs and a fresh profile per test. Every
page records console errors, page errors, dialogs and CSP violations, so a test can say that
agent text executed nothing.

These tests are excluded from plain ``make test`` (pyproject ``norecursedirs``) and run when
named: ``pytest tests/browser``.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Final

import pytest
from playwright.sync_api import BrowserContext, Page, expect, sync_playwright

from baton.inspector import ENTRY_PAGE, SECURITY_HEADERS, load_asset

#: Where Debian's package puts Chromium; BATON_CHROMIUM points elsewhere.
CHROMIUM: Final = os.environ.get("BATON_CHROMIUM", "/usr/bin/chromium")

#: The flags of every launch: headless, no sandbox (CI runs as root), and nothing that reaches
#: for the network by itself (the machine's network is closed; without these Chromium retries
#: Google's hosts at every start).
CHROMIUM_FLAGS: Final = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)

#: Bounds every Playwright wait (ms) so a broken page fails the test instead of hanging it.
PAGE_TIMEOUT_MS: Final = 30_000

HARNESS: Final = Path(__file__).parent / "harness"

#: Where the page tests save their screenshots: a temporary folder, unless
#: ``BATON_INSPECTOR_SCREENSHOTS`` names one: ``make test-browser`` points it at docs/inspector/,
#: the pictures the README shows.
SCREENSHOTS: Final = Path(
    os.environ.get("BATON_INSPECTOR_SCREENSHOTS")
    or Path(tempfile.gettempdir()) / "baton-inspector-screenshots"
)


def shot_path(name: str) -> Path:
    """The path of the screenshot ``name`` (its directory made)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS / f"{name}.png"


# Assertions wait as long as page actions may: a loaded CI machine streams slower.
expect.set_options(timeout=PAGE_TIMEOUT_MS)


@dataclass
class PageWatch:
    """What a page did that a safe page never does: dialogs, errors, CSP violations."""

    dialogs: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)


@pytest.fixture
def context(tmp_path: Path) -> Iterator[BrowserContext]:
    """A Chromium with a fresh --user-data-dir (Playwright's persistent context over it)."""
    if not Path(CHROMIUM).is_file():
        pytest.fail(f"no Chromium at {CHROMIUM}: run `make test-browser`, which installs it")
    with sync_playwright() as playwright:
        ctx = playwright.chromium.launch_persistent_context(
            str(tmp_path / "profile"),
            executable_path=CHROMIUM,
            headless=True,
            args=list(CHROMIUM_FLAGS),
            viewport={"width": 1280, "height": 900},
        )
        ctx.set_default_timeout(PAGE_TIMEOUT_MS)
        try:
            yield ctx
        finally:
            ctx.close()


def watch(page: Page) -> PageWatch:
    """Record dialogs (dismissed), console errors and uncaught page errors of ``page``."""
    seen = PageWatch()

    def on_dialog(dialog: Any) -> None:
        seen.dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.on(
        "console",
        lambda msg: seen.console_errors.append(msg.text) if msg.type == "error" else None,
    )
    page.on("pageerror", lambda exc: seen.page_errors.append(str(exc)))
    return seen


@pytest.fixture
def page(context: BrowserContext) -> tuple[Page, PageWatch]:
    """A fresh page of ``context`` with its watch."""
    pg = context.pages[0] if context.pages else context.new_page()
    return pg, watch(pg)


@dataclass
class SessionDouble:
    """A stand-in for the service's session routes (docs/api.md) for the controls tests: one
    session ``s1`` with a SELECT and a BOOLEAN control and the catalog's revision, the
    revision rule (409 CONTROL_REVISION_STALE) and every body the page posted."""

    status: str = "IDLE"
    revision: int = 1
    mode: str = "default"
    fast: bool = False
    posted: list[dict[str, Any]] = field(default_factory=list)

    def change_elsewhere(self) -> None:
        """Another client changed a control: a new catalog revision."""
        self.fast = not self.fast
        self.revision += 1

    def controls(self) -> dict[str, Any]:
        choices = [
            {"value": "default", "label": "Default <b>mode</b>"},
            {"value": "plan", "label": "Plan"},
        ]
        return {
            "revision": f"r{self.revision}",
            "omitted": 1,
            "controls": [
                {"id": "mode", "label": "Mode", "group": "mode", "type": "SELECT",
                 "value": self.mode, "choices": choices, "mutable": True},
                {"id": "fast", "label": "Fast", "group": "model", "type": "BOOLEAN",
                 "value": self.fast, "choices": [], "mutable": True},
            ],
        }  # fmt: skip

    def answer(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        if path == "/api/v1/sessions/s1":
            record = {"name": "s1", "status": self.status, "profile": "scripted", "cwd": "/w",
                      "settings": {}}  # fmt: skip
            runs = [{"id": "run-1", "status": "COMPLETED", "promptText": "hello"}]
            return 200, {"session": record, "runs": runs, "queue": [], "attachedHere": True}
        if path == "/api/v1/sessions/s1/prompt" and method == "POST":
            self.posted.append(body)
            # A session whose turn runs queues the prompt: its position, and no run yet.
            if self.status == "ACTIVE":
                return 202, {"promptId": "p-2", "state": "queued", "position": 2, "runId": None}
            return 202, {"promptId": "p-2", "state": "running", "position": 0, "runId": "run-2"}
        if path == "/api/v1/sessions/s1/controls" and method == "GET":
            return 200, self.controls()
        if path == "/api/v1/sessions/s1/controls" and method == "POST":
            self.posted.append(body)
            if body.get("revision") != f"r{self.revision}":
                error = {"code": "CONTROL_REVISION_STALE", "message": "stale", "fault": "caller"}
                return 409, {"error": error}
            if body.get("controlId") == "mode":
                self.mode = body["value"]
            else:
                self.fast = body["value"]
            self.revision += 1
            return 200, self.controls()
        # The navigation's count of questions waiting (the real service's lists, empty here).
        if path == "/api/v1/permissions" and method == "GET":
            return 200, {"permissions": []}
        if path == "/api/v1/elicitations" and method == "GET":
            return 200, {"elicitations": []}
        return 404, {"error": {"code": "API_NOT_FOUND", "message": path, "fault": "caller"}}


#: The session double the static server answers /api/ with (reset by the fixture).
SESSIONS = SessionDouble()


class _StaticHandler(BaseHTTPRequestHandler):
    """Serves the inspector's shipped files the way the service does (same names, same
    security headers), the test harness pages under /harness/, and the session double."""

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in SECURITY_HEADERS.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def _api(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        status, answer = SESSIONS.answer(method, self.path.split("?", 1)[0], body)
        self._send(status, json.dumps(answer).encode(), "application/json")

    def do_POST(self) -> None:
        self._api("POST")

    def do_GET(self) -> None:
        if self.path.startswith("/api/"):
            self._api("GET")
            return
        path = self.path.split("?", 1)[0]
        body: bytes | None = None
        content_type = "text/plain"
        if path == "/":
            asset = load_asset(ENTRY_PAGE)
            body, content_type = (asset.body, asset.content_type) if asset else (None, "")
        elif path.startswith("/inspector/"):
            asset = load_asset(path.removeprefix("/inspector/"))
            if asset is not None:
                body, content_type = asset.body, asset.content_type
        elif path.startswith("/harness/"):
            name = path.removeprefix("/harness/")
            target = HARNESS / name
            if "/" not in name and target.is_file():
                body = target.read_bytes()
                content_type = (
                    "text/html; charset=utf-8"
                    if name.endswith(".html")
                    else "text/javascript; charset=utf-8"
                )
        if body is None:
            self.send_error(404)
            return
        self._send(200, body, content_type)

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def sessions_double() -> SessionDouble:
    """The session double, fresh for this test."""
    global SESSIONS
    SESSIONS = SessionDouble()
    return SESSIONS


@pytest.fixture(scope="session")
def static_server() -> Iterator[str]:
    """The base URL of a loopback server of the page's files and the harness."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _StaticHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


# --- a real `baton serve` with the scripted agent -------------------------------------------

#: The token the test service runs with (BATON_SERVE_TOKEN), so tests can sign in.
SERVE_TOKEN: Final = "inspector-test-token-" + "z" * 30
#: Seconds the service may take to print its address.
SERVE_START_SECONDS: Final = 60.0
#: Seconds of silence after which a test stops reading a live event stream.
SSE_QUIET_SECONDS: Final = 1.0
#: Seconds an API call of a test may take.
API_TIMEOUT_SECONDS: Final = 30.0

#: A config file whose custom profile is the bundled scripted agent, advertising a sign-in
#: method whose name carries markup (shown on the Agents page, never executed).
SCRIPTED_CONFIG: Final = """
[profiles.scripted]
display_name = "Scripted <img src=x onerror=alert('profile')>"
argv = ["baton", "agent", "scripted", "--auth-method", "sign-in:agent"]
probe_argv = ["--help"]
probe_patterns = ['scripted']
policies = ["ask", "auto-edits", "full"]
"""


@dataclass
class Served:
    """A running `baton serve`: its base URL, token, data directory and a work directory."""

    url: str
    token: str
    data_dir: Path
    cwd: Path

    def api(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """Call the API with the bearer token (no Origin: a bearer client needs none)."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.url + path,
            data=data,
            method=method,
            headers={
                "Authorization": f"Bearer {self.token}",
                "Content-Type": "application/json",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=API_TIMEOUT_SECONDS) as response:
                return json.loads(response.read() or b"null")
        except urllib.error.HTTPError as exc:
            return {"status": exc.code, **json.loads(exc.read() or b"{}")}

    def start(self, prompt: str, **fields: Any) -> str:
        """Start a run of the scripted agent in the work directory; its id. (Runs name the
        agent by command: the service resolves built-in profiles only.)"""
        body = {"prompt": prompt, "agentCommand": AGENT_COMMAND, "cwd": str(self.cwd), **fields}
        answer = self.api("POST", "/api/v1/runs", body)
        assert "runId" in answer, answer
        run_id: str = answer["runId"]
        return run_id

    def events(self, run_id: str) -> list[dict[str, Any]]:
        """The run's events so far: its SSE stream read up to the first quiet moment."""
        request = urllib.request.Request(
            f"{self.url}/api/v1/runs/{run_id}/events",
            headers={"Authorization": f"Bearer {self.token}"},
        )
        found: list[dict[str, Any]] = []
        try:
            with urllib.request.urlopen(request, timeout=SSE_QUIET_SECONDS) as response:
                for line in response:
                    if line.startswith(b"data: "):
                        found.append(json.loads(line[len(b"data: ") :]))
        except TimeoutError:
            pass  # a live stream stays open: what arrived so far is the answer
        return found

    def wait_run(self, run_id: str, timeout: float = 60.0) -> dict[str, Any]:
        """Poll the run's record until its turn is over; the record."""
        deadline = time.monotonic() + timeout
        while True:
            record: dict[str, Any] = self.api("GET", f"/api/v1/runs/{run_id}")
            if record.get("status") in ENDED or time.monotonic() > deadline:
                return record
            time.sleep(0.1)

    def sign_in(self, page: Page, fragment: str = "") -> None:
        """Open the page with a fresh login code (single-use, exchanged for a session cookie),
        as `baton inspect` does, then go to ``fragment`` (a hash route)."""
        issued: dict[str, Any] = self.api("POST", "/api/v1/login-codes")
        page.goto(f"{self.url}{issued['path']}")
        page.wait_for_url(f"{self.url}/")
        if fragment:
            page.goto(f"{self.url}/{fragment}")


#: How runs start the bundled scripted agent (found on PATH, the test interpreter's bin).
AGENT_COMMAND: Final = "baton agent scripted"

#: Run statuses whose turn is over.
ENDED: Final = frozenset(
    {"COMPLETED", "FAILED", "INTERRUPTED", "RECOVERY_REQUIRED", "LOST", "CANCELLED"}
)


def start_service(root: Path, *extra: str) -> tuple[Served, subprocess.Popen[str]]:
    """Start `baton serve --policy ask` for ``root/data`` on a free loopback port, with the
    scripted profile in its config and ``extra`` arguments; the service and its process."""
    config = root / "config.toml"
    config.write_text(SCRIPTED_CONFIG, encoding="utf-8")
    cwd = root / "work"
    cwd.mkdir(exist_ok=True)
    bin_dir = Path(sys.executable).parent
    env = {
        **os.environ,
        "BATON_SERVE_TOKEN": SERVE_TOKEN,
        "BATON_CONFIG": str(config),
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    argv = [str(bin_dir / "baton"), "serve", "--port", "0", "--data-dir", str(root / "data")]
    process = subprocess.Popen(
        [*argv, "--policy", "ask", "--permission-wait", "120", "--allow-agent-command", *extra],
        env=env,
        cwd=root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    url = None
    deadline = time.monotonic() + SERVE_START_SECONDS
    while url is None and time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        found = re.search(r"listening on (http://\S+)", line)
        url = found.group(1) if found else None
    if url is None:
        process.kill()
        pytest.fail(f"baton serve printed no address: {process.communicate()[0]}")
    # Keep reading its output so a chatty service never blocks on a full pipe.
    drain = threading.Thread(target=lambda: [None for _ in process.stdout or ()], daemon=True)
    drain.start()
    return Served(url, SERVE_TOKEN, root / "data", cwd), process


def stop_service(process: subprocess.Popen[str]) -> None:
    """SIGTERM the service (a graceful stop), SIGKILL if it outlives its grace."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """`baton serve --policy ask` on a free loopback port, with the scripted profile."""
    service, process = start_service(tmp_path_factory.mktemp("served"))
    try:
        yield service
    finally:
        stop_service(process)
