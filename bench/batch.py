"""A batch's throughput (issue 32): N cells (default 200) of a short scripted turn run by one
`baton batch run` process at `--jobs` 1, 2, 4 and 8, against the same N prompts as N
sequential `baton run` processes, all in the same run on fresh data directories.

Printed: each variant's wall time and cells per second, its throughput as a ratio to the
sequential processes, and Baton's per-cell overhead in a batch: the wall time per cell at
`--jobs 1` less the agent's own time for the turn (the scripted agent's turn is a few
microseconds of work; the agent process is started once per batch, so what remains is the
runtime's: the run's rows, the session's setup and teardown over ACP, the journal).

    .venv/bin/python bench/batch.py [--cells 200] [--jobs 1,2,4,8]

No timing is asserted anywhere: the ratios are printed, to compare runs on one machine.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

AGENT = f"{sys.executable} -m baton.agents.scripted --no-state-dir"
BATON = [sys.executable, "-m", "baton.cli.main"]
PROMPT = "echo hi"


def _env(home: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "BATON_HOME": str(home / "d"),
    }


def _spec(root: Path, cells: int) -> Path:
    path = root / "spec.jsonl"
    lines = [
        {"run": {"policy": "ask"}},
        {"matrix": {"repeats": cells}},
        {"task": {"id": "short", "prompt": PROMPT, "cwd": str(root)}},
        {"agent": {"id": "scripted", "command": AGENT}},
    ]
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return path


def batch_seconds(cells: int, jobs: int) -> tuple[float, int]:
    """Wall seconds of one `baton batch run` of ``cells`` cells at ``jobs``; the completed."""
    with tempfile.TemporaryDirectory(prefix="baton-bench-batch-") as tmp:
        root = Path(tmp)
        spec = _spec(root, cells)
        started = time.perf_counter()
        done = subprocess.run(
            [*BATON, "batch", "run", str(spec), "--jobs", str(jobs), "--json"],
            cwd=root,
            env=_env(root),
            capture_output=True,
            check=False,
        )
        seconds = time.perf_counter() - started
        summary = orjson.loads(done.stdout.splitlines()[-1])
        return seconds, int(summary["counts"].get("COMPLETED", 0))


def sequential_seconds(cells: int) -> float:
    """Wall seconds of ``cells`` sequential `baton run` processes of the same prompt."""
    with tempfile.TemporaryDirectory(prefix="baton-bench-runs-") as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        for _ in range(cells):
            subprocess.run(
                [*BATON, "run", "--agent-command", AGENT, PROMPT, "--json"],
                cwd=root,
                env=_env(root),
                capture_output=True,
                check=True,
            )
        return time.perf_counter() - started


def agent_turn_seconds(turns: int = 200) -> float:
    """The agent's own time for one turn: one scripted agent process answering ``turns``
    prompts on one session, driven over its pipes directly (no Baton), per turn."""
    proc = subprocess.Popen(
        [*AGENT.split()],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None

    def call(request_id: int, method: str, params: dict[str, object]) -> dict[str, object]:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(
            orjson.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
            + b"\n"
        )
        proc.stdin.flush()
        while True:
            message = orjson.loads(proc.stdout.readline())
            if message.get("id") == request_id:
                return dict(message)

    call(0, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    session = call(1, "session/new", {"cwd": os.getcwd(), "mcpServers": []})["result"]
    session_id = session["sessionId"]  # type: ignore[index]
    started = time.perf_counter()
    for index in range(turns):
        call(
            2 + index,
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": PROMPT}]},
        )
    seconds = (time.perf_counter() - started) / turns
    proc.stdin.close()
    proc.wait(timeout=30)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cells", type=int, default=200)
    parser.add_argument("--jobs", default="1,2,4,8")
    args = parser.parse_args()
    jobs_list = [int(j) for j in args.jobs.split(",")]
    cells = args.cells
    print(f"{cells} cells of {PROMPT!r} with the scripted agent; {os.cpu_count()} cores")
    sequential = sequential_seconds(cells)
    print(f"sequential `baton run` x{cells}: {sequential:.2f}s ({cells / sequential:.1f} cells/s)")
    agent = agent_turn_seconds()
    results: dict[int, float] = {}
    for jobs in jobs_list:
        seconds, completed = batch_seconds(cells, jobs)
        results[jobs] = seconds
        print(
            f"batch --jobs {jobs}: {seconds:.2f}s ({cells / seconds:.1f} cells/s, "
            f"{completed}/{cells} completed), throughput x{sequential / seconds:.2f} vs sequential"
        )
    if 1 in results:
        per_cell = results[1] / cells
        print(
            f"per-cell: {per_cell * 1000:.1f} ms in a batch at --jobs 1, "
            f"{sequential / cells * 1000:.1f} ms as its own `baton run` process; "
            f"the agent's own turn {agent * 1000:.2f} ms; "
            f"Baton's overhead per cell {(per_cell - agent) * 1000:.1f} ms"
        )


if __name__ == "__main__":
    main()
