"""Issue 30, item 2: a named session's first turn starts the data directory's service in the
background (warm sessions by default), `--no-server` and ``[service] autostart = false`` turn
that off, and the service stops by itself after its idle bound, never while it has work."""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest

from baton.service.idle import IdleWatch
from baton.service.runtime_file import find_service
from cli.helpers import AGENT, baton

#: Seconds the test waits for an idle service to have stopped (its bound is 4 s).
IDLE_GONE_WAIT_SECONDS = 90.0
ON = {"BATON_AUTOSTART": "1"}


def _config(tmp_path: Path, text: str) -> None:
    path = tmp_path / ".config" / "baton" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _stop(tmp_path: Path) -> None:
    baton(tmp_path, "serve", "--stop")


def test_the_first_session_turn_starts_a_service_in_the_background(tmp_path: Path) -> None:
    try:
        created = baton(tmp_path, "session", "new", "warm", "--agent-command", AGENT, **ON)
        assert created.returncode == 0, created.stderr
        assert "started a service for this data directory in the background" in created.stderr
        info = find_service(tmp_path / "d")
        assert info is not None
        status = baton(tmp_path, "serve", "--status")
        assert status.returncode == 0 and f"pid {info.pid}" in status.stdout
        turn = baton(tmp_path, "run", "--session", "warm", "echo hello", **ON)
        assert turn.returncode == 0, turn.stderr
        assert turn.stdout == "hello\n"
        assert "started a service" not in turn.stderr  # the running one is used
        shown = httpx.get(
            f"{info.url}/api/v1/sessions/warm",
            headers={"Authorization": f"Bearer {info.token}"},
            timeout=30,
        ).json()
        assert shown["attachedHere"] is True  # the service holds the session, warm
    finally:
        _stop(tmp_path)
    assert find_service(tmp_path / "d") is None


def test_no_server_and_the_config_key_turn_it_off(tmp_path: Path) -> None:
    created = baton(
        tmp_path, "session", "new", "cold", "--agent-command", AGENT, "--no-server", **ON
    )
    assert created.returncode == 0, created.stderr
    turn = baton(tmp_path, "run", "--session", "cold", "--no-server", "echo hi", **ON)
    assert turn.returncode == 0 and "started a service" not in turn.stderr
    assert find_service(tmp_path / "d") is None
    _config(tmp_path, "[service]\nautostart = false\n")
    again = baton(tmp_path, "run", "--session", "cold", "echo hi", **ON)
    assert again.returncode == 0, again.stderr
    assert "started a service" not in again.stderr
    assert find_service(tmp_path / "d") is None


def test_the_suite_starts_no_service_by_default(tmp_path: Path) -> None:
    created = baton(tmp_path, "session", "new", "plain", "--agent-command", AGENT)
    assert created.returncode == 0
    assert find_service(tmp_path / "d") is None


def test_an_auto_started_service_stops_when_idle_but_not_during_a_turn(tmp_path: Path) -> None:
    _config(tmp_path, "[service]\nidle_stop = 4\n")
    try:
        created = baton(
            tmp_path, "session", "new", "idle", "--agent-command", AGENT, "--no-server", **ON
        )
        assert created.returncode == 0, created.stderr
        # The turn starts the service and lasts far longer than its idle bound: it runs to its
        # end (a service stopped mid-turn would interrupt it), then the service stops.
        turn = baton(tmp_path, "run", "--session", "idle", "slow 10; echo done", **ON)
        assert turn.returncode == 0, turn.stderr
        assert turn.stdout == "done\n"
        assert "started a service" in turn.stderr and "after 4s idle" in turn.stderr
        deadline = time.monotonic() + IDLE_GONE_WAIT_SECONDS
        while find_service(tmp_path / "d") is not None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert find_service(tmp_path / "d") is None
        log = (tmp_path / "d" / "serve.log").read_text()
        assert "idle for 4s, stopping by itself" in log
        assert log.count("listening on") == 1  # one service carried the whole turn
    finally:
        _stop(tmp_path)


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _service(**parts: Any) -> Any:
    return SimpleNamespace(
        launcher=SimpleNamespace(pending=parts.get("pending", set())),
        runtime=SimpleNamespace(runs=parts.get("runs", [])),
        asker=SimpleNamespace(pending=parts.get("permissions", {})),
        elicitor=SimpleNamespace(pending=parts.get("elicitations", {})),
        feeds=SimpleNamespace(live=parts.get("live", {})),
    )


@pytest.mark.parametrize(
    "work",
    [
        {"pending": {"queued prompt"}},
        {"runs": ["a running run"]},
        {"permissions": {"perm-1": "waiting"}},
        {"elicitations": {"elic-1": "waiting"}},
        {"live": {"run-1": SimpleNamespace(subscribers={"an event stream"})}},
    ],
)
def test_the_idle_bound_never_ends_work(work: dict[str, Any]) -> None:
    clock = _Clock()
    service = _service(**work)
    watch = IdleWatch(service, 10.0, clock)
    clock.now += 1000
    assert not watch.expired()  # busy: the count starts again
    for key in work:
        setattr_target = {
            "pending": service.launcher,
            "runs": service.runtime,
            "permissions": service.asker,
            "elicitations": service.elicitor,
            "live": service.feeds,
        }[key]
        attribute = {"runs": "runs", "live": "live"}.get(key, "pending")
        setattr(setattr_target, attribute, type(work[key])())
    clock.now += 9
    assert not watch.expired()  # idle, but not yet for the bound
    clock.now += 1
    assert watch.expired()


def test_a_request_restarts_the_idle_count() -> None:
    clock = _Clock()
    watch = IdleWatch(_service(), 10.0, clock)
    clock.now += 8
    watch.touch()
    clock.now += 8
    assert not watch.expired()
    clock.now += 2
    assert watch.expired()
