"""`baton batch` end to end with the scripted agent, as a user runs it (real subprocesses,
their own data directory, offline): a 3 tasks x 2 agents x 2 repeats batch with a failing and
a refusing task gives the right table and export; a batch process killed with SIGKILL
mid-way, then resumed, runs every cell exactly once (the agent's prompt log counts each
prompt's arrivals) and reports the ambiguous cell instead of rerunning it; ``--max-cost``
stops starting cells and records why; ``batch cancel`` from another process stops a batch."""

from __future__ import annotations

import csv
import io
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import orjson

from cli.helpers import AGENT, BATON, baton, env, json_lines
from workspace_repos import make_repo

#: How long a test waits for a condition a subprocess brings about (never a timed assertion:
#: the condition itself is asserted; this only bounds a broken run).
WAIT_SECONDS = 60


def _spec(
    tmp_path: Path, tasks: list[dict[str, Any]], *, repeats: int = 2, agents: int = 2
) -> Path:
    log = tmp_path / "prompts.jsonl"
    lines = [
        {"run": {"policy": "auto-edits", "allow_unattended": True}},
        {"matrix": {"repeats": repeats}},
        *({"task": task} for task in tasks),
        {"agent": {"id": "plain", "command": f"{AGENT} --prompt-log {log}"}},
        {"agent": {"id": "claude-like", "command": f"{AGENT} --profile claude --prompt-log {log}"}},
    ][: 2 + len(tasks) + agents]
    path = tmp_path / "spec.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return path


def _prompts(tmp_path: Path) -> list[str]:
    log = tmp_path / "prompts.jsonl"
    if not log.exists():
        return []
    return [orjson.loads(line)["text"] for line in log.read_bytes().splitlines() if line.strip()]


def _cells(stdout: str) -> list[dict[str, Any]]:
    return [line for line in json_lines(stdout) if line.get("type") == "cell"]


def test_a_3x2x2_batch_gives_the_right_table_and_export(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    spec = _spec(
        tmp_path,
        [
            {
                "id": "edit",
                "prompt": "write a.txt changed\nsilent_write sneaky.txt x\ncost 7",
                "repo": str(repo),
            },
            {"id": "broken", "prompt": "echo start\nnot_a_command", "cwd": str(tmp_path)},
            {"id": "refuse", "prompt": "echo no\nstop refusal", "cwd": str(tmp_path)},
        ],
    )
    done = baton(tmp_path, "batch", "run", str(spec), "--jobs", "2", "--json")
    assert done.returncode == 1, done.stderr  # a failed cell: exit 1
    lines = json_lines(done.stdout)
    summary = lines[-1]
    assert summary["type"] == "batch" and summary["state"] == "COMPLETED"
    assert summary["counts"] == {"COMPLETED": 4, "FAILED": 8}
    assert summary["cost"] == {"USD": 0.28}
    assert len(_cells(done.stdout)) == 12
    batch_id = summary["batchId"]

    exported = baton(tmp_path, "batch", "export", batch_id, "--format", "jsonl")
    assert exported.returncode == 0, exported.stderr
    rows = json_lines(exported.stdout)
    assert [(r["task"], r["agent"], r["repeat"]) for r in rows] == [
        (task, agent, repeat)
        for task in ("edit", "broken", "refuse")
        for agent in ("plain", "claude-like")
        for repeat in (1, 2)
    ]
    for row in rows[:4]:
        assert row["state"] == "COMPLETED" and row["stopReason"] == "end_turn"
        assert row["exitCode"] == 0 and row["cost"] == 0.07 and row["currency"] == "USD"
        assert row["filesChanged"] == 2 and row["unreportedChanges"] == 1
        assert row["linesAdded"] == 2 and row["linesRemoved"] == 1
        assert row["toolCalls"] == 1 and row["permissionsGranted"] == 1
        assert row["workspace"] and row["diff"] == f"baton diff {row['runId']}"
        assert isinstance(row["wallMs"], int) and isinstance(row["firstOutputMs"], int)
    for row in rows[4:8]:
        assert row["state"] == "FAILED" and row["exitCode"] == 1 and row["errorCode"]
        assert row["stopReason"] is None
    for row in rows[8:]:
        assert row["state"] == "FAILED" and row["stopReason"] == "refusal"
    for row in rows[4:]:
        # Nothing reported: unknown, never 0. (The claude-like agent reports its usage with a
        # refusal, so those two rows carry tokens; no failed cell reports a cost.)
        assert row["cost"] == "unknown"
        reported = row["task"] == "refuse" and row["agent"] == "claude-like"
        assert isinstance(row["tokens"], int) if reported else row["tokens"] == "unknown"
        assert row["filesChanged"] == "unknown" and row["diff"] is None
    assert len({row["runId"] for row in rows}) == 12
    assert all(row["runs"] == [row["runId"]] for row in rows)

    as_csv = baton(tmp_path, "batch", "export", batch_id, "--format", "csv")
    table = list(csv.DictReader(io.StringIO(as_csv.stdout)))
    assert len(table) == 12 and table[4]["cost"] == "unknown" and table[0]["cost"] == "0.07"

    shown = baton(tmp_path, "batch", "show", batch_id)
    assert shown.returncode == 0, shown.stderr
    text_rows = shown.stdout.splitlines()[2:]
    assert len(text_rows) == 12
    assert "refusal" in text_rows[8] and "FAILED" in text_rows[8]
    assert "2 +2/-1 !1" in text_rows[0] and "$0.0700" in text_rows[0]
    listed = baton(tmp_path, "batch", "list", "--json")
    [record] = json_lines(listed.stdout)
    assert record["batchId"] == batch_id and record["specHash"].startswith("sha256:")


def _wait_for(condition: Any, what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def test_sigkill_mid_batch_then_resume_runs_each_cell_exactly_once(tmp_path: Path) -> None:
    tasks = [
        {"id": "one", "prompt": "echo one", "cwd": str(tmp_path)},
        {"id": "two", "prompt": "echo two", "cwd": str(tmp_path)},
        {"id": "slow", "prompt": "echo slow\nslow 2", "cwd": str(tmp_path)},
    ]
    spec = _spec(tmp_path, tasks)
    batch = subprocess.Popen(
        [*BATON, "batch", "run", str(spec), "--jobs", "1", "--json"],
        cwd=tmp_path,
        env=env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        # Cells 0-7 are the quick tasks; cell 8 is the first slow one: kill it mid-turn.
        _wait_for(lambda: len(_prompts(tmp_path)) >= 9, "the ninth prompt")
        os.kill(batch.pid, signal.SIGKILL)
        batch.wait(timeout=WAIT_SECONDS)
    finally:
        if batch.poll() is None:
            batch.kill()
        batch.communicate()
    assert batch.returncode == -signal.SIGKILL
    assert len(_prompts(tmp_path)) == 9
    [listed] = json_lines(baton(tmp_path, "batch", "list", "--json").stdout)
    batch_id = listed["batchId"]

    resumed = baton(tmp_path, "batch", "resume", batch_id, "--jobs", "3", "--json")
    assert resumed.returncode == 6, resumed.stderr  # one cell needs recovery
    summary = json_lines(resumed.stdout)[-1]
    assert summary["ambiguous"] == [8] and summary["started"] == 3
    assert summary["counts"] == {"COMPLETED": 11, "RECOVERY_REQUIRED": 1}
    prompts = _prompts(tmp_path)
    # Every cell's prompt arrived exactly once: 4 per task (2 agents x 2 repeats).
    assert len(prompts) == 12
    assert sorted(prompts) == sorted(t["prompt"] for t in tasks for _ in range(4))
    rows = json_lines(baton(tmp_path, "batch", "export", batch_id).stdout)
    assert all(len(row["runs"]) == 1 for row in rows)
    assert rows[8]["state"] == "RECOVERY_REQUIRED"
    assert rows[8]["errorCode"] == "RUNTIME_RESTARTED"
    # Resuming again starts nothing: the ambiguous cell is reported, not rerun.
    again = baton(tmp_path, "batch", "resume", batch_id, "--json")
    assert json_lines(again.stdout)[-1]["started"] == 0 and len(_prompts(tmp_path)) == 12
    assert "RECOVERY_REQUIRED" in baton(tmp_path, "batch", "show", batch_id).stdout
    # --retry-ambiguous reruns it as a new run recorded on the cell.
    retried = baton(tmp_path, "batch", "resume", batch_id, "--retry-ambiguous", "--json")
    assert retried.returncode == 0, retried.stderr
    assert json_lines(retried.stdout)[-1]["started"] == 1
    assert len(_prompts(tmp_path)) == 13
    row = json_lines(baton(tmp_path, "batch", "export", batch_id).stdout)[8]
    assert row["state"] == "COMPLETED" and len(row["runs"]) == 2 and row["runId"] == row["runs"][1]


def test_max_cost_stops_starting_cells_and_says_why(tmp_path: Path) -> None:
    spec = _spec(
        tmp_path,
        [{"id": "paid", "prompt": "echo hi\ncost 10", "cwd": str(tmp_path)}],
        repeats=5,
        agents=1,
    )
    done = baton(tmp_path, "batch", "run", str(spec), "--jobs", "1", "--max-cost", "0.25", "--json")
    assert done.returncode == 0, done.stderr
    summary = json_lines(done.stdout)[-1]
    assert summary["state"] == "STOPPED"
    assert summary["counts"] == {"COMPLETED": 3, "SKIPPED": 2}
    assert "max-cost reached" in summary["stopReason"]
    assert len(_prompts(tmp_path)) == 3
    rows = json_lines(baton(tmp_path, "batch", "export", summary["batchId"]).stdout)
    assert [row["state"] for row in rows] == ["COMPLETED"] * 3 + ["SKIPPED"] * 2
    assert "max-cost reached" in rows[3]["reason"] and rows[3]["runId"] is None
    # A resume with a higher cap starts the skipped cells only.
    more = baton(tmp_path, "batch", "resume", summary["batchId"], "--max-cost", "1", "--json")
    assert json_lines(more.stdout)[-1]["state"] == "COMPLETED"
    assert len(_prompts(tmp_path)) == 5


def test_cancel_from_another_process_stops_the_batch(tmp_path: Path) -> None:
    spec = _spec(
        tmp_path,
        [{"id": "wait", "prompt": "wait_for_cancel 50", "cwd": str(tmp_path)}],
        repeats=3,
        agents=1,
    )
    batch = subprocess.Popen(
        [*BATON, "batch", "run", str(spec), "--jobs", "1", "--json"],
        cwd=tmp_path,
        env=env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_for(lambda: len(_prompts(tmp_path)) >= 1, "the first prompt")
        [listed] = json_lines(baton(tmp_path, "batch", "list", "--json").stdout)
        cancelled = baton(tmp_path, "batch", "cancel", listed["batchId"])
        assert cancelled.returncode == 0, cancelled.stderr
        out, err = batch.communicate(timeout=WAIT_SECONDS)
    finally:
        if batch.poll() is None:
            batch.kill()
    summary = json_lines(out)[-1]
    assert summary["state"] == "CANCELLED", err
    assert summary["counts"] == {"INTERRUPTED": 1, "SKIPPED": 2}
    assert len(_prompts(tmp_path)) == 1


def test_bad_specs_are_refused_with_their_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"task": {"id": "t", "prompt": "hi"}}\n{"agent": {"id": "a"}}\n')
    done = baton(tmp_path, "batch", "run", str(path), "--json")
    assert done.returncode == 2
    [error] = json_lines(done.stdout)
    assert error["type"] == "error" and error["errorCode"] == "BATCH_SPEC_INVALID"
    assert f"{path}:2" in done.stderr and "profile and command" in done.stderr
    toml = tmp_path / "bad.toml"
    toml.write_text('[[tasks]]\nid = "t"\nprompt = "x"\nrepos = "."\n')
    done = baton(tmp_path, "batch", "run", str(toml))
    assert done.returncode == 2 and "tasks[0].repos: unknown field" in done.stderr
    assert "Traceback" not in done.stderr
    missing = baton(tmp_path, "batch", "show", "batch-nope")
    assert missing.returncode == 2 and "BATCH_NOT_FOUND" in missing.stderr


def test_a_batch_exports_one_trajectory_per_run(tmp_path: Path) -> None:
    spec = _spec(
        tmp_path,
        [{"id": "hello", "prompt": "echo hello", "cwd": str(tmp_path)}],
        repeats=1,
    )
    done = baton(tmp_path, "batch", "run", str(spec), "--jobs", "1", "--json")
    assert done.returncode == 0, done.stderr
    summary = json_lines(done.stdout)[-1]
    run_ids = sorted(cell["runId"] for cell in _cells(done.stdout))
    assert len(run_ids) == 2

    atif = baton(tmp_path, "export", summary["batchId"], "--format", "atif")
    assert atif.returncode == 0, atif.stderr
    documents = json_lines(atif.stdout)
    assert sorted(document["trajectory_id"] for document in documents) == run_ids
    assert all(document["schema_version"].startswith("ATIF-") for document in documents)

    events = baton(tmp_path, "export", summary["batchId"], "--format", "acp-jsonl")
    assert events.returncode == 0, events.stderr
    started = [line for line in json_lines(events.stdout) if line.get("type") == "run_started"]
    assert sorted(line["runId"] for line in started) == run_ids
