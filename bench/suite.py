"""Issue 34's table in one run: every row measured against its own baseline, optionally for two
source trees side by side (``--before SRC``: the same bench, the same agent, the old code),
alternating the trees round by round, and a summary table at the end.

CPU seconds, not wall time: the machine is shared, so every figure is the CPU time of the
measured process (``os.wait4``'s rusage: the process and the children it reaped) minus the
agent's own CPU time (bench/flood_agent.py reports it through ``BENCH_AGENT_REPORT``), the
median of ``--repeat`` rounds. Wall times are printed beside them where a target is in wall time.

Rows (each prints ``row: value`` lines as it goes; the summary repeats them):

- ``flood/D``: one ``baton run --format json`` turn of ``--updates`` updates of D-byte deltas
  (108: the stress case; 25: the size of real adapters' medians), journal on, stdout to a file,
  against the official Python SDK client and a floor that only reads and parses the frames,
  each a whole process (bench/flood_clients.py). acpx when ``acpx`` is on PATH.
- ``one-update``: ``baton run`` of a one-update turn, Baton's own CPU (target <= 0.15 s), and
  the modules it imported (``BATON_BENCH_MODULES``: see docs/performance.md).
- ``runs``/``show``/``history``: the reading verbs against ``python -c pass``.
- ``runs@100k``: ``baton runs --limit 20`` on a store of 100,000 runs against 10,000.
- ``long-turn``: one turn of ``--long-updates`` updates of 108-byte deltas completes; journal
  bytes against wire bytes; Baton's peak RSS.
- ``verify``: ``baton journal verify --all`` against a plain loop doing the same parse + sha256
  (bench/verify_floor.py) over the same journal.
- ``serve``: bench/serve_concurrency.py at ``--sessions`` sessions, its p99 latency.

Usage: python bench/suite.py [--before SRC] [--repeat R] [--updates N] [--long-updates N]
       [--rows flood,one-update,...]
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import orjson

from run_flood import RssPoller

HERE = Path(__file__).resolve().parent
AGENT = str(HERE / "flood_agent.py")
CLIENTS = str(HERE / "flood_clients.py")
VERIFY_FLOOR = str(HERE / "verify_floor.py")
BATON_MAIN = [sys.executable, "-m", "baton"]
#: Generous bound on one measured process (the benchmark fails rather than hangs).
RUN_TIMEOUT_SECONDS = 1800.0
#: Delta sizes of the flood rows: the bars' stress case and the project's own run_flood.
DELTA_SIZES = (108, 25)
#: Runs in the small and the large store of the listing row.
SMALL_STORE_RUNS = 10_000
LARGE_STORE_RUNS = 100_000
ALL_ROWS = ("flood", "one-update", "verbs", "listing", "long-turn", "verify", "serve")


@dataclass(frozen=True)
class Tree:
    """One source tree under test: its label and the environment that selects it."""

    label: str
    env: dict[str, str]


@dataclass(frozen=True)
class Sample:
    """One measured process: CPU seconds (agent excluded), wall seconds, its own peak RSS
    (``VmHWM``, KiB: polled while it runs, as bench/run_flood.py does)."""

    cpu: float
    wall: float
    rss_kib: int
    wire_bytes: int = 0


#: Replaced, in a measured argv, by the path of the file the flood agent reports its CPU to.
REPORT_PLACEHOLDER = "{agent-report}"


def measure(argv: list[str], env: dict[str, str], *, stdout: Path | None = None) -> Sample:
    """Run ``argv`` to its end; its CPU (minus the flood agent's, when one reported), wall, RSS.
    The agent's report file is named by ``BENCH_AGENT_REPORT`` in the environment and by
    :data:`REPORT_PLACEHOLDER` in ``argv`` (for agents that Baton starts with their profile's
    environment only)."""
    report = Path(tempfile.mkstemp(prefix="baton-bench-agent-")[1])
    env = {**env, "BENCH_AGENT_REPORT": str(report)}
    out = open(stdout, "wb") if stdout is not None else subprocess.DEVNULL  # noqa: SIM115
    try:
        argv = [word.replace(REPORT_PLACEHOLDER, str(report)) for word in argv]
        started = time.perf_counter()
        proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=out)
        poller = RssPoller(proc.pid)  # the process's own high-water mark, not its agent's
        _pid, status, usage = os.wait4(proc.pid, 0)
        poller.stop()
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            raise RuntimeError(f"{shlex.join(argv)} exited {proc.returncode}")
        agent_cpu, wire = 0.0, 0
        if text := report.read_text().strip():
            cpu_text, wire_text = text.split()
            agent_cpu, wire = float(cpu_text), int(wire_text)
        cpu = usage.ru_utime + usage.ru_stime - agent_cpu
        return Sample(cpu, wall, poller.own, wire)
    finally:
        if stdout is not None:
            out.close()  # type: ignore[union-attr]
        report.unlink(missing_ok=True)


def baton_run_argv(
    data_dir: Path, updates: int, delta: int, *, report: bool = False, prompt: str = "flood"
) -> list[str]:
    """``baton run --format json`` of one flood turn on the flood agent (which reports its CPU
    to the file :func:`measure` names when ``report``)."""
    words = [sys.executable, AGENT, str(updates), str(delta)]
    agent = shlex.join([*words, REPORT_PLACEHOLDER] if report else words)
    return [*BATON_MAIN, "run", "--data-dir", str(data_dir), "--agent-command", agent,
            "--format", "json", prompt]  # fmt: skip


def _text_events(path: Path) -> int:
    total = 0
    with path.open("rb") as events:
        for line in events:
            event = orjson.loads(line)
            if event.get("type") == "text":
                total += event.get("coalescedEvents", 0)
            elif event.get("type") == "result" and event.get("status") != "COMPLETED":
                raise RuntimeError(f"the turn ended {event.get('status')}: {event.get('error')}")
    return total


def _journal_bytes(data_dir: Path) -> int:
    return sum(p.stat().st_size for p in (data_dir / "journals").glob("*.ndjson"))


class Suite:
    """The rows, measured for every tree, and the results for the summary."""

    def __init__(self, trees: list[Tree], args: argparse.Namespace, work: Path) -> None:
        self.trees = trees
        self.args = args
        self.work = work
        self.results: dict[tuple[str, str], str] = {}
        self.targets: dict[str, str] = {}
        self.order: list[str] = []

    def record(self, row: str, tree: Tree, value: str, target: str) -> None:
        """Keep one row's figure for a tree and print it."""
        if row not in self.order:
            self.order.append(row)
        self.results[(row, tree.label)] = value
        self.targets[row] = target
        print(f"{row} [{tree.label}]: {value}", flush=True)

    def rounds(self, body: Callable[[Tree], Sample]) -> dict[str, list[Sample]]:
        """``--repeat`` rounds of ``body`` for every tree, alternating the trees."""
        samples: dict[str, list[Sample]] = {tree.label: [] for tree in self.trees}
        for index in range(self.args.repeat):
            trees = self.trees if index % 2 == 0 else list(reversed(self.trees))
            for tree in trees:
                samples[tree.label].append(body(tree))
        return samples

    def python_pass(self) -> float:
        """Median CPU of ``python -c pass``."""
        runs = [measure([sys.executable, "-c", "pass"], dict(os.environ)) for _ in range(5)]
        return statistics.median(s.cpu for s in runs)

    # --- rows ------------------------------------------------------------------------------

    def flood(self) -> None:
        """The flood rows, both delta sizes."""
        updates = self.args.updates
        for delta in DELTA_SIZES:
            base = dict(os.environ)
            floor = [
                measure([sys.executable, CLIENTS, "floor", str(updates), str(delta)], base)
                for _ in range(self.args.repeat)
            ]
            sdk = [
                measure([sys.executable, CLIENTS, "sdk", str(updates), str(delta)], base)
                for _ in range(self.args.repeat)
            ]

            def baton(tree: Tree, delta: int = delta) -> Sample:
                data = Path(tempfile.mkdtemp(prefix="baton-bench-", dir=self.work))
                events = data.with_suffix(".events")
                try:
                    sample = measure(
                        baton_run_argv(data, updates, delta, report=True), tree.env, stdout=events
                    )
                    seen = _text_events(events)
                    if seen != updates:
                        raise RuntimeError(f"{seen} text updates of {updates}")
                    return sample
                finally:
                    shutil.rmtree(data, ignore_errors=True)
                    events.unlink(missing_ok=True)

            batons = self.rounds(baton)
            floor_cpu = statistics.median(s.cpu for s in floor)
            floor_wall = statistics.median(s.wall for s in floor)
            sdk_cpu = statistics.median(s.cpu for s in sdk)
            acpx = shutil.which("acpx")
            for tree in self.trees:
                cpu = statistics.median(s.cpu for s in batons[tree.label])
                wall = statistics.median(s.wall for s in batons[tree.label])
                self.record(
                    f"flood {delta}B: SDK/Baton CPU", tree, f"{sdk_cpu / cpu:.2f}x", ">= 5x"
                )
                self.record(
                    f"flood {delta}B: Baton/floor",
                    tree,
                    f"{cpu / floor_cpu:.2f}x CPU, {wall / floor_wall:.2f}x wall",
                    "<= 2.5x wall",
                )
                self.record(
                    f"flood {delta}B: acpx/Baton",
                    tree,
                    "n/a (acpx not on PATH)" if acpx is None else "acpx found: not driven yet",
                    ">= 2.5x",
                )

    def one_update(self) -> None:
        """A one-update turn: Baton's own CPU and its imported modules."""

        def turn(tree: Tree) -> Sample:
            data = Path(tempfile.mkdtemp(prefix="baton-bench-", dir=self.work))
            try:
                return measure(baton_run_argv(data, 1, 25, report=True), tree.env)
            finally:
                shutil.rmtree(data, ignore_errors=True)

        samples = self.rounds(turn)
        for tree in self.trees:
            cpu = statistics.median(s.cpu for s in samples[tree.label])
            modules = self._modules(tree) - 1  # the header line
            self.record(
                "one-update run: CPU", tree, f"{cpu:.3f} s ({modules} modules)", "<= 0.15 s"
            )

    def _modules(self, tree: Tree) -> int:
        """Modules a one-update ``baton run`` imports (``python -X importtime`` lines)."""
        data = Path(tempfile.mkdtemp(prefix="baton-bench-", dir=self.work))
        try:
            argv = baton_run_argv(data, 1, 25)
            argv[1:1] = ["-X", "importtime"]
            out = subprocess.run(argv, env=tree.env, capture_output=True, check=True)
            return sum(1 for line in out.stderr.splitlines() if line.startswith(b"import time:"))
        finally:
            shutil.rmtree(data, ignore_errors=True)

    def verbs(self) -> None:
        """`runs --limit 20`, `show`, `session history` against `python -c pass`."""
        floor = self.python_pass()
        # Each tree reads a data directory its own code wrote (an older Baton refuses a newer
        # store's schema).
        prepared = {tree.label: self._verbs_data(tree) for tree in self.trees}
        for name, verb in (
            ("runs --limit 20", ["runs", "--limit", "20"]),
            ("show", ["show", "RUN"]),
            ("session history", ["session", "history", "bench"]),
        ):

            def verb_run(tree: Tree, verb: list[str] = verb) -> Sample:
                data, run_id = prepared[tree.label]
                words = [run_id if word == "RUN" else word for word in verb]
                return measure([*BATON_MAIN, *words, "--data-dir", str(data)], tree.env)

            samples = self.rounds(verb_run)
            for tree in self.trees:
                cpu = statistics.median(s.cpu for s in samples[tree.label])
                self.record(f"{name} vs python -c pass", tree, f"{cpu / floor:.1f}x", "<= 10x")

    def _verbs_data(self, tree: Tree) -> tuple[Path, str]:
        """A data directory with three runs and a named session of one turn, and a run id."""
        data = self.work / f"verbs-{tree.label}"
        scripted = shlex.join([*BATON_MAIN, "agent", "scripted"])
        env = {**tree.env, "BATON_AUTOSTART": "0"}  # this process's turns, no service
        for index in range(3):
            subprocess.run(
                [*BATON_MAIN, "run", "--data-dir", str(data), "--agent-command", scripted,
                 "--format", "json", f"say {index}"],
                env=env, check=True, stdout=subprocess.DEVNULL,
            )  # fmt: skip
        subprocess.run(
            [*BATON_MAIN, "session", "new", "bench", "--data-dir", str(data),
             "--agent-command", scripted],
            env=env, check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        subprocess.run(
            [*BATON_MAIN, "run", "--data-dir", str(data), "--session", "bench", "hello"],
            env=env, check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        run_id = orjson.loads(
            subprocess.run(
                [*BATON_MAIN, "runs", "--data-dir", str(data), "--json", "--limit", "1"],
                env=env, check=True, capture_output=True,
            ).stdout.splitlines()[0]
        )["id"]  # fmt: skip
        return data, run_id

    def listing(self) -> None:
        """`runs --limit 20` on 100k runs against 10k runs."""
        for tree in self.trees:
            stores = {n: self._store_of(n, tree) for n in (SMALL_STORE_RUNS, LARGE_STORE_RUNS)}
            cpu = {}
            for n, data in stores.items():
                argv = [*BATON_MAIN, "runs", "--limit", "20", "--data-dir", str(data)]
                runs = [measure(argv, tree.env) for _ in range(self.args.repeat)]
                cpu[n] = statistics.median(s.cpu for s in runs)
            ratio = cpu[LARGE_STORE_RUNS] / cpu[SMALL_STORE_RUNS]
            self.record("runs --limit 20 @100k vs 10k", tree, f"{ratio:.2f}x", "<= 1.1x")

    def _store_of(self, runs: int, tree: Tree) -> Path:
        """A data directory whose store holds ``runs`` runs (copies of one real run)."""
        data = self.work / f"store-{runs}-{tree.label}"
        subprocess.run(
            baton_run_argv(data, 3, 25), env=tree.env, check=True,
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        conn = sqlite3.connect(data / "baton.sqlite3")
        columns = [row[1] for row in conn.execute("PRAGMA table_info(runs)")]
        template = conn.execute(f"SELECT {', '.join(columns)} FROM runs").fetchone()
        id_at, created_at = columns.index("id"), columns.index("created_at")
        rows = []
        for n in range(runs - 1):
            row = list(template)
            row[id_at] = f"run-bench{n:08d}"
            row[created_at] = (
                f"2026-01-01T00:{n // 60000 % 60:02d}:{n // 1000 % 60:02d}.{n % 1000:03d}000Z"
            )
            rows.append(row)
        marks = ", ".join("?" for _ in columns)
        with conn:
            conn.executemany(f"INSERT INTO runs ({', '.join(columns)}) VALUES ({marks})", rows)
        conn.close()
        return data

    def long_turn(self) -> None:
        """A turn of ``--long-updates`` 108-byte deltas: completes, journal/wire bytes, RSS."""
        updates = self.args.long_updates
        for tree in self.trees:
            data = Path(tempfile.mkdtemp(prefix="baton-bench-long-", dir=self.work))
            events = data.with_suffix(".events")
            try:
                argv = baton_run_argv(data, updates, 108, report=True)
                sample = measure(argv, tree.env, stdout=events)
                seen = _text_events(events)
                journal = _journal_bytes(data)
                ratio = f"{journal / sample.wire_bytes:.2f}x" if sample.wire_bytes else "n/a"
                value = (
                    f"completed ({seen:,} updates), journal/wire {ratio},"
                    f" peak RSS {sample.rss_kib / 1024:.0f} MB"
                )
            except RuntimeError as exc:
                value = f"FAILED: {exc}"[:160]
            finally:
                shutil.rmtree(data, ignore_errors=True)
                events.unlink(missing_ok=True)
            self.record(f"{updates:,}-update turn", tree, value, "completes, <= 1.5x, bounded RSS")

    def verify(self) -> None:
        """`journal verify --all` against the plain parse + sha256 loop, on one journal."""
        datas = {}
        for tree in self.trees:  # each tree verifies the journal its own code wrote
            datas[tree.label] = data = self.work / f"verify-{tree.label}"
            subprocess.run(
                baton_run_argv(data, self.args.updates, 108), env=tree.env, check=True,
                stdout=subprocess.DEVNULL,
            )  # fmt: skip

        def floor(tree: Tree) -> Sample:
            journals = str(datas[tree.label] / "journals")
            return measure([sys.executable, VERIFY_FLOOR, journals], dict(os.environ))

        def verify(tree: Tree) -> Sample:
            data = str(datas[tree.label])
            return measure(
                [*BATON_MAIN, "journal", "verify", "--all", "--data-dir", data], tree.env
            )

        floors = self.rounds(floor)
        samples = self.rounds(verify)
        for tree in self.trees:
            cpu = statistics.median(s.cpu for s in samples[tree.label])
            floor_cpu = statistics.median(s.cpu for s in floors[tree.label])
            self.record("journal verify vs floor", tree, f"{cpu / floor_cpu:.2f}x", "<= 2x")

    def serve(self) -> None:
        """bench/serve_concurrency.py's p99 at ``--sessions`` sessions."""
        for tree in self.trees:
            argv = [sys.executable, str(HERE / "serve_concurrency.py"), "--sessions",
                    str(self.args.sessions), "--updates", str(self.args.serve_updates),
                    "--repeat", "1"]  # fmt: skip
            out = subprocess.run(argv, env=tree.env, capture_output=True, check=False)
            last = out.stdout.decode().strip().splitlines()[-1:] or ["(no output)"]
            fields = dict(f.split("=", 1) for f in last[0].split() if "=" in f)
            value = f"p99 {fields.get('p99_ms', '?')} ms" if fields else f"FAILED: {last[0]}"
            self.record(f"serve {self.args.sessions} sessions p99", tree, value, "<= 250 ms")


def main() -> None:
    """Measure the rows asked for and print the summary table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", metavar="SRC", help="the old tree's src/ to compare against")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--updates", type=int, default=200_000)
    parser.add_argument("--long-updates", type=int, default=1_000_000)
    parser.add_argument("--sessions", type=int, default=64)
    parser.add_argument("--serve-updates", type=int, default=2_000)
    parser.add_argument("--rows", default=",".join(ALL_ROWS))
    args = parser.parse_args()
    here = dict(os.environ)
    here.pop("PYTHONPATH", None)
    trees = [Tree("after", here)]
    if args.before:
        trees.insert(0, Tree("before", {**here, "PYTHONPATH": str(Path(args.before).resolve())}))
    work = Path(tempfile.mkdtemp(prefix="baton-suite-"))
    suite = Suite(trees, args, work)
    try:
        for row in args.rows.split(","):
            getattr(suite, row.replace("-", "_"))()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    labels = [tree.label for tree in trees]
    width = max(len(row) for row in suite.order) if suite.order else 10
    print()
    print(f"{'row':<{width}}  " + "  ".join(f"{label:<44}" for label in labels) + "  target")
    for row in suite.order:
        cells = "  ".join(f"{suite.results.get((row, label), '-'):<44}" for label in labels)
        print(f"{row:<{width}}  {cells}  {suite.targets[row]}")


if __name__ == "__main__":
    main()
