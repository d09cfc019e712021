"""Run-flood benchmark: the 200,000-update flood turn through ``baton run --format json`` with
the journal on, against the official ACP SDK client and a floor, on the same agent
(bench/flood_agent.py), in the same run.

- ``baton``: the real CLI as a subprocess, ``baton run --data-dir <tmp> --agent-command
  "<python> bench/flood_agent.py N" --format json flood``: the whole runtime (journal with its
  syncs, run store, streaming buffer, stream redaction, JSON event printing). Its stdout goes to
  a pipe that this benchmark drains line by line.
- ``sdk``: the official ACP Python SDK client (agent-client-protocol, pinned in the ``bench``
  extra), as in bench/flood.py (``sdk_turn``, imported from there).
- ``floor``: a plain loop that reads the lines and orjson-decodes each one, as in
  bench/flood.py (``floor_turn``).

What is timed, the same for all three: from sending ``session/prompt`` to having the turn's
final result, after every update was received. For the library clients that is measured in
this process around the prompt call (the agent process is already up and has built its flood:
it does so before it answers ``initialize``). For the CLI it is measured on the event stream it
prints: from reading its ``session`` event (printed after session/new, right before Baton
applies settings and submits the prompt) to reading its final ``result`` line (printed after
the turn's items, outcome and journal syncs are recorded). Process start-up and shutdown are
left out for all three; Baton's whole process wall time (spawn to exit: interpreter start,
imports, store and journal setup, the agent's start-up and flood building, the turn, shutdown)
is printed too, for reference.

Peak RSS: the kernel's own high-water mark (``VmHWM`` in ``/proc/<pid>/status``) of the Baton
process and, separately, of the agent it started, polled every few milliseconds while they run
and once more after the result (a high-water mark only grows, so one read after the peak is
enough). ``resource.getrusage(RUSAGE_CHILDREN)`` cannot separate them: the agent is Baton's
child, so its peak would count as Baton's.

The last line is ``ratio_vs_sdk=X ratio_vs_floor=Y peak_rss_mb=Z`` (SDK time / Baton time;
Baton time / floor time; Baton's peak RSS in MB, the largest of all runs). Targets:
ratio_vs_sdk >= 5, ratio_vs_floor <= 5, peak RSS <= 150 MB.

Usage: python bench/run_flood.py [--updates N] [--repeat R]   (the best time of R runs, 5 by
default, is reported for each client: on a machine shared with noisy neighbours a run is only
ever slowed down, so the best of several is the fairest estimate for all three alike)
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import orjson

from flood import AGENT, floor_turn, sdk_turn

#: The CLI next to this interpreter (the project's virtualenv).
BATON = str(Path(sys.executable).with_name("baton"))
#: How often the RSS poller reads /proc (seconds).
RSS_POLL_SECONDS = 0.005
#: Generous bound on one Baton run (the benchmark fails rather than hangs).
RUN_TIMEOUT_SECONDS = 600.0
#: Bytes read at a time when counting journal records.
READ_CHUNK_BYTES = 1 << 20
_KIB_PER_MB = 1024


@dataclass
class BatonRun:
    """One measured ``baton run``."""

    turn: float
    wall: float
    baton_rss_kib: int
    agent_rss_kib: int
    journal_records: int
    text_events: int


def _high_water_kib(pid: int) -> int:
    """``VmHWM`` of ``pid`` in KiB (0 once the process is gone or reaped)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as status:
            for line in status:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError, ValueError):
        pass
    return 0


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children", "rb") as children:
            return [int(child) for child in children.read().split()]
    except (FileNotFoundError, ProcessLookupError, ValueError):
        return []


class RssPoller:
    """Polls the high-water marks of a process and of its children in a thread."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.own = 0
        self.children: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def read(self) -> None:
        """Take one reading now."""
        self.own = max(self.own, _high_water_kib(self.pid))
        for child in _children(self.pid):
            self.children[child] = max(self.children.get(child, 0), _high_water_kib(child))

    def _run(self) -> None:
        while not self._stop.wait(RSS_POLL_SECONDS):
            self.read()

    def stop(self) -> None:
        """Stop polling (after one last reading)."""
        self.read()
        self._stop.set()
        self._thread.join()


def _journal_records(data_dir: Path) -> int:
    """Record lines in every journal segment of a data directory."""
    total = 0
    for segment in (data_dir / "journals").glob("*.ndjson"):
        with segment.open("rb") as handle:
            while chunk := handle.read(READ_CHUNK_BYTES):
                total += chunk.count(b"\n")
    return total


def baton_turn(updates: int) -> BatonRun:
    """One ``baton run --format json`` flood turn, timed on its event stream."""
    data_dir = Path(tempfile.mkdtemp(prefix="baton-run-flood-"))
    agent_command = shlex.join([sys.executable, AGENT, str(updates)])
    argv = [BATON, "run", "--data-dir", str(data_dir), "--agent-command", agent_command]
    argv += ["--format", "json", "flood"]
    try:
        spawned = time.perf_counter()
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
        assert proc.stdout is not None
        poller = RssPoller(proc.pid)
        started = finished = None
        result: dict[str, object] = {}
        text_events = 0
        for line in proc.stdout:
            event = orjson.loads(line)
            kind = event.get("type")
            if kind == "session":
                started = time.perf_counter()
            elif kind == "text":
                text_events += event.get("coalescedEvents", 0)
            elif kind == "result":
                finished = time.perf_counter()
                result = event
                poller.read()
        proc.wait(RUN_TIMEOUT_SECONDS)
        wall = time.perf_counter() - spawned
        poller.stop()
        assert started is not None and finished is not None, "no session or result event"
        assert proc.returncode == 0 and result.get("status") == "COMPLETED", result
        assert text_events == updates, (text_events, updates)
        records = _journal_records(data_dir)
        assert records > updates, f"the journal holds {records} records, fewer than the updates"
        agent = max(poller.children.values(), default=0)
        return BatonRun(finished - started, wall, poller.own, agent, records, text_events)
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


def main() -> None:
    """Run the benchmark and print the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    times: dict[str, float] = {}
    runs: list[BatonRun] = []
    for _ in range(args.repeat):
        times["floor"] = min(times.get("floor", float("inf")), floor_turn(args.updates))
        run = baton_turn(args.updates)
        runs.append(run)
        times["baton"] = min(times.get("baton", float("inf")), run.turn)
        sdk = asyncio.run(sdk_turn(args.updates))
        times["sdk"] = min(times.get("sdk", float("inf")), sdk)
    best = min(runs, key=lambda r: r.turn)
    baton_mb = max(r.baton_rss_kib for r in runs) / _KIB_PER_MB
    agent_mb = max(r.agent_rss_kib for r in runs) / _KIB_PER_MB
    print(
        f"updates={args.updates} (best of {args.repeat}; each timed from sending session/prompt"
        f" to the turn's result)"
    )
    for name in ("floor", "baton", "sdk"):
        rate = args.updates / times[name]
        print(f"{name:>5}: {times[name]:.3f} s  ({rate:,.0f} updates/s)")
    print(
        f"baton run: journal on ({best.journal_records:,} records), stdout drained from a pipe; "
        f"process wall time {best.wall:.3f} s (spawn to exit, agent start-up included)"
    )
    print(
        f"peak RSS (VmHWM, max of {args.repeat} runs): baton {baton_mb:.1f} MB, "
        f"agent {agent_mb:.1f} MB"
    )
    print(
        f"ratio_vs_sdk={times['sdk'] / times['baton']:.2f} "
        f"ratio_vs_floor={times['baton'] / times['floor']:.2f} peak_rss_mb={baton_mb:.1f}"
    )


if __name__ == "__main__":
    main()
