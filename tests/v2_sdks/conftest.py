"""Interop with the official SDKs' experimental ACP v2 agents (``make test-v2-sdks``); off
unless ``BATON_V2_SDKS=1``, so plain ``make test`` needs no network.

The SDKs are installed by ``sdk_installs.py`` (the Makefile runs it first; a session here
installs what is missing too, and a failed install fails the session with the reason, never a
skip). Each test runs once per SDK: ``python`` (1.0.0rc3) and ``typescript`` (2.4.0).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

ENABLED = os.environ.get("BATON_V2_SDKS") == "1"

if not ENABLED:
    collect_ignore_glob = ["test_*.py"]


def pytest_report_header(config: pytest.Config) -> str:
    """Say whether the SDK interop tests are collected."""
    if ENABLED:
        return "v2 SDK interop: official Python and TypeScript SDK agents (BATON_V2_SDKS=1)"
    return "v2 SDK interop: tests/v2_sdks not collected (run `make test-v2-sdks`)"


@pytest.fixture(scope="session")
def sdk_agents() -> dict[str, list[str]]:
    """The argv of each SDK's agent, installing the SDKs when missing."""
    import sdk_installs

    try:
        sdk_installs.install_python()
        sdk_installs.install_ts()
        return {"python": sdk_installs.python_agent(), "typescript": sdk_installs.ts_agent()}
    except sdk_installs.InstallFailed as exc:
        pytest.exit(f"test-v2-sdks: {exc}", returncode=1)


@pytest.fixture(params=["python", "typescript"])
def sdk_agent(request: pytest.FixtureRequest, sdk_agents: dict[str, list[str]]) -> list[str]:
    """One SDK agent's argv."""
    return sdk_agents[str(request.param)]
