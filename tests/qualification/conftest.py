"""Qualification against real ACP adapters (``make qualify``); off unless ``BATON_QUALIFY=1``.

Without ``BATON_QUALIFY=1`` nothing here is collected, so plain ``make test`` and ``pytest``
never install or start a real adapter. With it:

- the pinned installs are verified (and made when missing) before any test; a failed install
  ends the session with the reason (exit 1), it never skips;
- the two mock model servers run for the whole session on 127.0.0.1 (their logs are cleared
  before each test);
- every test carries ``@pytest.mark.qualify(adapter, step)``; its outcome and duration become a
  row of docs/qualification.md when ``BATON_QUALIFY_REPORT`` names the page (the Makefile sets
  it), written at the end of the session;
- a skipped test fails the session: a qualification step either ran or is declared n/a.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

ENABLED = os.environ.get("BATON_QUALIFY") == "1"

if not ENABLED:
    collect_ignore_glob = ["test_*.py"]


def pytest_report_header(config: pytest.Config) -> str | None:
    """Say why the qualification tests are not collected."""
    if ENABLED:
        return "qualification: real adapters (BATON_QUALIFY=1)"
    return "qualification: tests/qualification not collected (set BATON_QUALIFY=1 or run `make qualify`)"


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``qualify`` marker."""
    config.addinivalue_line(
        "markers", "qualify(adapter, step): a qualification step for the report"
    )


if ENABLED:
    from qualify_drivers import SPECS, Baton, Rig, reap
    from qualify_installs import ALL_PINS, InstallFailed, ensure
    from qualify_mocks import AnthropicMock, MockServer, ResponsesMock
    from qualify_report import StepResult, write

    _RESULTS: list[StepResult] = []
    _STARTED = time.monotonic()
    _SKIPPED: list[str] = []

    @pytest.fixture(scope="session", autouse=True)
    def installs() -> dict[str, Any]:
        """Every pinned adapter, installed and verified (the session stops on a failure)."""
        done = {}
        for pin in ALL_PINS:
            try:
                done[pin.key] = ensure(pin)
            except InstallFailed as exc:
                pytest.exit(f"qualification: INSTALL FAILED: {exc}", returncode=1)
        return done

    @pytest.fixture(scope="session")
    def mocks() -> Iterator[dict[str, MockServer]]:
        """The mock model servers, one per provider API, for the whole session."""
        servers: dict[str, MockServer] = {
            "anthropic": AnthropicMock(),
            "responses": ResponsesMock(),
        }
        for server in servers.values():
            server.start()
        yield servers
        for server in servers.values():
            server.stop()

    @pytest.fixture
    def make_rig(
        tmp_path: Path, mocks: dict[str, MockServer]
    ) -> Iterator[Callable[[str], tuple[Rig, Baton, MockServer | None]]]:
        """``make_rig(profile)``: a fresh rig, its Baton driver, and its mock (logs cleared).
        At teardown whatever a rig left running is killed, so one failed step leaves nothing
        behind for the next (the step itself has already failed: every step checks for
        survivors)."""
        rigs: list[Rig] = []

        def make(profile: str) -> tuple[Rig, Baton, MockServer | None]:
            spec = SPECS[profile]
            mock = mocks[spec.api] if spec.api is not None else None
            if mock is not None:
                mock.clear()
            rig = spec.rig(tmp_path / profile, mock.url if mock is not None else None)
            rigs.append(rig)
            return rig, Baton(rig), mock

        yield make
        for rig in rigs:
            reap(rig.adapter.pin, rig.home)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
        """Record each qualification step's outcome and duration."""
        outcome = yield
        report = outcome.get_result()
        marker = item.get_closest_marker("qualify")
        if marker is None:
            return
        adapter, step = marker.args
        if report.skipped:
            _SKIPPED.append(item.nodeid)
        if report.when == "call" or (report.when == "setup" and not report.passed):
            note = ""
            if report.failed:
                text = (
                    str(report.longrepr.reprcrash.message)
                    if hasattr(report.longrepr, "reprcrash")
                    else str(report.longrepr)
                )  # type: ignore[union-attr]
                note = text.strip().splitlines()[0] if text.strip() else "failed"
            result = "passed" if report.passed else ("skipped" if report.skipped else "failed")
            _RESULTS.append(
                StepResult(adapter, step, result, report.duration, note, order=len(_RESULTS))
            )

    def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
        """Write the report; a skipped step fails the session."""
        if _SKIPPED:
            print(
                f"\nqualification: {len(_SKIPPED)} step(s) skipped, which a qualification run never does: {_SKIPPED}"
            )
            session.exitstatus = 1
        target = os.environ.get("BATON_QUALIFY_REPORT")
        if target and _RESULTS:
            write(Path(target), _RESULTS, time.monotonic() - _STARTED)
            print(f"\nqualification: wrote {target}")
