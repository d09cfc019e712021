"""`baton.Batch` from Python: build from a spec, run with callbacks, follow progress, export;
cancelling the caller interrupts the running cell, records the batch CANCELLED and leaves the
cells not started PENDING, which a later run (the resume) starts."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import orjson

import baton
from baton import Batch, BatchSpec, Runtime
from baton.batches import CellEnd, Progress
from baton.batches.spec import parse_document
from baton.store.batches import BatchRecords

AGENT = f"{sys.executable} -m baton.agents.scripted"


def _spec(tmp_path: Path, prompt: str, repeats: int) -> BatchSpec:
    return parse_document(
        {
            "run": {"policy": "auto-edits", "allow_unattended": True},
            "matrix": {"repeats": repeats},
            "tasks": [{"id": "t", "prompt": prompt, "cwd": str(tmp_path)}],
            "agents": [{"id": "a", "command": f"{AGENT} --prompt-log {tmp_path / 'log'}"}],
        },
        source="test",
        base_dir=None,
    )


def _prompts(tmp_path: Path) -> int:
    log = tmp_path / "log"
    return len(log.read_bytes().splitlines()) if log.exists() else 0


def test_the_library_runs_follows_and_exports_a_batch(tmp_path: Path) -> None:
    assert baton.Batch is Batch and baton.load_batch_spec.__name__ == "load_spec"
    ends: list[CellEnd] = []
    seen: list[Progress] = []

    async def go() -> None:
        async with Runtime(data_dir=tmp_path / "d") as runtime:
            batch = Batch.create(runtime, _spec(tmp_path, "echo hi\ncost 4", 3))
            summary = await batch.run(jobs=2, on_cell_end=ends.append, on_progress=seen.append)
            assert summary.state == "COMPLETED" and summary.counts == {"COMPLETED": 3}
            assert summary.cost == {"USD": 0.12} and summary.started == 3
            rows = batch.rows()
            assert [row["reply"] for row in rows] == ["hi"] * 3
            assert orjson.loads(batch.export("jsonl").splitlines()[0])["cost"] == 0.04
            assert batch.export("csv").startswith("batch,cell,task")
            # Opened again by id (another process would), nothing is left to start.
            again = Batch.open(runtime, batch.id[:14])
            assert (await again.run()).started == 0

    asyncio.run(go())
    assert sorted(end.cell.index for end in ends) == [0, 1, 2]
    assert seen[-1].done == 3 and seen[-1].running == 0


def test_cancelling_the_caller_interrupts_and_a_later_run_resumes(tmp_path: Path) -> None:
    async def go() -> None:
        async with Runtime(data_dir=tmp_path / "d", interrupt_timeout=10) as runtime:
            batch = Batch.create(runtime, _spec(tmp_path, "echo start\nslow 1.5", 3))
            task = asyncio.ensure_future(batch.run(jobs=1))
            while _prompts(tmp_path) < 1:  # noqa: ASYNC110 - another process writes the log
                await asyncio.sleep(0.02)
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
            else:
                raise AssertionError("the cancellation was swallowed")
            states = [cell.state for cell in batch.cells()]
            assert states == ["INTERRUPTED", "PENDING", "PENDING"]
            assert batch.record.state == "CANCELLED" and batch.record.owner is None

    asyncio.run(go())

    async def resume() -> None:
        async with Runtime(data_dir=tmp_path / "d") as runtime:
            [record] = BatchRecords(runtime.store).list_batches()
            batch = Batch.open(runtime, record.id)
            summary = await batch.run(jobs=2)
            assert summary.started == 2 and summary.state == "COMPLETED"
            assert summary.counts == {"INTERRUPTED": 1, "COMPLETED": 2}

    asyncio.run(resume())
    assert _prompts(tmp_path) == 3
