"""The fleet benchmark (issue 22): throughput of 3 workers x concurrency 4 against one worker of
concurrency 12 on the same machine and database, on 300 short scripted turns, and the queue
latency (submit to start) p50/p99 on an idle fleet.

Needs PostgreSQL: BATON_BENCH_POSTGRES_URL (an admin URL; a database is created and dropped),
else a throwaway cluster is started with scripts/pg_cluster.sh (Debian's postgresql).

    .venv/bin/python bench/fleet.py [--turns 300] [--latency-turns 50]

Targets (the issue's): queue latency p99 under 1 s on an idle machine; the three workers'
throughput within 20% of the single worker's (the cost of sharing the store).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

from baton.fleet import TurnSubmission, submit
from baton.store import ENDED_RUN_STATUSES, Store

ROOT = Path(__file__).resolve().parents[1]
#: Seconds a phase may take before the benchmark gives up (a loaded machine is slow, not stuck).
PHASE_DEADLINE = 900.0


def _database(admin: str) -> tuple[str, str]:
    name = f"baton_bench_{os.urandom(4).hex()}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')  # type: ignore[arg-type]
    return name, urlunsplit(urlsplit(admin)._replace(path=f"/{name}"))


def _drop(admin: str, name: str) -> None:
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')  # type: ignore[arg-type]


def _worker(
    url: str, root: Path, name: str, queue: str, concurrency: int
) -> subprocess.Popen[bytes]:
    home = root / name
    (home / "work").mkdir(parents=True, exist_ok=True)
    argv = [
        sys.executable, "-m", "baton", "worker", "--store", url, "--name", name,
        "--queue", queue, "--concurrency", str(concurrency),
        "--data-dir", str(home / "data"), "--workdir", str(home / "work"),
    ]  # fmt: skip
    env = {**os.environ, "BATON_HOST": f"bench-{name}"}
    return subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=(home / "log").open("wb"), env=env
    )


def _stop(workers: list[subprocess.Popen[bytes]]) -> None:
    for process in workers:
        process.send_signal(signal.SIGTERM)
    for process in workers:
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()


def _parse(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


async def _submit_all(url: str, agent: str, queue: str, count: int, tag: str) -> list[str]:
    ids = []
    for number in range(count):
        turn = TurnSubmission(
            prompt=f"echo {tag}-{number}", agent_command=agent, allow_unattended=True, queue=queue
        )
        ids.append((await submit(url, turn)).run_id)
    return ids


async def _wait(url: str, ids: list[str]) -> None:
    deadline = time.monotonic() + PHASE_DEADLINE
    while time.monotonic() < deadline:
        with Store(url, read_only=True) as store:
            if all(store.get_run(i).status in ENDED_RUN_STATUSES for i in ids):
                return
        await asyncio.sleep(0.1)
    raise SystemExit("runs did not end in time")


async def _wait_registered(url: str, names: list[str]) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with Store(url, read_only=True) as store:
                running = {w.name for w in store.list_workers() if w.state == "RUNNING"}
            if set(names) <= running:
                return
        except Exception:
            pass
        await asyncio.sleep(0.2)
    raise SystemExit("workers did not start")


async def _throughput(
    url: str, root: Path, agent: str, layout: list[tuple[str, int]], turns: int
) -> float:
    """Turns per second: every turn queued first, then the workers drain the queue."""
    queue = f"q-{os.urandom(3).hex()}"
    ids = await _submit_all(url, agent, queue, turns, queue)
    # A warm-up turn per worker is not counted: lanes start lazily.
    started = time.monotonic()
    workers = [_worker(url, root, f"{queue}-{name}", queue, conc) for name, conc in layout]
    try:
        await _wait(url, ids)
        elapsed = time.monotonic() - started
    finally:
        _stop(workers)
    with Store(url, read_only=True) as store:
        statuses = {store.get_run(i).status for i in ids}
    if statuses != {"COMPLETED"}:
        raise SystemExit(f"not every turn completed: {statuses}")
    return turns / elapsed


async def _latency(url: str, root: Path, agent: str, turns: int) -> list[float]:
    """Seconds from submit (the run's creation) to start, one turn at a time, idle fleet."""
    queue = "latency"
    workers = [_worker(url, root, f"lat-{n}", queue, 4) for n in range(3)]
    try:
        await _wait_registered(url, [f"lat-{n}" for n in range(3)])
        warm = await _submit_all(url, agent, queue, 3, "warm")
        await _wait(url, warm)
        ids = []
        for number in range(turns):
            ids += await _submit_all(url, agent, queue, 1, f"lat{number}")
            await _wait(url, ids[-1:])
        with Store(url, read_only=True) as store:
            runs = [store.get_run(i) for i in ids]
    finally:
        _stop(workers)
    return [
        (_parse(r.started_at or r.created_at) - _parse(r.created_at)).total_seconds() for r in runs
    ]


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def _measure(url: str, turns: int, latency_turns: int) -> tuple[float, float, list[float]]:
    agent = f"{sys.executable} -m baton.agents.scripted"
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        Store(url).close()
        single = await _throughput(url, root, agent, [("one", 12)], turns)
        three = await _throughput(url, root, agent, [("a", 4), ("b", 4), ("c", 4)], turns)
        latencies = await _latency(url, root, agent, latency_turns)
    return single, three, latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--latency-turns", type=int, default=50)
    args = parser.parse_args()
    script = str(ROOT / "scripts" / "pg_cluster.sh")
    admin = os.environ.get("BATON_BENCH_POSTGRES_URL")
    cluster = None
    if admin is None:
        cluster = tempfile.mkdtemp(prefix="baton-bench-pg.")
        os.rmdir(cluster)  # pg_cluster.sh creates it
        start = ["bash", script, "start", cluster]
        admin = subprocess.run(start, check=True, capture_output=True, text=True).stdout.strip()
    name, url = _database(admin)
    try:
        single, three, latencies = asyncio.run(_measure(url, args.turns, args.latency_turns))
    finally:
        _drop(admin, name)
        if cluster is not None:
            subprocess.run(["bash", script, "stop", cluster], check=False)
    print(f"fleet: {args.turns} short turns (scripted agent), one PostgreSQL, this machine")
    print(f"  1 worker  x concurrency 12: {single:7.1f} turns/s")
    print(
        f"  3 workers x concurrency 4:  {three:7.1f} turns/s  "
        f"(ratio {three / single:.2f}; target >= 0.80)"
    )
    print(
        f"  queue latency, submit to start ({len(latencies)} turns, idle fleet): "
        f"p50 {statistics.median(latencies) * 1000:.0f} ms, "
        f"p99 {_percentile(latencies, 0.99) * 1000:.0f} ms (target p99 < 1000 ms)"
    )


if __name__ == "__main__":
    main()
