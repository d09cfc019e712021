"""The ask flow: no-user answers, validation, and the budget that keeps running."""

from __future__ import annotations

import asyncio

import pytest

from baton.runtime.permissions import ask as ask_module
from baton.runtime.permissions.ask import (
    AskAnswer,
    AskPrompt,
    NoUserAsker,
    ask_within,
    ask_within_budget,
)
from baton.runtime.permissions.local_policy import LocalDecision
from baton.wire.budget import TurnBudget
from baton.wire.permission import PermissionOption, PermissionRequest

OPTIONS = (
    PermissionOption("yes", "Yes", "allow_once"),
    PermissionOption("no", "No", "reject_once"),
)


def _prompt(offered: tuple[PermissionOption, ...] = OPTIONS) -> AskPrompt:
    request = PermissionRequest("s", "t", {"toolCallId": "t", "kind": "edit"}, OPTIONS)
    local = LocalDecision(True, "paths_inside_worktree", "1 path(s) inside the worktree")
    return AskPrompt(request, request.tool_call, offered, local, "the ask policy")


class Answers:
    """Answers ``answer`` once ``release`` is set; counts cancellations."""

    def __init__(self, answer: AskAnswer) -> None:
        self.answer = answer
        self.release = asyncio.Event()
        self.cancelled = 0

    async def ask(self, prompt: AskPrompt) -> AskAnswer:
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        return self.answer


class Never:
    """Waits forever."""

    async def ask(self, prompt: AskPrompt) -> AskAnswer:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


class Fails:
    def __init__(self, error: BaseException) -> None:
        self.error = error

    async def ask(self, prompt: AskPrompt) -> AskAnswer:
        raise self.error


async def test_no_user_answers_cancelled() -> None:
    answer = await NoUserAsker().ask(_prompt())
    assert answer.is_cancelled
    assert (answer.answered_by, answer.code, answer.reason) == (
        "default",
        ask_module.NO_USER,
        "no user available",
    )


async def test_a_user_answer_passes_through() -> None:
    asker = Answers(AskAnswer.selected("no"))
    asker.release.set()
    answer = await ask_within(asker, _prompt(), 30.0)
    assert (answer.option_id, answer.answered_by, answer.code) == ("no", "user", "selected")


async def test_an_answer_naming_an_option_not_offered_becomes_cancelled() -> None:
    asker = Answers(AskAnswer.selected("yes"))
    asker.release.set()
    answer = await ask_within(asker, _prompt(offered=OPTIONS[1:]), 30.0)
    assert answer.is_cancelled and answer.code == ask_module.INVALID_ANSWER
    assert answer.answered_by == "default"


async def test_a_wait_that_outlives_the_deadline_is_cancelled_and_the_asker_stopped() -> None:
    asker = Answers(AskAnswer.selected("yes"))
    answer = await asyncio.wait_for(ask_within(asker, _prompt(), 0.05), timeout=30)
    assert answer.is_cancelled
    assert (answer.answered_by, answer.code) == ("default", ask_module.BUDGET_ELAPSED)
    assert asker.cancelled == 1


async def test_a_spent_deadline_never_starts_waiting() -> None:
    answer = await asyncio.wait_for(ask_within(Never(), _prompt(), 0.0), timeout=30)
    assert answer.code == ask_module.BUDGET_ELAPSED


async def test_no_deadline_waits_for_the_user() -> None:
    asker = Answers(AskAnswer.user_cancelled("Ctrl-C"))
    task = asyncio.create_task(ask_within(asker, _prompt(), None))
    await asyncio.sleep(0.05)
    assert not task.done()
    asker.release.set()
    answer = await asyncio.wait_for(task, timeout=30)
    assert (answer.option_id, answer.answered_by, answer.reason) == (None, "user", "Ctrl-C")


@pytest.mark.parametrize("error", [OSError("tty gone"), EOFError()])
async def test_prompt_io_failures_are_cancellations(error: BaseException) -> None:
    answer = await ask_within(Fails(error), _prompt(), 30.0)
    assert answer.is_cancelled and answer.code == ask_module.PROMPT_FAILED


async def test_other_asker_errors_propagate() -> None:
    with pytest.raises(ZeroDivisionError):
        await ask_within(Fails(ZeroDivisionError()), _prompt(), 30.0)


async def test_cancelling_the_wait_cancels_the_asker() -> None:
    asker = Answers(AskAnswer.selected("yes"))
    task = asyncio.create_task(ask_within(asker, _prompt(), None))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert asker.cancelled == 1


async def test_the_budget_wait_follows_the_clock_not_its_first_reading() -> None:
    # A frozen clock: the idle bound never elapses, however long the user takes.
    clock = TurnBudget(idle=0.05).start(now=0.0)
    asker = Answers(AskAnswer.selected("yes"))
    task = asyncio.create_task(ask_within_budget(asker, _prompt(), clock, lambda: 0.0))
    await asyncio.sleep(0.2)  # several idle periods of real time
    assert not task.done()
    asker.release.set()
    answer = await asyncio.wait_for(task, timeout=30)
    assert answer.option_id == "yes"


async def test_the_budget_elapsing_while_waiting_answers_cancelled() -> None:
    # Each reading of the clock moves it on 0.04 s: the wait expires after a few readings.
    ticks = iter(n * 0.04 for n in range(1_000_000))
    clock = TurnBudget(absolute=0.1).start(now=0.0)
    asker = Answers(AskAnswer.selected("yes"))
    answer = await asyncio.wait_for(
        ask_within_budget(asker, _prompt(), clock, lambda: next(ticks)), timeout=30
    )
    assert answer.is_cancelled and answer.code == ask_module.BUDGET_ELAPSED
    assert "absolute bound" in answer.reason
    assert asker.cancelled == 1


async def test_no_budget_means_no_bound() -> None:
    clock = TurnBudget().start(now=0.0)
    asker = Answers(AskAnswer.selected("no"))
    asker.release.set()
    answer = await ask_within_budget(asker, _prompt(), clock, lambda: 1e9)
    assert answer.option_id == "no"
