"""Service concurrency benchmark: one `baton serve`, N sessions each streaming U
``agent_message_chunk`` updates from the scripted agent, every session's event stream (SSE)
consumed by a client, in the same run as its two baselines.

- ``service``: a real `baton serve` subprocess (journal and store on, policy ask, nothing to
  ask). Its lane is warmed by one run first (the agent process is up, as in a service that
  has been running). Then N runs (``stream U``) are started at once through
  ``POST /api/v1/runs`` and each run's ``/events`` stream is read by its own client in this
  process. Timed: from the first POST to the last ``result`` event. The agent runs behind
  bench/stamp_relay.py, which timestamps every 100th chunk as it leaves the agent.
- ``floor``: the same scripted agent driven by a plain loop in this process: initialize, N
  session/new, N prompts at once, every line read and orjson-decoded, until the N answers.
  The same bytes, read and parsed, nothing else.
- ``cli``: N separate `baton run --agent-command ... --json "stream U"` processes started at
  once, each with its own data directory, their JSON events drained. Timed: from the first
  spawn to the last exit (N cold CLIs: interpreter, imports, agent start, the turn).

Latency: for every timestamped chunk, the time from the relay handing it to Baton to the SSE
client reading the ``text`` event that carries it (one clock, CLOCK_MONOTONIC). It includes
the 75 ms coalescing window of the streaming buffer. Service RSS: the kernel's high-water
mark (VmHWM) of the `baton serve` process after the runs.

The last line: ``service_updates_per_s=... floor_ratio=F cli_ratio=C p50_ms=... p99_ms=...
rss_mb=...`` where F = floor throughput / service throughput (target <= 3) and C = service
throughput / N-CLI throughput (target >= 1); p99 target <= 250 ms; RSS target <= 300 MB.

Usage: python bench/serve_concurrency.py [--sessions N] [--updates U] [--repeat R]   (defaults
16, 20,000, 3). Each phase runs R times and its best time is reported (on a machine shared
with noisy neighbours a run is only ever slowed down); the latencies and RSS are the best
service run's.
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson

HERE = Path(__file__).resolve().parent
AGENT = [sys.executable, "-m", "baton.agents.scripted"]
#: Seconds the benchmark waits for the service to publish its runtime file.
START_WAIT_SECONDS = 60.0
#: Generous bound on each phase (the benchmark fails rather than hangs).
PHASE_TIMEOUT_SECONDS = 600.0
_KIB_PER_MB = 1024


@dataclass
class StreamResult:
    """What one SSE client saw of its run."""

    provider_session: str = ""
    status: str = ""
    chunks: int = 0
    receipts: dict[int, float] = field(default_factory=dict)


# --- the floor -----------------------------------------------------------------------------


async def floor(sessions: int, updates: int) -> float:
    """Seconds for a plain loop to read and decode N concurrent streams of U updates."""
    process = await asyncio.create_subprocess_exec(
        *AGENT,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        limit=1 << 24,
    )
    assert process.stdin is not None and process.stdout is not None

    def send(message: dict[str, Any]) -> None:
        assert process.stdin is not None
        process.stdin.write(orjson.dumps(message) + b"\n")

    async def answer(request_id: int) -> dict[str, Any]:
        assert process.stdout is not None
        while True:
            message: dict[str, Any] = orjson.loads(await process.stdout.readline())
            if message.get("id") == request_id:
                return message

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
    await answer(1)
    ids = []
    for index in range(sessions):
        request_id = 10 + index
        send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "session/new",
                "params": {"cwd": tempfile.gettempdir(), "mcpServers": []},
            }
        )
        ids.append((await answer(request_id))["result"]["sessionId"])
    started = time.perf_counter()
    for index, session in enumerate(ids):
        send(
            {
                "jsonrpc": "2.0",
                "id": 100 + index,
                "method": "session/prompt",
                "params": {
                    "sessionId": session,
                    "prompt": [{"type": "text", "text": f"stream {updates}"}],
                },
            }
        )
    await process.stdin.drain()
    answered = seen = 0
    while answered < sessions:
        message = orjson.loads(await process.stdout.readline())
        if message.get("method") == "session/update":
            seen += 1
        elif "result" in message:
            answered += 1
    elapsed = time.perf_counter() - started
    assert seen == sessions * updates, seen
    process.stdin.close()
    await process.wait()
    return elapsed


# --- the service ---------------------------------------------------------------------------


def start_service(data_dir: Path) -> tuple[subprocess.Popen[bytes], str, str]:
    sys.path.insert(0, str(HERE.parent / "src"))
    from baton.service.runtime_file import find_service

    process = subprocess.Popen(
        [
            str(Path(sys.executable).with_name("baton")),
            "serve",
            "--allow-agent-command",
            "--data-dir",
            str(data_dir),
        ],
        stdout=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + START_WAIT_SECONDS
    while time.monotonic() < deadline:
        info = find_service(data_dir) if data_dir.exists() else None
        if info is not None and info.pid == process.pid:
            return process, info.url, info.token
        if process.poll() is not None:
            raise SystemExit("baton serve exited")
        time.sleep(0.05)
    process.kill()
    raise SystemExit("baton serve did not start")


async def consume(client: httpx.AsyncClient, run_id: str) -> StreamResult:
    """Read one run's SSE stream to its end, noting when each chunk number arrived."""
    seen = StreamResult()
    async with client.stream("GET", f"/api/v1/runs/{run_id}/events") as stream:
        async for line in stream.aiter_lines():
            if not line.startswith("data: "):
                continue
            now = time.monotonic()
            event = orjson.loads(line[6:])
            kind = event["type"]
            if kind == "text":
                for piece in event["text"].split("\n"):
                    if piece.startswith("chunk "):
                        seen.chunks += 1
                        seen.receipts[int(piece[6:])] = now
            elif kind == "session":
                seen.provider_session = event["providerSessionId"]
            elif kind == "result":
                seen.status = event["status"]
            elif kind == "dropped":
                seen.status = "DROPPED"
    return seen


def high_water_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / _KIB_PER_MB
    return 0.0


async def service(sessions: int, updates: int, work: Path) -> tuple[float, list[float], float]:
    """Seconds for the service to stream N runs to N SSE clients; latencies (ms); RSS (MB)."""
    stamps = work / "stamps.txt"
    agent = shlex.join([sys.executable, str(HERE / "stamp_relay.py"), str(stamps), "--", *AGENT])
    process, url, token = start_service(work / "data")
    try:
        headers = {"Authorization": f"Bearer {token}"}
        limits = httpx.Limits(max_connections=sessions * 2 + 4)
        async with httpx.AsyncClient(
            base_url=url, headers=headers, timeout=PHASE_TIMEOUT_SECONDS, limits=limits
        ) as client:

            async def start(prompt: str) -> str:
                body = {"prompt": prompt, "agentCommand": agent, "cwd": str(work)}
                answer = await client.post("/api/v1/runs", json=body)
                answer.raise_for_status()
                run_id: str = answer.json()["runId"]
                return run_id

            warm = await consume(client, await start("echo warm"))  # the lane is up now
            assert warm.status == "COMPLETED", warm.status
            started = time.perf_counter()
            run_ids = await asyncio.gather(*(start(f"stream {updates}") for _ in range(sessions)))
            results = await asyncio.gather(*(consume(client, r) for r in run_ids))
            elapsed = time.perf_counter() - started
        rss = high_water_mb(process.pid)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=PHASE_TIMEOUT_SECONDS)
    assert all(r.status == "COMPLETED" for r in results), [r.status for r in results]
    assert all(r.chunks == updates for r in results), [r.chunks for r in results]
    sent: dict[tuple[str, int], float] = {}
    for line in stamps.read_text().splitlines():
        session, number, moment = line.split()
        sent[(session, int(number))] = float(moment)
    latencies = [
        (received - sent[(r.provider_session, number)]) * 1000
        for r in results
        for number, received in r.receipts.items()
        if (r.provider_session, number) in sent
    ]
    return elapsed, latencies, rss


# --- N separate CLIs -----------------------------------------------------------------------


def clis(sessions: int, updates: int, work: Path) -> float:
    """Seconds for N cold `baton run` processes, started at once, to stream U updates each."""
    baton = str(Path(sys.executable).with_name("baton"))
    started = time.perf_counter()
    processes = [
        subprocess.Popen(
            [
                baton,
                "run",
                "--data-dir",
                str(work / f"cli-{index}"),
                "--agent-command",
                shlex.join(AGENT),
                "--json",
                f"stream {updates}",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=str(work),
        )
        for index in range(sessions)
    ]
    outputs = [p.communicate(timeout=PHASE_TIMEOUT_SECONDS) for p in processes]
    elapsed = time.perf_counter() - started
    for process, (output, errors) in zip(processes, outputs, strict=True):
        lines = output.splitlines()
        # A run that printed no result says why on stderr (kept for this message only).
        assert lines, f"baton run exited {process.returncode}: {errors.decode()[-2000:]}"
        last = orjson.loads(lines[-1])
        assert last["status"] == "COMPLETED", last
    return elapsed


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=16)
    parser.add_argument("--updates", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    total = args.sessions * args.updates
    with tempfile.TemporaryDirectory(prefix="baton-serve-bench-") as tmp:
        work = Path(tmp)
        floor_s = min(asyncio.run(floor(args.sessions, args.updates)) for _ in range(args.repeat))
        print(f"floor: {total} updates in {floor_s:.3f}s = {total / floor_s:,.0f} updates/s")
        service_runs = []
        for attempt in range(args.repeat):
            run_dir = work / f"service-{attempt}"
            run_dir.mkdir()
            service_runs.append(asyncio.run(service(args.sessions, args.updates, run_dir)))
        service_s, latencies, rss = min(service_runs, key=lambda run: run[0])
        print(
            f"service: {args.sessions} sessions x {args.updates} updates to {args.sessions} SSE "
            f"clients in {service_s:.3f}s = {total / service_s:,.0f} updates/s; "
            f"{len(latencies)} latencies sampled; RSS {rss:.0f} MB"
        )
        cli_s = min(clis(args.sessions, args.updates, work) for _ in range(args.repeat))
        print(
            f"cli: {args.sessions} baton run processes in {cli_s:.3f}s = {total / cli_s:,.0f} updates/s"
        )
    p50 = statistics.median(latencies)
    p99 = percentile(latencies, 0.99)
    print(
        f"latency agent->SSE client: p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {max(latencies):.1f} ms"
    )
    print(
        f"service_updates_per_s={total / service_s:.0f} floor_ratio={service_s / floor_s:.2f} "
        f"cli_ratio={cli_s / service_s:.2f} p50_ms={p50:.1f} p99_ms={p99:.1f} rss_mb={rss:.0f}"
    )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
