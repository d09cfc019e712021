"""`baton export`: a run and a session as ATIF and as JSON lines, to stdout and to a file;
a session's cost per turn from the agent's running total; a name that is neither refused
(docs/trajectories.md)."""

from __future__ import annotations

from pathlib import Path

import orjson
from tests.cli.helpers import AGENT, baton, json_lines


def test_a_run_as_atif_and_as_json_lines(tmp_path: Path) -> None:
    done = baton(tmp_path, "run", "--agent-command", AGENT, "--json", "echo hi; think hmm")
    assert done.returncode == 0, done.stderr
    run_id = json_lines(done.stdout)[-1]["runId"]
    out = tmp_path / "trajectory.json"
    exported = baton(tmp_path, "export", run_id[:10], "--format", "atif", "-o", str(out))
    assert exported.returncode == 0, exported.stderr
    assert exported.stdout == ""
    trajectory = orjson.loads(out.read_bytes())
    assert trajectory["trajectory_id"] == run_id
    assert [s["source"] for s in trajectory["steps"]] == ["user", "agent"]
    assert trajectory["steps"][1]["reasoning_content"] == "hmm"
    assert trajectory["agent"]["name"] == "custom"
    assert "baton.agents.scripted" in trajectory["agent"]["extra"]["command"]
    assert not list(tmp_path.glob(".trajectory.json.*"))
    lines = baton(tmp_path, "export", run_id, "--format", "acp-jsonl")
    assert lines.returncode == 0, lines.stderr
    events = json_lines(lines.stdout)
    assert [e["type"] for e in events][-1] == "result"
    assert any(e["type"] == "text" and e["text"] == "hi" for e in events)


def test_a_session_exports_its_turns_with_each_turns_cost(tmp_path: Path) -> None:
    state = tmp_path / "agent-state"
    command = f"{AGENT} --state-dir {state}"
    made = baton(tmp_path, "session", "new", "evals", "--agent-command", command)
    assert made.returncode == 0, made.stderr
    for prompt in ("echo one; cost 30", "echo two; cost 50"):
        turn = baton(tmp_path, "run", "--session", "evals", prompt)
        assert turn.returncode == 0, turn.stderr
    exported = baton(tmp_path, "export", "evals")
    assert exported.returncode == 0, exported.stderr
    trajectory = orjson.loads(exported.stdout)
    assert trajectory["trajectory_id"] == "session:evals"
    steps = trajectory["steps"]
    assert [s["source"] for s in steps] == ["user", "agent", "user", "agent"]
    assert [s["message"] for s in steps[1::2]] == ["one", "two"]
    # ACP's cost is the session's running total: each turn's own is the difference.
    costs = [s["metrics"]["cost_usd"] for s in steps[1::2]]
    assert costs == [0.3, 0.2]
    assert trajectory["final_metrics"]["total_cost_usd"] == 0.5
    lines = json_lines(baton(tmp_path, "export", "evals", "--format", "acp-jsonl").stdout)
    assert [e["type"] for e in lines].count("prompt") == 2
    # A turn without a cost leaves the next turn's own cost unknown (absent, never 0).
    for prompt in ("echo three", "echo four; cost 90"):
        turn = baton(tmp_path, "run", "--session", "evals", prompt)
        assert turn.returncode == 0, turn.stderr
    trajectory = orjson.loads(baton(tmp_path, "export", "evals").stdout)
    agent = [s for s in trajectory["steps"] if s["source"] == "agent"]
    assert [s.get("metrics", {}).get("cost_usd") for s in agent] == [0.3, 0.2, None, None]
    assert agent[3]["metrics"]["extra"]["session_cost"] == {"amount": 0.9, "currency": "USD"}
    assert "total_cost_usd" not in trajectory["final_metrics"]
    # One run alone: the turn before it is read from the store.
    run_ids = [s["extra"]["run_id"] for s in agent]
    alone = [orjson.loads(baton(tmp_path, "export", r).stdout) for r in run_ids]
    costs = [t["final_metrics"].get("total_cost_usd") for t in alone]
    assert costs == [0.3, 0.2, None, None]


def test_a_name_that_is_neither_a_run_nor_a_session(tmp_path: Path) -> None:
    baton(tmp_path, "run", "--agent-command", AGENT, "echo hi")
    missing = baton(tmp_path, "export", "nothing-here")
    assert missing.returncode != 0
    assert "RUN_NOT_FOUND" in missing.stderr and "Traceback" not in missing.stderr
    bad = baton(tmp_path, "export", "x", "--format", "csv")
    assert bad.returncode == 2 and "invalid choice" in bad.stderr


def test_exports_hold_only_redacted_text(tmp_path: Path) -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    prompt = f"echo token {token}; think also {token}; shell echo {token}"
    done = baton(tmp_path, "run", "--agent-command", AGENT, "--json", prompt)
    run_id = json_lines(done.stdout)[-1]["runId"]
    for form in ("atif", "acp-jsonl"):
        exported = baton(tmp_path, "export", run_id, "--format", form)
        assert exported.returncode == 0, exported.stderr
        assert token not in exported.stdout and "[REDACTED]" in exported.stdout
