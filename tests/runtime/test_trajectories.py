"""Trajectories without Harbor (its models validate them in tests/atif, `make test-atif`):
the ATIF structure of a run with text, thoughts, tool calls, a diff, permissions, usage and
cost, a subagent and failures; unknown metrics absent, never 0; the acp-jsonl lines; steps
split from a live event stream, folded and as a fleet run stores it (docs/trajectories.md)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import orjson
import pytest

from baton.errors import RunNotFound
from baton.store import Store
from baton.views.trajectory import (
    ATIF_SCHEMA_VERSION,
    acp_jsonl_lines,
    resolve_export_target,
    run_trajectories,
)
from baton.views.trajectory_steps import atif_step, fold_events
from trajectory_runs import CRASH_PROMPT, RICH_PROMPT, MadeRuns, make_runs, make_streamed_run


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, MadeRuns]:
    base = tmp_path_factory.mktemp("trajectories")
    runs = asyncio.run(make_runs(base / "data", base / "work", dict(os.environ)))
    return base / "data", runs


def trajectories(made: tuple[Path, MadeRuns], *names: str) -> list[dict[str, Any]]:
    data, runs = made
    with Store.open(data) as store:
        return run_trajectories(store, [getattr(runs, n) for n in names])


def check_structure(trajectory: dict[str, Any]) -> None:
    """What the ATIF models check, without them: ids from 1, agent-only fields on agent
    steps, observation results keyed by a call of their step, subagents resolvable."""
    assert trajectory["schema_version"] == ATIF_SCHEMA_VERSION
    assert {"name", "version"} <= set(trajectory["agent"])
    assert [s["step_id"] for s in trajectory["steps"]] == list(
        range(1, len(trajectory["steps"]) + 1)
    )
    for step in trajectory["steps"]:
        assert step["source"] in ("user", "agent", "system")
        if step["source"] != "agent":
            assert not {"tool_calls", "metrics", "reasoning_content", "model_name"} & set(step)
        calls = {c["tool_call_id"] for c in step.get("tool_calls", ())}
        for result in step.get("observation", {}).get("results", ()):
            assert result.get("source_call_id") in calls | {None}
    embedded = [s["trajectory_id"] for s in trajectory.get("subagent_trajectories", ())]
    assert len(embedded) == len(set(embedded))
    for sub in trajectory.get("subagent_trajectories", ()):
        check_structure(sub)


def test_a_rich_run(made: tuple[Path, MadeRuns]) -> None:
    [trajectory] = trajectories(made, "rich")
    check_structure(trajectory)
    user, agent = trajectory["steps"]
    assert user["source"] == "user" and user["message"] == RICH_PROMPT
    assert agent["message"] == "Looking around.Done."
    assert agent["reasoning_content"] == "The notes file is missing"
    calls = {c["tool_call_id"]: c for c in agent["tool_calls"]}
    assert [c["function_name"] for c in calls.values()] == ["Write", "Bash"]
    assert calls["call_2"]["arguments"] == {"command": "rm -rf build"}
    results = {r["source_call_id"]: r for r in agent["observation"]["results"]}
    write, shell = results["call_1"], results["call_2"]
    assert "+first line" in write["content"] and write["extra"]["diff"]["added"] == 1
    assert [p["granted"] for p in write["extra"]["permissions"]] == [True]
    assert shell["extra"]["status"] == "failed"
    assert [p["outcome"] for p in shell["extra"]["permissions"]] == ["cancelled"]
    assert [e["content"] for e in agent["extra"]["plan"]] == ["Read", "Write", "Report"]
    metrics = agent["metrics"]
    assert metrics["cost_usd"] == pytest.approx(0.3)
    assert metrics["prompt_tokens"] > 0 and metrics["completion_tokens"] > 0
    final = trajectory["final_metrics"]
    assert final["total_cost_usd"] == pytest.approx(0.3) and final["total_steps"] == 2
    assert final["total_prompt_tokens"] == metrics["prompt_tokens"]


def test_a_subagent_is_an_embedded_trajectory(made: tuple[Path, MadeRuns]) -> None:
    [trajectory] = trajectories(made, "subagent")
    check_structure(trajectory)
    agent = trajectory["steps"][1]
    assert [c["function_name"] for c in agent["tool_calls"]] == ["Task"]
    [result] = agent["observation"]["results"]
    [ref] = result["subagent_trajectory_ref"]
    [sub] = trajectory["subagent_trajectories"]
    assert ref["trajectory_id"] == sub["trajectory_id"]
    assert sub["agent"]["extra"]["parentToolCallId"] == result["source_call_id"]
    assert [c["function_name"] for c in sub["steps"][0]["tool_calls"]] == ["Read"]


def test_unknown_usage_stays_absent(made: tuple[Path, MadeRuns]) -> None:
    # The claude-like profile runs the agent without --prompt-usage: no counts, no cost.
    [trajectory] = trajectories(made, "subagent")
    assert not any("metrics" in s for s in trajectory["steps"])
    assert set(trajectory["final_metrics"]) == {"total_steps"}


def test_failures_are_system_steps(made: tuple[Path, MadeRuns]) -> None:
    crashed, failed = trajectories(made, "crashed", "failed")
    for trajectory in (crashed, failed):
        check_structure(trajectory)
    assert crashed["steps"][0]["message"] == CRASH_PROMPT
    assert crashed["steps"][1]["message"] == "Starting."
    last = crashed["steps"][-1]
    assert last["source"] == "system" and last["extra"]["status"] == "RECOVERY_REQUIRED"
    assert "RECOVERY_REQUIRED" in last["message"] and last["extra"]["recovery_reason"]
    end = failed["steps"][-1]
    assert end["source"] == "system" and end["extra"]["status"] == "FAILED"
    assert end["extra"]["error_code"] and end["extra"]["error_code"] in end["message"]


def test_acp_jsonl_lines(made: tuple[Path, MadeRuns]) -> None:
    data, runs = made
    with Store.open(data) as store:
        target = resolve_export_target(store, runs.rich[:12])
        lines = list(acp_jsonl_lines(store, target.runs))
        with pytest.raises(RunNotFound):
            resolve_export_target(store, "no-such-thing")
    assert all(line.endswith(b"\n") and line.count(b"\n") == 1 for line in lines)
    events = [orjson.loads(line) for line in lines]
    assert {e["runId"] for e in events} == {runs.rich}
    types = [e["type"] for e in events]
    assert types[:3] == ["run_started", "prompt", "session"] and types[-1] == "result"
    assert types.index("permission") > types.index("tool_call")
    assert {"text", "thought", "plan", "usage"} <= set(types)
    assert events[-1]["status"] == "COMPLETED" and events[-1]["usage"]["cost"]["amount"] == 0.3


def _call(call_id: str, status: str, **more: Any) -> dict[str, Any]:
    return {"type": "tool_call", "runId": "r", "toolCallId": call_id, "status": status, **more}


def test_a_live_stream_splits_steps_after_a_completed_tool_call() -> None:
    events = [
        {"type": "thought", "text": "plan it"},
        {"type": "text", "text": "First "},
        _call("a", "pending", name="Bash", command="ls"),
        {"type": "permission", "toolCallId": "a", "optionId": "allow", "granted": True},
        _call("a", "completed"),
        {"type": "text", "text": "Then."},
        _call("t", "in_progress", name="Task"),
        _call("n", "completed", name="Read", parentToolCallId="t"),
        _call("t", "completed"),
        _call("a", "completed", title="late update of a"),
        {"type": "permission", "toolCallId": "nowhere", "optionId": None, "granted": False},
    ]
    folded = fold_events(events)
    first, second = folded.steps
    assert first.message == ["First "] and first.reasoning == ["plan it"]
    assert list(first.calls) == ["a"] and first.calls["a"].view["title"] == "late update of a"
    assert [p["optionId"] for p in first.calls["a"].permissions] == ["allow"]
    assert second.message == ["Then."] and list(second.calls) == ["t"]
    assert list(folded.subagents) == ["t"] and list(folded.subagents["t"].calls) == ["n"]
    assert [p["toolCallId"] for p in second.permissions] == ["nowhere"]
    step = atif_step(second, 3, model_name="m")
    assert step["step_id"] == 3 and step["model_name"] == "m"
    assert step["extra"]["permissions"][0]["granted"] is False
    # Not split (a record rebuilt: the interleaving is unknown): one step.
    assert len(fold_events(events, split=False).steps) == 1


async def test_a_fleet_runs_stored_events_give_the_steps_in_order(tmp_path: Path) -> None:
    run_id = await make_streamed_run(tmp_path / "data", tmp_path / "work", dict(os.environ))
    with Store.open(tmp_path / "data") as store:
        [trajectory] = run_trajectories(store, [run_id])
        lines = list(acp_jsonl_lines(store, [store.get_run(run_id)]))
        stored = store.run_events(run_id)
    check_structure(trajectory)
    assert trajectory["extra"]["baton"]["eventSource"] == ["stream"]
    user, *agent = trajectory["steps"]
    assert user["source"] == "user" and user["message"] == RICH_PROMPT
    assert [s["message"] for s in agent] == ["Looking around.", "", "Done."]
    assert agent[0]["reasoning_content"] == "The notes file is missing"
    assert [c["function_name"] for c in agent[0]["tool_calls"]] == ["Write"]
    assert [c["function_name"] for c in agent[1]["tool_calls"]] == ["Bash"]
    write = agent[0]["observation"]["results"][0]
    assert [p["granted"] for p in write["extra"]["permissions"]] == [True]
    shell = agent[1]["observation"]["results"][0]
    assert [p["granted"] for p in shell["extra"]["permissions"]] == [False]
    assert "metrics" not in agent[0] and agent[-1]["metrics"]["cost_usd"] == pytest.approx(0.3)
    events = [orjson.loads(line) for line in lines]
    assert [e["type"] for e in events][:2] == ["prompt", "run_started"]
    assert events[1:] == [event for _seq, event in stored]
