"""ATIF exports validated with the format's published models (``make test-atif``); off
unless ``BATON_ATIF_PYTHON`` names the interpreter holding them, so plain ``make test`` needs
no download. The Makefile makes that interpreter (.venv-atif: pydantic and the ``harbor``
wheel without its dependencies)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

ATIF_PYTHON = os.environ.get("BATON_ATIF_PYTHON")

if not ATIF_PYTHON:
    collect_ignore_glob = ["test_*.py"]


def pytest_report_header(config: pytest.Config) -> str:
    """Say whether the ATIF validation tests are collected."""
    if ATIF_PYTHON:
        return f"ATIF validation with Harbor's models in {ATIF_PYTHON}"
    return "ATIF validation: tests/atif not collected (run `make test-atif`)"
