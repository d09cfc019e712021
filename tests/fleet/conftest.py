"""The fleet on one machine: workers as separate `baton worker` processes, each with its own
data directory and ``BATON_HOST`` (stand-ins for hosts), on one PostgreSQL database, running
the scripted agent, which logs every prompt it receives (``--prompt-log``)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest

from baton.store import ENDED_RUN_STATUSES, Store

#: Heartbeat and lease of the test workers (seconds): short, so a killed worker is settled
#: within a few seconds.
HEARTBEAT = 0.5
LEASE = 4.0
#: How long a test waits for its runs to end before it fails (seconds): generous, for a
#: loaded two-core machine; nothing here measures speed.
SETTLE_DEADLINE = 240.0


@dataclass
class WorkerProcess:
    """One `baton worker` child."""

    name: str
    host: str
    queues: tuple[str, ...]
    process: subprocess.Popen[bytes]
    log: Path


#: The variable naming the throwaway cluster's directory (scripts/test_fleet.sh sets it), which
#: lets a test restart the server (scripts/pg_cluster.sh restart).
CLUSTER_ENV = "BATON_TEST_POSTGRES_CLUSTER"
#: The script that drives the throwaway cluster.
PG_CLUSTER_SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "pg_cluster.sh"


@dataclass
class Fleet:
    """A database, a prompt log, and the workers started on it."""

    url: str
    root: Path
    workers: dict[str, WorkerProcess] = field(default_factory=dict)

    async def restart_database(self) -> float:
        """Restart the PostgreSQL server under the fleet (fast shutdown: open connections
        are cut, open transactions rolled back); the seconds it took. Skips the test when
        the cluster is not this suite's throwaway one. Run as a child process so this test's
        own event loop keeps going meanwhile (a client that stalls in the middle of
        connecting holds a shutting-down server up)."""
        cluster = os.environ.get(CLUSTER_ENV)
        if not cluster:
            pytest.skip(f"{CLUSTER_ENV} names no throwaway cluster to restart (make test-fleet)")
        loop = asyncio.get_running_loop()
        began = loop.time()
        process = await asyncio.create_subprocess_exec(
            "bash", str(PG_CLUSTER_SCRIPT), "restart", cluster
        )
        assert await asyncio.wait_for(process.wait(), 120) == 0
        return loop.time() - began

    @property
    def prompt_log(self) -> Path:
        return self.root / "prompts.jsonl"

    def agent_command(self) -> str:
        state = self.root / "agent-state"
        return (
            f"{sys.executable} -m baton.agents.scripted --prompt-log {self.prompt_log} "
            f"--state-dir {state}"
        )

    def start_worker(
        self,
        name: str,
        *queues: str,
        concurrency: int = 1,
        lease: float = LEASE,
        url: str | None = None,
        args: tuple[str, ...] = (),
    ) -> WorkerProcess:
        """Start a worker on ``queues`` (``url``: its way to the database, default the
        fleet's; a test's proxy in front of it, say)."""
        home = self.root / name
        (home / "work").mkdir(parents=True, exist_ok=True)
        log = home / "worker.log"
        argv = [
            sys.executable,
            "-m",
            "baton",
            "worker",
            "--store",
            url or self.url,
            "--name",
            name,
            "--data-dir",
            str(home / "data"),
            "--workdir",
            str(home / "work"),
            "--concurrency",
            str(concurrency),
            "--heartbeat",
            str(HEARTBEAT),
            "--lease",
            str(lease),
        ]
        for queue in queues:
            argv += ["--queue", queue]
        argv += args
        env = {**os.environ, "BATON_HOST": f"host-{name}"}
        env.pop("BATON_STORE", None)
        with log.open("wb") as out:
            process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env)
        worker = WorkerProcess(name, f"host-{name}", queues, process, log)
        self.workers[name] = worker
        self.wait_registered(name)
        return worker

    def wait_registered(self, name: str) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with Store(self.url, read_only=True) as store:
                    if any(w.name == name and w.state == "RUNNING" for w in store.list_workers()):
                        return
            except Exception:  # the first worker may still be migrating the database
                pass
            worker = self.workers[name]
            if worker.process.poll() is not None:
                raise AssertionError(f"worker {name} exited: {worker.log.read_text()}")
            time.sleep(0.1)
        raise AssertionError(
            f"worker {name} did not register: {self.workers[name].log.read_text()}"
        )

    def prompts(self) -> list[dict[str, Any]]:
        """Every prompt the agents received, in the order they logged them."""
        if not self.prompt_log.exists():
            return []
        return [orjson.loads(line) for line in self.prompt_log.read_bytes().splitlines()]

    lease: float = LEASE

    async def wait_ended(
        self, run_ids: list[str], deadline: float = SETTLE_DEADLINE
    ) -> dict[str, Any]:
        """The runs once every one has ended."""
        return await wait_ended(self.url, run_ids, deadline)

    def stop(self) -> None:
        for worker in self.workers.values():
            if worker.process.poll() is None:
                worker.process.send_signal(signal.SIGTERM)
        for worker in self.workers.values():
            try:
                worker.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                worker.process.kill()
                worker.process.wait()


async def wait_ended(
    url: str, run_ids: list[str], deadline: float = SETTLE_DEADLINE
) -> dict[str, Any]:
    """The runs once every one has ended (AssertionError naming the rest after ``deadline``)."""
    loop = asyncio.get_running_loop()
    until = loop.time() + deadline
    while True:
        with Store(url, read_only=True) as store:
            runs = {run_id: store.get_run(run_id) for run_id in run_ids}
        pending = [r for r in runs.values() if r.status not in ENDED_RUN_STATUSES]
        if not pending:
            return runs
        if loop.time() > until:
            raise AssertionError(
                f"{len(pending)} runs did not end: {[(r.id, r.status) for r in pending[:5]]}"
            )
        await asyncio.sleep(0.2)


@pytest.fixture
def fleet(postgres_database: str, tmp_path: Path) -> Iterator[Fleet]:
    """An empty fleet on a fresh database; its workers are stopped afterwards."""
    running = Fleet(postgres_database, tmp_path)
    try:
        yield running
    finally:
        running.stop()
