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
