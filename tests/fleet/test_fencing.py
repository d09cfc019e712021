"""Fencing (issue 33, docs/fleet.md "Fencing"): a worker paused (SIGSTOP) or cut off from
PostgreSQL (a pausable proxy) past its lease has its run settled by a peer; when it wakes, or
its network comes back, every write it still attempts for that run is refused by the store
(the run's claim, owner and epoch, is checked in the write), so the run's items, status,
events, interactions and journal references stay as the settle left them; the stale worker
stops with one line and exit code 10, no traceback. Needs PostgreSQL (`make test-fleet`)."""

from __future__ import annotations

import asyncio
import signal
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from baton.fleet import TurnSubmission, submit
from baton.store import Store

from .pausable_proxy import PausableProxy

pytestmark = pytest.mark.slow

#: The stale worker's exit code (baton.cli.exit_codes.WORKER_FENCED).
WORKER_FENCED_EXIT = 10
#: How long a test waits for a state it causes (seconds): generous for a loaded machine;
#: nothing here measures speed.
DEADLINE = 120.0

#: Where in a turn the worker is stopped: (scripted agent flags, the prompt). The prompt is
#: chosen so that the named part of the turn happens while the worker is stopped or cut off:
#: its agent still starting (the prompt not yet sent), streaming, asking a permission, or
#: done (the turn's final writes are the first thing the worker does when it wakes).
POINTS: dict[str, tuple[str, str]] = {
    "before_prompt": ("--startup-delay 3", "echo never-sent"),
    "mid_stream": ("", "stream 400 50"),
    "permission_wait": ("", "slow 2\nwrite fenced.txt written"),
    "final_writes": ("", "slow 2\necho the-end"),
}


def _snapshot(url: str, run_id: str) -> dict[str, Any]:
    """What the store holds of a run: its row, items, events, interactions, observations."""
    with Store(url, read_only=True) as store:
        run = store.get_run(run_id)
        return {
            "status": (run.status, run.error_code),
            "refs": (run.prompt_ref, run.response_ref),
            "owner": (run.owner, run.epoch),
            "items": [(i.seq, i.kind, i.content) for i in store.list_items(run_id)],
            "events": len(store.run_events(run_id)),
            "interactions": [(i.id, i.state) for i in store.list_interactions(run_id)],
            "observations": [o.id for o in store.list_observations(run_id=run_id)],
        }


async def _until(condition: Any, deadline: float = DEADLINE) -> None:
    loop = asyncio.get_running_loop()
    until = loop.time() + deadline
    while not condition():
        if loop.time() > until:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.1)


@pytest.fixture
def proxy_to(postgres_database: str) -> Iterator[Any]:
    proxies: list[PausableProxy] = []

    def make() -> tuple[PausableProxy, str]:
        proxy, url = PausableProxy.for_url(postgres_database)
        proxies.append(proxy)
        return proxy, url

    yield make
    for proxy in proxies:
        proxy.close()


#: This test's own bound (seconds): two workers' start, a lease, the settle and the stale
#: worker's exit, on a loaded machine (the suite's default is 120 s).
FENCING_TEST_TIMEOUT = 300


@pytest.mark.timeout(FENCING_TEST_TIMEOUT)
@pytest.mark.parametrize("cut", ["sigstop", "network"])
@pytest.mark.parametrize("point", sorted(POINTS))
async def test_a_stale_worker_writes_nothing_to_its_settled_run(
    fleet: Any, proxy_to: Any, point: str, cut: str
) -> None:
    flags, prompt = POINTS[point]
    proxy, through = proxy_to() if cut == "network" else (None, None)
    # The survivor reads another queue: it only judges heartbeats and settles.
    fleet.start_worker("survivor", "elsewhere")
    victim = fleet.start_worker("victim", "work", url=through)
    handle = await submit(
        fleet.url,
        TurnSubmission(
            prompt=prompt,
            agent_command=f"{fleet.agent_command()} {flags}".strip(),
            allow_unattended=True,
            queue="work",
        ),
    )
    run_id = handle.run_id

    def status() -> str:
        with Store(fleet.url, read_only=True) as store:
            return store.get_run(run_id).status

    def prompted() -> bool:
        return any(p["text"] == prompt for p in fleet.prompts())

    if point == "before_prompt":
        await _until(lambda: status() == "STARTING")
    elif point == "mid_stream":
        await _until(lambda: prompted() and _snapshot(fleet.url, run_id)["events"] >= 5)
    else:
        await _until(prompted)

    def stop() -> None:
        if proxy is not None:
            proxy.pause()
        else:
            victim.process.send_signal(signal.SIGSTOP)

    def wake() -> None:
        if proxy is not None:
            proxy.resume()
        else:
            victim.process.send_signal(signal.SIGCONT)

    stop()
    try:
        # The survivor declares the victim lost after its lease and settles the run.
        await _until(lambda: status() == "RECOVERY_REQUIRED")
        # Whatever the agent does in the meantime (its pause is 2 s) is done by now.
        await asyncio.sleep(3)
        settled = _snapshot(fleet.url, run_id)
    finally:
        wake()
    assert settled["status"] == ("RECOVERY_REQUIRED", "WORKER_LOST")
    try:
        code = await asyncio.to_thread(victim.process.wait, DEADLINE)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"the stale worker did not stop: {victim.log.read_text()}") from None
    log = victim.log.read_text()
    assert code == WORKER_FENCED_EXIT, log
    assert "Traceback" not in log, log
    assert log.count("RUN_CLAIM_LOST") == 1, log
    # Nothing the stale worker still attempted reached the store.
    assert _snapshot(fleet.url, run_id) == settled
    if point == "before_prompt":
        assert not prompted()  # its prompt was never sent: the fence came first
    if point == "permission_wait":
        assert not (fleet.root / "victim" / "work" / "fenced.txt").exists()
    with Store(fleet.url, read_only=True) as store:
        assert store.get_worker("victim").state == "LOST"
