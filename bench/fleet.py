"""The fleet benchmark (issues 22 and 33): N = 1, 4, 16 and 32 worker processes on this
machine and one PostgreSQL database, each of concurrency C, draining K rounds of turns whose
scripted agent mostly waits (``slow S``), so the figure is Baton's coordination cost, not CPU.
For each N it prints the throughput against N x one worker's, the queue latency (submit to
start) p50/p99 of turns submitted one at a time to the idle fleet, the database transactions
per turn (``pg_stat_database``: every store and engine round trip that commits, heartbeats
and polling included) and the database server's CPU time per turn (its processes' CPU
seconds, from /proc).

Needs PostgreSQL: BATON_BENCH_POSTGRES_URL (an admin URL; a database is created and dropped;
the server's CPU is then not measured), else a throwaway cluster is started with
scripts/pg_cluster.sh (Debian's postgresql).

    .venv/bin/python bench/fleet.py [--workers 1,4,16,32] [--concurrency 2] [--rounds 3]
                                    [--slow 2] [--latency-turns 20]

Targets (issue 33): at 32 workers, throughput at least 0.8 of linear and submit-to-start p99
under 1 s.
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
from dataclasses import dataclass
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


#: The throwaway cluster's max_connections: each worker keeps up to a dozen connections (the
#: store's three, the engine's pool and listener).
MAX_CONNECTIONS = 600


async def _submit_all(url: str, agent: str, queue: str, prompts: list[str]) -> list[str]:
    ids = []
    for prompt in prompts:
        turn = TurnSubmission(
            prompt=prompt, agent_command=agent, allow_unattended=True, queue=queue
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
    deadline = time.monotonic() + 300
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


def _transactions(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT xact_commit + xact_rollback FROM pg_stat_database "
            "WHERE datname = current_database()"
        ).fetchone()
    assert row is not None
    return int(row[0])


def _server_cpu(cluster: str | None) -> float | None:
    """CPU seconds of the cluster's server: the postmaster's own and its reaped children's,
    plus its live children's (None without a throwaway cluster)."""
    if cluster is None:
        return None
    try:
        pid = int((Path(cluster) / "data" / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            data = (entry / "stat").read_bytes()
        except OSError:
            continue
        fields = data[data.rfind(b")") + 2 :].split()
        own, parent = int(entry.name), int(fields[1])
        if own == pid:
            total += sum(int(f) for f in fields[11:15]) / ticks  # utime stime cutime cstime
        elif parent == pid:
            total += (int(fields[11]) + int(fields[12])) / ticks
    return total


@dataclass
class Phase:
    """One N's figures."""

    workers: int
    turns: int
    throughput: float
    latencies: list[float]
    transactions_per_turn: float
    cpu_per_turn: float | None


async def _phase(
    url: str, root: Path, agent: str, cluster: str | None, workers: int, args: argparse.Namespace
) -> Phase:
    """Queue K rounds of slow turns for N workers, start them, time the drain from the first
    start to the last end (the runs' own timestamps); then, on the idle fleet, submit turns one
    at a time for the queue latency."""
    queue = f"n{workers}-{os.urandom(3).hex()}"
    turns = workers * args.concurrency * args.rounds
    ids = await _submit_all(
        url, agent, queue, [f"slow {args.slow}\necho {queue}-{n}" for n in range(turns)]
    )
    names = [f"{queue}-w{n}" for n in range(workers)]
    transactions, cpu = _transactions(url), _server_cpu(cluster)
    processes = [_worker(url, root, name, queue, args.concurrency) for name in names]
    try:
        await _wait(url, ids)
        spent_transactions = _transactions(url) - transactions
        after_cpu = _server_cpu(cluster)
        with Store(url, read_only=True) as store:
            runs = [store.get_run(i) for i in ids]
        if {r.status for r in runs} != {"COMPLETED"}:
            raise SystemExit(f"not every turn completed: {sorted({r.status for r in runs})}")
        first = min(_parse(r.started_at or r.created_at) for r in runs)
        last = max(_parse(r.ended_at or r.created_at) for r in runs)
        throughput = turns / (last - first).total_seconds()
        await _wait_registered(url, names)
        latency_ids: list[str] = []
        for number in range(args.latency_turns):
            latency_ids += await _submit_all(url, agent, queue, [f"echo lat-{number}"])
            await _wait(url, latency_ids[-1:])
        with Store(url, read_only=True) as store:
            timed = [store.get_run(i) for i in latency_ids]
    finally:
        _stop(processes)
    latencies = [
        (_parse(r.started_at or r.created_at) - _parse(r.created_at)).total_seconds() for r in timed
    ]
    return Phase(
        workers,
        turns,
        throughput,
        latencies,
        spent_transactions / turns,
        None if cpu is None or after_cpu is None else (after_cpu - cpu) / turns,
    )


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def _measure(url: str, cluster: str | None, args: argparse.Namespace) -> list[Phase]:
    agent = f"{sys.executable} -m baton.agents.scripted"
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        Store(url).close()
        phases = []
        for workers in args.workers:
            phases.append(await _phase(url, root, agent, cluster, workers, args))
            _report(phases[-1], phases[0], args)
    return phases


def _report(phase: Phase, one: Phase, args: argparse.Namespace) -> None:
    ratio = phase.throughput / (phase.workers * one.throughput)
    cpu = "" if phase.cpu_per_turn is None else f", db CPU {phase.cpu_per_turn * 1000:.1f} ms/turn"
    print(
        f"  N={phase.workers:<3} x c{args.concurrency}: {phase.turns:4d} turns "
        f"{phase.throughput:6.2f} turns/s (ideal {phase.workers * args.concurrency / args.slow:.1f}), "
        f"vs N x one worker {ratio:.2f}; submit-to-start p50 "
        f"{statistics.median(phase.latencies) * 1000:.0f} ms p99 "
        f"{_percentile(phase.latencies, 0.99) * 1000:.0f} ms; "
        f"{phase.transactions_per_turn:.1f} db transactions/turn{cpu}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--workers", default="1,4,16,32", help="the Ns, comma-separated")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3, help="turns per worker slot")
    parser.add_argument("--slow", type=float, default=2.0, help="seconds each turn waits")
    parser.add_argument("--latency-turns", type=int, default=20)
    args = parser.parse_args()
    args.workers = [int(n) for n in str(args.workers).split(",")]
    script = str(ROOT / "scripts" / "pg_cluster.sh")
    admin = os.environ.get("BATON_BENCH_POSTGRES_URL")
    cluster = None
    if admin is None:
        cluster = tempfile.mkdtemp(prefix="baton-bench-pg.")
        os.rmdir(cluster)  # pg_cluster.sh creates it
        start = ["bash", script, "start", cluster]
        env = {**os.environ, "PG_MAX_CONNECTIONS": str(MAX_CONNECTIONS)}
        admin = subprocess.run(
            start, check=True, capture_output=True, text=True, env=env
        ).stdout.strip()
    name, url = _database(admin)
    print(
        f"fleet: N workers x concurrency {args.concurrency}, {args.rounds} rounds of "
        f"'slow {args.slow:g}' turns each (scripted agent), one PostgreSQL, this machine "
        f"({os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f})",
        flush=True,
    )
    try:
        asyncio.run(_measure(url, cluster, args))
    finally:
        _drop(admin, name)
        if cluster is not None:
            subprocess.run(["bash", script, "stop", cluster], check=False)


if __name__ == "__main__":
    main()
