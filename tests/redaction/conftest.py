"""Shared setup for the redaction tests."""

from __future__ import annotations

import sys
from pathlib import Path

# Shared capture transcripts (tests/journal/capture_samples.py) are imported by name: pytest
# runs in importlib mode, which puts no test directory on the import path.
sys.path.insert(0, str(Path(__file__).parents[1] / "journal"))
# The planted credentials of every shape (tests/redaction/shape_tokens.py), likewise.
sys.path.insert(0, str(Path(__file__).parent))

import pytest

from baton.journal import Journal


@pytest.fixture
def journal(tmp_path: Path) -> Journal:
    """The journal directory of a fresh data directory (for shape tests that append records)."""
    return Journal.in_data_dir(tmp_path / "data")
