"""Journal benchmark: appends per second, inbound (batched sync) and outbound (synced), against a
baseline of the same number of plain unsynced file writes of the same record lines, in the same
run and directory.

- ``baseline``: ``os.write`` of each pre-encoded record line to a file, no sync at all (the cost
  of getting the bytes into the page cache, nothing else).
- ``inbound``: ``ServerJournal.append("inbound", ...)`` of agent_message_chunk notifications
  (redaction, encoding, hashing, writing; syncs in the background by 1 MiB / 100 ms batches),
  then one ``flush()``; timed to the end of the flush, so the syncs are paid for.
- ``outbound``: ``ServerJournal.append("outbound", ...)`` of session/prompt-sized requests, each
  awaited, so every one is synced before the next starts (what the connection does).
- ``fsync floor``: ``os.write`` + ``fdatasync`` per line inline (what outbound cannot beat).

While the outbound run is going, a ticker task measures event-loop lag: fsync runs in a worker
thread, so the loop stays responsive (lag well under one fsync). The last line is
``inbound_ratio=X outbound_ratio=Y`` (journal appends/s / baseline writes/s).

Usage: python bench/journal.py [--inbound N] [--outbound N] [--repeat R] [--dir DIR]
(the best of R runs is reported; DIR should be on the disk you care about, not a tmpfs).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from baton.durable.timestamps import format_timestamp
from baton.journal import Journal, ServerJournal
from baton.journal.records import RecordMetadata, encode_record
from baton.journal.writer import utc_now
from baton.redaction import redact_frame_message

TICK_SECONDS = 0.001


def chunk(n: int) -> dict[str, Any]:
    """A typical streaming delta (about 200 bytes on the wire)."""
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": "sess-0b1c2d3e",
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "messageId": "msg-1",
                "content": {"type": "text", "text": f"token {n} of a long streamed answer "},
            },
        },
    }


def prompt(n: int) -> dict[str, Any]:
    """An outbound request of a few hundred bytes."""
    return {
        "jsonrpc": "2.0",
        "id": n,
        "method": "session/prompt",
        "params": {
            "sessionId": "sess-0b1c2d3e",
            "prompt": [{"type": "text", "text": "please refactor the parser module " * 6}],
        },
    }


def record_lines(messages: list[dict[str, Any]], direction: str) -> list[bytes]:
    """The record lines the journal would write, for the baseline to write raw."""
    lines = []
    for sequence, message in enumerate(messages, start=1):
        raw = orjson.dumps(redact_frame_message(message))
        line, _digest = encode_record(
            "bench",
            0,
            sequence,
            "inbound" if direction == "inbound" else "outbound",
            format_timestamp(utc_now()),
            raw,
            RecordMetadata("notification"),
        )
        lines.append(line + b"\n")
    return lines


def baseline(directory: Path, lines: list[bytes], sync: bool) -> float:
    """Seconds to write ``lines`` one ``os.write`` each (and ``fdatasync`` each if ``sync``)."""
    path = directory / f"baseline-{'sync' if sync else 'plain'}.ndjson"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_TRUNC, 0o600)
    try:
        started = time.perf_counter()
        for line in lines:
            os.write(fd, line)
            if sync:
                os.fdatasync(fd)
        return time.perf_counter() - started
    finally:
        os.close(fd)
        path.unlink()


async def _ticker(lags: list[float], stop: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    while not stop.is_set():
        before = loop.time()
        await asyncio.sleep(TICK_SECONDS)
        lags.append(loop.time() - before - TICK_SECONDS)


async def journal_run(
    journal: Journal, server_id: str, messages: list[dict[str, Any]], direction: str
) -> tuple[float, list[float], list[float]]:
    """Seconds for the appends (and the final flush); per-append latencies; loop lags."""
    server: ServerJournal = await journal.open_server(server_id)
    sizes = [len(orjson.dumps(message)) for message in messages]
    latencies: list[float] = []
    lags: list[float] = []
    stop = asyncio.Event()
    ticker = asyncio.create_task(_ticker(lags, stop))
    await asyncio.sleep(0)
    started = time.perf_counter()
    for message, size in zip(messages, sizes, strict=True):
        before = time.perf_counter()
        await server.append(direction, message, input_bytes=size)  # type: ignore[arg-type]
        latencies.append(time.perf_counter() - before)
    await server.flush()
    elapsed = time.perf_counter() - started
    stop.set()
    await ticker
    await server.close()
    return elapsed, latencies, lags


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.3f} ms"


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def run_once(directory: Path, inbound: int, outbound: int, index: int) -> dict[str, Any]:
    """One measurement of every variant in ``directory``."""
    journal = Journal(directory / "journals")
    inbound_messages = [chunk(n) for n in range(inbound)]
    outbound_messages = [prompt(n) for n in range(outbound)]
    in_lines = record_lines(inbound_messages, "inbound")
    out_lines = record_lines(outbound_messages, "outbound")
    result: dict[str, Any] = {
        "baseline_in": baseline(directory, in_lines, sync=False),
        "baseline_out": baseline(directory, out_lines, sync=False),
        "floor_out": baseline(directory, out_lines, sync=True),
    }
    result["inbound"], result["in_lat"], _ = await journal_run(
        journal, f"bench-in-{index}", inbound_messages, "inbound"
    )
    result["outbound"], result["out_lat"], result["out_lag"] = await journal_run(
        journal, f"bench-out-{index}", outbound_messages, "outbound"
    )
    return result


async def main() -> None:
    """Run the benchmark and print the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inbound", type=int, default=50_000)
    parser.add_argument("--outbound", type=int, default=2_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="baton-journal-bench-", dir=args.dir))
    try:
        runs = []
        for index in range(args.repeat):
            run_dir = root / f"run-{index}"
            run_dir.mkdir(mode=0o700)
            runs.append(await run_once(run_dir, args.inbound, args.outbound, index))
    finally:
        shutil.rmtree(root, ignore_errors=True)

    def best(key: str) -> float:
        return min(run[key] for run in runs)

    n_in, n_out = args.inbound, args.outbound
    rates = {
        "baseline_in": n_in / best("baseline_in"),
        "inbound": n_in / best("inbound"),
        "baseline_out": n_out / best("baseline_out"),
        "outbound": n_out / best("outbound"),
        "floor_out": n_out / best("floor_out"),
    }
    fastest = min(runs, key=lambda run: run["outbound"])
    in_lat = min(runs, key=lambda run: run["inbound"])["in_lat"]
    print(f"inbound:  {n_in} agent_message_chunk appends, batched sync, best of {args.repeat}")
    print(f"  baseline (plain unsynced writes): {rates['baseline_in']:>12,.0f} writes/s")
    print(f"  journal inbound (incl. flush):    {rates['inbound']:>12,.0f} appends/s")
    print(
        f"  append latency p50 {_ms(statistics.median(in_lat))}, p99 {_ms(_pct(in_lat, 0.99))}, "
        f"max {_ms(max(in_lat))}"
    )
    print(f"outbound: {n_out} session/prompt appends, each synced, best of {args.repeat}")
    print(f"  baseline (plain unsynced writes): {rates['baseline_out']:>12,.0f} writes/s")
    print(f"  floor (write + fdatasync inline): {rates['floor_out']:>12,.0f} writes/s")
    print(f"  journal outbound (synced):        {rates['outbound']:>12,.0f} appends/s")
    lags = fastest["out_lag"]
    print(
        f"  event-loop lag during outbound: p50 {_ms(statistics.median(lags))}, "
        f"max {_ms(max(lags))} (one fsync: {_ms(best('floor_out') / n_out)})"
    )
    inbound_ratio = rates["inbound"] / rates["baseline_in"]
    outbound_ratio = rates["outbound"] / rates["baseline_out"]
    print(
        f"  outbound vs fsync floor: {rates['outbound'] / rates['floor_out']:.2f}  "
        f"inbound vs outbound: {rates['inbound'] / rates['outbound']:.0f}x"
    )
    print(f"inbound_ratio={inbound_ratio:.3f} outbound_ratio={outbound_ratio:.4f}")


if __name__ == "__main__":
    asyncio.run(main())
