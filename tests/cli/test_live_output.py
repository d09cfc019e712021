"""`baton run` and `baton show` with today's ACP updates (issue 20): notices, compaction, usage
with cost and turn tokens, tool names, in text and JSON."""

from __future__ import annotations

from pathlib import Path

from .helpers import AGENT, baton, json_lines

PROMPT = "notice warning Slow down|Retrying; compact completed Short summary; cost 150; shell ls; echo ok"


def test_text_output_and_show(tmp_path: Path) -> None:
    done = baton(
        tmp_path, "run", "--agent-command", f"{AGENT} --prompt-usage", "--policy", "ask", PROMPT
    )
    assert done.returncode == 0, done.stderr
    err = done.stderr
    assert "! notice: Slow down — Retrying" in err
    assert "⟲ context compaction [completed]: Short summary" in err
    assert "(Bash)" in err
    summary = next(line for line in err.splitlines() if line.startswith("— "))
    assert "42/200,000 tokens · $1.5000 · turn " in summary and " in, " in summary
    run_id = summary.rsplit("run ", 1)[1].strip()
    shown = baton(tmp_path, "show", run_id)
    assert shown.returncode == 0, shown.stderr
    assert "usage      42/200,000 tokens · $1.5000 · turn" in shown.stdout
    assert "notice" in shown.stdout and "[warning] Slow down — Retrying" in shown.stdout
    assert "[completed] Short summary" in shown.stdout


def test_json_events_and_result_line(tmp_path: Path) -> None:
    done = baton(
        tmp_path, "run", "--agent-command", f"{AGENT} --prompt-usage", "--format", "json", PROMPT
    )
    assert done.returncode == 0, done.stderr
    lines = json_lines(done.stdout)
    types = [line["type"] for line in lines]
    assert "notice" in types and "compaction" in types
    result = lines[-1]
    assert result["usage"]["cost"] == {"amount": 1.5, "currency": "USD"}
    assert set(result["usage"]["turn"]) == {
        "totalTokens",
        "inputTokens",
        "outputTokens",
        "cachedReadTokens",
        "cachedWriteTokens",
    }
    tools = [line for line in lines if line["type"] == "tool_call"]
    assert tools and all(t["name"] == "Bash" for t in tools)


def test_v2_turn_usage_in_the_result_line_summary_and_show(tmp_path: Path) -> None:
    agent = f"{AGENT} --protocol 2 --prompt-usage"
    done = baton(
        tmp_path,
        "run",
        "--protocol",
        "2",
        "--agent-command",
        agent,
        "--format",
        "json",
        "cost 150; echo ok",
    )
    assert done.returncode == 0, done.stderr
    lines = json_lines(done.stdout)
    assert any(line["type"] == "state" for line in lines)  # a v2 turn
    result = lines[-1]
    turn = result["usage"]["turn"]
    assert turn["totalTokens"] == turn["inputTokens"] + turn["outputTokens"]
    assert result["usage"]["cost"] == {"amount": 1.5, "currency": "USD"}
    text = baton(tmp_path, "run", "--protocol", "2", "--agent-command", agent, "cost 150; echo ok")
    assert text.returncode == 0, text.stderr
    summary = next(line for line in text.stderr.splitlines() if line.startswith("— "))
    assert "42/200,000 tokens · $1.5000 · turn " in summary and " in, " in summary
    shown = baton(tmp_path, "show", summary.rsplit("run ", 1)[1].strip())
    assert shown.returncode == 0, shown.stderr
    assert "usage      42/200,000 tokens · $1.5000 · turn" in shown.stdout
