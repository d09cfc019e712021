"""A question put to a person makes the run AWAITING_APPROVAL in the store, and RUNNING again
once answered (runtime/turns/questions.py), through a real turn against the scripted agent."""

from __future__ import annotations

import sys
from pathlib import Path

from baton.runtime.permissions.ask import AskAnswer, AskPrompt
from baton.runtime.runtime import RunRequest, Runtime

AGENT = [sys.executable, "-m", "baton.agents.scripted", "--no-state-dir"]


class WatchingAsker:
    """Answers allow, noting the run's stored status and count while it is asked."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.seen: list[tuple[str, int]] = []

    async def ask(self, prompt: AskPrompt) -> AskAnswer:
        assert self.runtime.store is not None
        [run] = [r for r in self.runtime.store.list_runs() if r.status not in ("COMPLETED",)]
        self.seen.append((run.status, run.pending_questions))
        allow = next(o for o in prompt.offered if o.is_allow)
        return AskAnswer.selected(allow.option_id)


async def test_a_person_asked_makes_the_run_awaiting_approval(tmp_path: Path) -> None:
    async with Runtime(data_dir=tmp_path / "data") as runtime:
        asker = WatchingAsker(runtime)
        runtime.asker = asker
        result = await runtime.run(
            RunRequest(
                prompt="write a.txt one; write b.txt two",
                agent_command=AGENT,
                cwd=str(tmp_path),
            )
        )
        assert result.status == "COMPLETED"
        assert asker.seen == [("AWAITING_APPROVAL", 1), ("AWAITING_APPROVAL", 1)]
        assert runtime.store is not None
        stored = runtime.store.get_run(result.run_id)
        assert (stored.status, stored.pending_questions) == ("COMPLETED", 0)


async def test_nobody_to_ask_opens_no_question(tmp_path: Path) -> None:
    async with Runtime(data_dir=tmp_path / "data") as runtime:  # NoUserAsker: cancelled at once
        result = await runtime.run(
            RunRequest(prompt="write a.txt one", agent_command=AGENT, cwd=str(tmp_path))
        )
        assert result.status == "COMPLETED"
        assert runtime.store is not None
        assert runtime.store.get_run(result.run_id).pending_questions == 0
