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

import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Final

import pytest
from playwright.sync_api import BrowserContext, Page, sync_playwright

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


class _StaticHandler(BaseHTTPRequestHandler):
    """Serves the inspector's shipped files the way the service does (same names, same
    security headers) plus the test harness pages under /harness/."""

    def do_GET(self) -> None:
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
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in SECURITY_HEADERS.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return


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
