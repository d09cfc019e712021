"""A batch on the fleet (issue 32): `baton batch run --fleet` on PostgreSQL queues every cell
for 3 workers (separate processes, each its own host), which run them, each once; the batch
record and the results are in the shared store, read from another host; a resume after the
batch process was killed submits nothing twice (the cells' idempotency keys)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from baton.store import Store
from baton.store.batches import BatchRecords
from baton.store.owner import owner_host

from .test_fleet import _baton, _until

pytestmark = pytest.mark.slow


def _spec(fleet: Any, tmp_path: Path) -> Path:
    lines = [
        {"run": {"policy": "auto-edits", "allow_unattended": True}},
        {"matrix": {"repeats": 2}},
        {"task": {"id": "hi", "prompt": "echo hi\ncost 3", "cwd": str(tmp_path)}},
        {"task": {"id": "no", "prompt": "echo no\nstop refusal", "cwd": str(tmp_path)}},
        {"task": {"id": "bad", "prompt": "echo x\nnot_a_command", "cwd": str(tmp_path)}},
        {"agent": {"id": "one", "command": fleet.agent_command()}},
        {"agent": {"id": "two", "command": fleet.agent_command() + " --profile claude"}},
    ]
    path = tmp_path / "spec.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return path


def _lines(text: str) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in text.splitlines() if line.strip()]


async def _start_batch(
    fleet: Any, tmp_path: Path, lines: list[dict[str, Any]], output: int
) -> tuple[dict[str, str], asyncio.subprocess.Process]:
    """`baton batch run` of ``lines`` on the fleet's queue ``evals`` (2 at a time) as a client
    host's process; its environment and the process (its output to ``output``)."""
    spec = tmp_path / "spec-started.jsonl"
    spec.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    env = {**os.environ, "BATON_HOME": str(tmp_path / "client"), "BATON_HOST": "client-host"}
    env.pop("BATON_STORE", None)
    argv = ["batch", "run", str(spec), "--store", fleet.url, "--fleet", "evals", "--jobs", "2"]
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "baton", *argv, env=env, stdout=output, stderr=output
    )
    return env, process


async def test_a_batch_on_three_workers_runs_each_cell_once(fleet: Any, tmp_path: Path) -> None:
    for name in ("w1", "w2", "w3"):
        fleet.start_worker(name, "evals")
    env = {**os.environ, "BATON_HOME": str(tmp_path / "client"), "BATON_HOST": "client-host"}
    env.pop("BATON_STORE", None)
    code, out, err = await _baton(
        env, "batch", "run", str(_spec(fleet, tmp_path)), "--store", fleet.url,
        "--fleet", "evals", "--jobs", "12", "--json",
    )  # fmt: skip
    assert code == 1, err  # the failing and refusing cells
    summary = _lines(out)[-1]
    assert summary["state"] == "COMPLETED" and summary["started"] == 12
    assert summary["counts"] == {"COMPLETED": 4, "FAILED": 8}
    assert summary["cost"] == {"USD": 0.12}
    prompts = fleet.prompts()
    assert len(prompts) == 12  # each cell's prompt arrived once
    # Another host reads the batch and its results from the shared store.
    elsewhere = {**env, "BATON_HOME": str(tmp_path / "other"), "BATON_HOST": "another-host"}
    code, out, err = await _baton(
        elsewhere, "batch", "export", summary["batchId"], "--store", fleet.url
    )
    assert code == 0, err
    rows = _lines(out)
    assert [row["state"] for row in rows] == ["COMPLETED"] * 4 + ["FAILED"] * 8
    assert {row["stopReason"] for row in rows[4:8]} == {"refusal"}
    assert all(row["cost"] == 0.03 for row in rows[:4])
    assert all(row["cost"] == "unknown" for row in rows[4:])
    # Every cell ran on a worker's host, none in the batch process.
    with Store(fleet.url, read_only=True) as store:
        hosts = {owner_host(store.get_run(row["runId"]).owner) for row in rows}
    assert hosts <= {"host-w1", "host-w2", "host-w3"} and hosts, hosts
    # A resume starts nothing: every cell has its one run.
    code, out, err = await _baton(
        elsewhere, "batch", "resume", summary["batchId"], "--store", fleet.url, "--fleet",
        "evals", "--json",
    )  # fmt: skip
    assert _lines(out)[-1]["started"] == 0, err
    assert len(fleet.prompts()) == 12


async def test_a_killed_fleet_batch_resumes_without_submitting_twice(
    fleet: Any, tmp_path: Path
) -> None:
    for name in ("w1", "w2", "w3"):
        fleet.start_worker(name, "evals")
    lines = [
        {"matrix": {"repeats": 6}},
        {"task": {"id": "slow", "prompt": "echo s\nslow 0.3", "cwd": str(tmp_path)}},
        {"agent": {"id": "one", "command": fleet.agent_command()}},
    ]
    env, process = await _start_batch(fleet, tmp_path, lines, asyncio.subprocess.DEVNULL)
    await _until(lambda: len(fleet.prompts()) >= 2)
    process.send_signal(signal.SIGKILL)
    await process.wait()
    with Store(fleet.url, read_only=True) as store:
        [batch] = BatchRecords(store).list_batches()
    code, out, err = await _baton(
        env, "batch", "resume", batch.id, "--store", fleet.url, "--fleet", "evals", "--json"
    )
    assert code == 0, err
    assert _lines(out)[-1]["counts"] == {"COMPLETED": 6}, out
    assert len(fleet.prompts()) == 6
    with Store(fleet.url, read_only=True) as store:
        assert all(len(cell.runs) == 1 for cell in BatchRecords(store).batch_cells(batch.id))


async def test_a_fleet_batch_cancel_interrupts_the_cells_workers_run(
    fleet: Any, tmp_path: Path
) -> None:
    fleet.start_worker("w1", "evals")
    lines = [
        {"matrix": {"repeats": 2}},
        {"task": {"id": "long", "prompt": "echo s\nslow 60", "cwd": str(tmp_path)}},
        {"agent": {"id": "one", "command": fleet.agent_command()}},
    ]
    env, process = await _start_batch(fleet, tmp_path, lines, asyncio.subprocess.PIPE)
    await _until(lambda: len(fleet.prompts()) >= 1)  # one cell runs on the worker
    with Store(fleet.url, read_only=True) as store:
        [batch] = BatchRecords(store).list_batches()
    elsewhere = {**env, "BATON_HOME": str(tmp_path / "other"), "BATON_HOST": "another-host"}
    code, _out, err = await _baton(elsewhere, "batch", "cancel", batch.id, "--store", fleet.url)
    assert code == 0, err
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 1, (out, err)  # interrupted cells: exit 1, as a local batch
    with Store(fleet.url, read_only=True) as store:
        assert BatchRecords(store).get_batch(batch.id).state == "CANCELLED"
        cells = BatchRecords(store).batch_cells(batch.id)
        statuses = sorted(store.get_run(cell.runs[0]).status for cell in cells if cell.runs)
    # The cells a worker ran were interrupted (none left running for its 60 s); one no worker
    # took yet was cancelled in the queue.
    assert "INTERRUPTED" in statuses and set(statuses) <= {"CANCELLED", "INTERRUPTED"}, statuses
    assert len(fleet.prompts()) == statuses.count("INTERRUPTED")
