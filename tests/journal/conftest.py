"""Shared fixtures for the journal tests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# Shared test data (capture_samples.py) is imported by name from this directory: pytest runs
# in importlib mode, which puts no test directory on the import path.
sys.path.insert(0, str(Path(__file__).parent))

from baton.journal import Journal


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """A fresh, not yet created, data directory."""
    return tmp_path / "data"


@pytest.fixture
def journal(data_dir: Path) -> Journal:
    """The journal directory of a fresh data directory."""
    return Journal.in_data_dir(data_dir)
