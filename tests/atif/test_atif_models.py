"""Baton's ATIF exports pass the format's published models (Harbor's
``harbor.models.trajectories``), in an interpreter of their own: runs with text, thoughts,
tool calls, a diff, permissions, usage and cost, a claude-style subagent, a crashed and a
refused turn, the rich turn again from a fleet run's stored live events (steps split), each
alone and all as one multi-turn trajectory; and the models do reject a
broken one (so the check can fail)."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path
from typing import Any

import orjson

from baton.store import Store
from baton.views.trajectory import ATIF_SCHEMA_VERSION, run_trajectories, trajectory_of
from trajectory_runs import make_runs, make_streamed_run

ATIF_PYTHON = os.environ["BATON_ATIF_PYTHON"]
VALIDATOR = Path(__file__).with_name("validate_atif.py")


def validate(paths: list[Path]) -> dict[str, Any]:
    done = subprocess.run(
        [ATIF_PYTHON, str(VALIDATOR), *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONNOUSERSITE": "1"},
    )
    assert done.returncode == 0, done.stderr
    answer: dict[str, Any] = orjson.loads(done.stdout)
    return answer


def test_exports_validate_with_harbors_models(tmp_path: Path) -> None:
    made = asyncio.run(make_runs(tmp_path / "data", tmp_path / "work", dict(os.environ)))
    streamed = asyncio.run(make_streamed_run(tmp_path / "data", tmp_path / "w2", dict(os.environ)))
    ids = [made.rich, made.subagent, made.crashed, made.failed, streamed]
    with Store.open(tmp_path / "data") as store:
        documents = run_trajectories(store, ids)
        runs = [store.get_run(i) for i in ids]
        documents.append(trajectory_of(store, runs, trajectory_id="all"))
    assert documents[1]["subagent_trajectories"]
    assert documents[0]["steps"][1]["metrics"]["cost_usd"] > 0
    assert any(s["source"] == "system" for s in documents[2]["steps"])
    assert documents[4]["extra"]["baton"]["eventSource"] == ["stream"]
    assert len(documents[4]["steps"]) > len(documents[0]["steps"])
    paths = []
    for index, document in enumerate(documents):
        path = tmp_path / f"trajectory-{index}.json"
        path.write_bytes(orjson.dumps(document))
        paths.append(path)
    broken = dict(documents[0], steps=[dict(documents[0]["steps"][0], step_id=2)])
    bad = tmp_path / "broken.json"
    bad.write_bytes(orjson.dumps(broken))
    answer = validate([*paths, bad])
    results = answer["results"]
    assert {results[str(p)] for p in paths} == {"ok"}, results
    assert results[str(bad)].startswith("invalid:") and "step_id" in results[str(bad)]
    # Only the trajectory models (and harbor's package root) were imported.
    assert all(
        m in ("harbor", "harbor.models") or m.startswith("harbor.models.trajectories")
        for m in answer["modules"]
    ), answer["modules"]
    newest = answer["newest"]
    assert newest >= ATIF_SCHEMA_VERSION, (ATIF_SCHEMA_VERSION, newest)
