"""Issue 29: ``$/cancel_request`` from the agent's side. The scripted agent asks and then
withdraws its question (``withdraw KIND SECONDS``); the question on Baton's side must be
withdrawn (the asker's wait is cancelled, and says the agent withdrew it), recorded as
``agent_cancelled``, and the agent answered -32800. Both ACP versions."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from baton.connection.core import cancelled_by_agent
from baton.runtime.permissions.ask import AskAnswer, AskPrompt
from baton.runtime.permissions.elicitations import ElicitationReply
from baton.runtime.runtime import RunRequest, Runtime
from baton.runtime.turns.events import RunEvent
from baton.wire.capabilities import ElicitationOffer

AGENT = [sys.executable, "-m", "baton.agents.scripted"]


class _Absent:
    """An asker and elicitor nobody answers: it waits until its wait is cancelled, and notes
    whether the agent withdrew the question."""

    offer = ElicitationOffer(form=True, url=True)

    def __init__(self) -> None:
        self.withdrawn: list[bool] = []

    async def _wait(self) -> Any:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError as exc:
            self.withdrawn.append(cancelled_by_agent(exc))
            raise

    async def ask(self, prompt: AskPrompt | Any) -> AskAnswer | ElicitationReply:
        result: AskAnswer | ElicitationReply = await self._wait()
        return result


@pytest.mark.parametrize("protocol", [(), ("--protocol", "2")], ids=["v1", "v2"])
@pytest.mark.parametrize("kind", ["permission", "elicit"])
async def test_a_withdrawn_question_is_withdrawn_and_recorded(
    tmp_path: Path, protocol: tuple[str, ...], kind: str
) -> None:
    absent = _Absent()
    async with Runtime(
        data_dir=tmp_path / "data", environ=dict(os.environ), asker=absent, elicitor=absent
    ) as rt:
        events: list[RunEvent] = []
        result = await rt.run(
            RunRequest(
                prompt=f"withdraw {kind} 0.2",
                agent_command=[*AGENT, *protocol],
                cwd=str(tmp_path),
            ),
            on_event=events.append,
        )
        assert result.status == "COMPLETED", result.message
        # The asker's wait was cancelled because the agent withdrew the question.
        assert absent.withdrawn == [True]
        # The agent got -32800 (its report of the reply).
        assert f"withdrawn {kind} answer:" in result.text and "-32800" in result.text
        event_type = "permission" if kind == "permission" else "elicitation"
        [recorded] = [e.data for e in events if e.type == event_type]
        assert recorded["reasonCode"] == "agent_cancelled", recorded
        assert rt.store is not None
        if kind == "permission":
            [interaction] = rt.store.list_interactions(result.run_id)
            assert interaction.choice is None
            assert interaction.reason is not None and "agent cancelled" in interaction.reason
        else:
            [item] = [i for i in rt.store.list_items(result.run_id) if i.kind == "elicitation"]
            assert item.content["reasonCode"] == "agent_cancelled"
            assert item.content["chosenBy"] == "agent"
