"""What a raw HTTP client can do to `baton serve` on 127.0.0.1: a request framed twice
(Content-Length and Transfer-Encoding) or with an obfuscated Transfer-Encoding is refused 400
and its connection closed (no second request smuggled behind it); a client hanging up
mid-body costs at most one log line, never a BATON_BUG traceback."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from .test_serve_e2e import Served, launch, stop

#: Seconds a raw read waits for the service (a bound, not a speed claim).
READ_SECONDS = 10.0


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    running = launch(tmp_path_factory.mktemp("framing"))
    try:
        yield running
    finally:
        stop(running)


def _exchange(served: Served, raw: bytes) -> tuple[bytes, bool]:
    """Send ``raw``; everything answered, and whether the service closed the connection."""
    parts = urlsplit(served.url)
    assert parts.hostname == "127.0.0.1" and parts.port is not None
    with socket.create_connection(("127.0.0.1", parts.port), timeout=READ_SECONDS) as conn:
        conn.sendall(raw)
        received = b""
        deadline = time.monotonic() + READ_SECONDS
        while time.monotonic() < deadline:
            try:
                chunk = conn.recv(65536)
            except TimeoutError:
                return received, False
            if not chunk:
                return received, True
            received += chunk
        return received, False


def _head(served: Served, method: str, path: str, *headers: str) -> bytes:
    host = urlsplit(served.url).netloc
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}", f"Authorization: Bearer {served.token}"]
    return ("\r\n".join([*lines, *headers]) + "\r\n\r\n").encode()


def test_content_length_with_transfer_encoding_is_refused_and_closed(service: Served) -> None:
    smuggled = _head(service, "GET", "/api/v1/runs", "Host: x")  # the request hidden behind
    raw = (
        _head(service, "POST", "/api/v1/runs", "Content-Length: 5", "Transfer-Encoding: chunked")
        + b"0\r\n\r\n"
        + smuggled
    )
    answer, closed = _exchange(service, raw)
    assert answer.startswith(b"HTTP/1.1 400 "), answer[:200]
    assert answer.count(b"HTTP/1.1 ") == 1 and closed


@pytest.mark.parametrize(
    "framing",
    [
        ("Transfer-Encoding: xchunked",),
        ("Transfer-Encoding: chunked, identity",),
        ("Transfer-Encoding: chunked", "Transfer-Encoding: identity"),
        ("Transfer-Encoding : chunked",),
        ("Content-Length: 5", "Transfer-Encoding:\tchunked"),
    ],
)
def test_an_obfuscated_transfer_encoding_is_refused_and_closed(
    service: Served, framing: tuple[str, ...]
) -> None:
    raw = _head(service, "POST", "/api/v1/runs", *framing) + b"0\r\n\r\n"
    answer, closed = _exchange(service, raw)
    assert answer.startswith(b"HTTP/1.1 400 "), answer[:200]
    assert answer.count(b"HTTP/1.1 ") == 1 and closed


def test_a_client_hanging_up_mid_body_is_no_bug(tmp_path: Path) -> None:
    served = launch(tmp_path)
    try:
        parts = urlsplit(served.url)
        assert parts.port is not None
        for _ in range(3):
            with socket.create_connection(("127.0.0.1", parts.port), timeout=READ_SECONDS) as c:
                c.sendall(
                    _head(
                        served,
                        "POST",
                        "/api/v1/runs",
                        f"Origin: {served.url}",
                        "Content-Type: application/json",
                        "Content-Length: 1000",
                    )
                    + b'{"prompt": "x'
                )
                time.sleep(0.2)
        # The service still answers.
        answer, _closed = _exchange(served, _head(served, "GET", "/api/v1", "Connection: close"))
        assert answer.startswith(b"HTTP/1.1 200 ")
    finally:
        stop(served)
    assert served.process.stderr is not None
    log = served.process.stderr.read()
    assert "Traceback" not in log and "BATON_BUG" not in log, log[-2000:]
    assert len(log.splitlines()) <= 3, log[-2000:]
