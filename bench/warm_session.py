"""The warm-session benchmark (issue 30, item 2): the second turn of a named session through
the data directory's service (its agent process and provider session stay attached) against
the same turn from a cold CLI (`--no-server`: a new agent process, initialize, session/resume,
then the prompt), with the scripted agent started with an artificial start-up delay standing
in for a real adapter (claude-agent-acp takes seconds to start). The warm path is measured
twice: through an explicit `baton serve`, and by default (no flag: the session's first turn
starts the service in the background, which the benchmark stops at the end).

    .venv/bin/python bench/warm_session.py [--startup-delay 2.0] [--rounds 3]

Prints each path's median wall time of the second turn (the whole `baton run` process, as a
user waits for it) and their ratio, measured in the same run on the same machine.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from baton.service.runtime_file import find_service

#: Seconds the benchmark waits for the service to publish its runtime file.
SERVE_START_SECONDS = 60.0
#: Seconds any one `baton` command may take before the benchmark gives up.
COMMAND_SECONDS = 300.0


def _baton(env: dict[str, str], cwd: Path, *args: str) -> float:
    """Run one `baton` command; its wall time (a failure stops the benchmark)."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "baton.cli.main", *args],
        env=env,
        cwd=str(cwd),
        capture_output=True,
        text=True,
        timeout=COMMAND_SECONDS,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"baton {' '.join(args)} exited {done.returncode}: {done.stderr}")
    return elapsed


def _second_turn(env: dict[str, str], cwd: Path, name: str, agent: str, *local: str) -> float:
    _baton(env, cwd, "session", "new", name, "--agent-command", agent, *local)
    _baton(env, cwd, "run", "--session", name, *local, "echo one")
    return _baton(env, cwd, "run", "--session", name, *local, "echo two")


def main() -> int:
    """Run the benchmark; print the medians and the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--startup-delay", type=float, default=2.0, metavar="SECONDS")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="baton-warm-bench-") as scratch:
        root = Path(scratch)
        cwd = root / "work"
        cwd.mkdir()
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(root),
            "BATON_HOME": str(root / "data"),
            "BATON_AUTOSTART": "0",  # the explicit rounds: no background start
        }
        agent = f"{sys.executable} -m baton.agents.scripted --startup-delay {args.startup_delay:g}"
        cold = [
            _second_turn(env, cwd, f"cold-{n}", agent, "--no-server") for n in range(args.rounds)
        ]
        service = subprocess.Popen(
            [sys.executable, "-m", "baton.cli.main", "serve"],
            env=env,
            cwd=str(cwd),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + SERVE_START_SECONDS
            while find_service(root / "data") is None:
                if service.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("baton serve did not start")
                time.sleep(0.05)
            warm = [_second_turn(env, cwd, f"warm-{n}", agent) for n in range(args.rounds)]
        finally:
            service.send_signal(signal.SIGTERM)
            service.wait(timeout=COMMAND_SECONDS)
        by_default = {**env, "BATON_AUTOSTART": "1", "BATON_HOME": str(root / "default")}
        try:
            auto = [_second_turn(by_default, cwd, f"auto-{n}", agent) for n in range(args.rounds)]
        finally:
            _baton(by_default, cwd, "serve", "--stop")
    cold_median, warm_median = statistics.median(cold), statistics.median(warm)
    auto_median = statistics.median(auto)
    print(f"scripted agent start-up delay: {args.startup_delay:g}s, {args.rounds} rounds")
    shown = lambda times: ", ".join(f"{t:.2f}" for t in times)  # noqa: E731
    print(f"second turn, cold CLI (--no-server):     median {cold_median:.2f}s ({shown(cold)})")
    print(f"second turn, warm (through the service): median {warm_median:.2f}s ({shown(warm)})")
    print(f"second turn, by default (auto-started):  median {auto_median:.2f}s ({shown(auto)})")
    print(f"ratio cold/warm: {cold_median / warm_median:.1f}x")
    print(f"ratio cold/default: {cold_median / auto_median:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
