"""Shared fixtures for the journal tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from baton.journal import Journal


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """A fresh, not yet created, data directory."""
    return tmp_path / "data"


@pytest.fixture
def journal(data_dir: Path) -> Journal:
    """The journal directory of a fresh data directory."""
    return Journal.in_data_dir(data_dir)


def notification(n: int, pad: str = "") -> dict[str, object]:
    """A small session/update-like notification whose routing fields survive redaction."""
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "sess-1", "n": n, "pad": pad},
    }


def request(request_id: int, method: str = "session/prompt") -> dict[str, object]:
    """A request as Baton sends it."""
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {"sessionId": "s"}}
