"""`baton session new --max-cost`: once the session's reported cost reaches the cap, the next
prompt is refused (SESSION_MAX_COST_REACHED) before anything is sent; the turn that crossed
it was not stopped."""

from __future__ import annotations

from pathlib import Path

import orjson

from cli.helpers import AGENT, baton


def test_a_session_over_its_cost_cap_refuses_the_next_prompt(tmp_path: Path) -> None:
    log = tmp_path / "prompts.jsonl"
    agent = f"{AGENT} --prompt-log {log}"
    made = baton(
        tmp_path, "session", "new", "capped", "--agent-command", agent, "--max-cost", "0.2"
    )
    assert made.returncode == 0, made.stderr
    first = baton(tmp_path, "run", "--session", "capped", "--no-server", "echo one\ncost 10")
    assert first.returncode == 0, first.stderr
    # The turn that crosses the cap runs to its end: it is never stopped by it.
    second = baton(tmp_path, "run", "--session", "capped", "--no-server", "cost 25\necho two")
    assert second.returncode == 0 and second.stdout.startswith("two"), second.stderr
    refused = baton(tmp_path, "run", "--session", "capped", "--no-server", "echo three", "--json")
    assert refused.returncode == 2
    assert orjson.loads(refused.stdout.splitlines()[-1])["errorCode"] == "SESSION_MAX_COST_REACHED"
    assert "0.25 USD" in refused.stderr
    prompts = [orjson.loads(line)["text"] for line in log.read_bytes().splitlines()]
    assert "echo three" not in prompts and len([p for p in prompts if "cost" in p]) == 2
    # A session without a cap is not affected.
    assert baton(tmp_path, "session", "new", "free", "--agent-command", agent).returncode == 0
    for prompt in ("cost 100", "echo again"):
        done = baton(tmp_path, "run", "--session", "free", "--no-server", prompt)
        assert done.returncode == 0, done.stderr
