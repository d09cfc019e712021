"""Asking a person: the prompt, the answer, and the bound on how long Baton waits.

An :class:`Asker` is whatever can put a question to a user (the CLI's TTY prompt, an inspector,
a test). Its answer is an option id the agent offered or a cancellation. Where nobody can answer
(CI, a pipe) :class:`NoUserAsker` answers cancelled, recorded as "no user available".

The turn budget keeps running while Baton waits, also when no frame arrives: a wait that
outlives it is answered cancelled (:func:`ask_within`, :func:`ask_within_budget`). An answer that
names an option Baton did not offer is turned into a cancellation, so a faulty asker can never
grant what the policy withheld.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol

from baton.runtime.permissions.local_policy import LocalDecision
from baton.wire.budget import BudgetClock
from baton.wire.permission import PermissionOption, PermissionRequest

#: The reason recorded when nobody can be asked.
NO_USER_REASON: Final = "no user available"

#: Seconds Baton waits for an asker to stop after cancelling it (budget expiry). An asker that
#: ignores cancellation longer than this is abandoned so the answer is not held up.
ASKER_STOP_TIMEOUT_SECONDS: Final = 5.0

AnsweredBy = Literal["user", "default"]


@dataclass(frozen=True, slots=True)
class AskPrompt:
    """What the user is asked: the request, its correlated tool call, the options Baton offers
    (already filtered, in the agent's order), the local decision and why Baton is asking.
    Cancel is always a possible answer and is not among ``offered``."""

    request: PermissionRequest
    tool_call: Mapping[str, Any]
    offered: tuple[PermissionOption, ...]
    local: LocalDecision
    reason: str
    #: The run whose turn asks (None only for a question asked outside a run, as in tests):
    #: a surface that shows several runs' questions names the run with it.
    run_id: str | None = None


# Stable answer codes (they appear in interaction records).
SELECTED: Final = "selected"
USER_CANCELLED: Final = "user_cancelled"
NO_USER: Final = "no_user"
BUDGET_ELAPSED: Final = "budget_elapsed"
INVALID_ANSWER: Final = "invalid_answer"
PROMPT_FAILED: Final = "prompt_failed"


@dataclass(frozen=True, slots=True)
class AskAnswer:
    """A chosen ``option_id``, or ``None`` for cancelled. ``answered_by`` is ``user`` when a
    person answered (Ctrl-C included) and ``default`` when Baton did (no user, budget
    elapsed); ``code`` is a stable answer code and ``reason`` says why in words."""

    option_id: str | None
    answered_by: AnsweredBy
    code: str
    reason: str

    @property
    def is_cancelled(self) -> bool:
        """True when the answer is cancelled."""
        return self.option_id is None

    @classmethod
    def selected(cls, option_id: str, reason: str = "chosen by the user") -> AskAnswer:
        """A person chose ``option_id``."""
        return cls(option_id, "user", SELECTED, reason)

    @classmethod
    def user_cancelled(cls, reason: str = "cancelled by the user") -> AskAnswer:
        """A person cancelled (Ctrl-C, end of input, the cancel choice)."""
        return cls(None, "user", USER_CANCELLED, reason)

    @classmethod
    def default_cancelled(cls, code: str, reason: str) -> AskAnswer:
        """Nobody answered; Baton's default answer, cancelled, with a stable ``code``."""
        return cls(None, "default", code, reason)


class Asker(Protocol):
    """Something that can put a permission question to a user."""

    async def ask(self, prompt: AskPrompt) -> AskAnswer:
        """Ask and return the answer. Must honour cancellation promptly."""
        ...


class NoUserAsker:
    """The asker where no user can answer (not a TTY): always cancelled, "no user available"."""

    async def ask(self, prompt: AskPrompt) -> AskAnswer:
        """Answer cancelled without asking anyone."""
        return AskAnswer.default_cancelled(NO_USER, NO_USER_REASON)


def _validated(prompt: AskPrompt, answer: AskAnswer) -> AskAnswer:
    if answer.option_id is None:
        return answer
    if any(option.option_id == answer.option_id for option in prompt.offered):
        return answer
    return AskAnswer.default_cancelled(
        INVALID_ANSWER, "the answer named an option Baton did not offer"
    )


async def _stop(task: asyncio.Task[AskAnswer], why: object = None) -> None:
    """Cancel the asker's wait, with ``why`` as the cancellation's message (the asker reads it:
    the agent withdrew its request, see ``baton.connection.core.cancelled_by_agent``)."""
    task.cancel(why)
    await asyncio.wait({task}, timeout=ASKER_STOP_TIMEOUT_SECONDS)


async def _ask_until(
    asker: Asker,
    prompt: AskPrompt,
    remaining: Callable[[], float | None],
    expired: Callable[[], str],
) -> AskAnswer:
    task = asyncio.ensure_future(asker.ask(prompt))
    why: object = None
    try:
        while True:
            left = remaining()
            if left is not None and left <= 0:
                await _stop(task)
                return AskAnswer.default_cancelled(BUDGET_ELAPSED, expired())
            done, _ = await asyncio.wait({task}, timeout=left)
            if task in done:
                break
    except asyncio.CancelledError as exc:
        why = exc.args[0] if exc.args else None  # why the caller stopped asking
        raise
    finally:
        if not task.done():
            await _stop(task, why)
    try:
        answer = task.result()
    except (OSError, EOFError) as exc:
        return AskAnswer.default_cancelled(
            PROMPT_FAILED, f"the prompt failed: {exc.__class__.__name__}"
        )
    return _validated(prompt, answer)


async def ask_within(asker: Asker, prompt: AskPrompt, deadline_seconds: float | None) -> AskAnswer:
    """Ask, answering cancelled (by default) when ``deadline_seconds`` pass first; ``None``
    waits without a bound. An asker's I/O failure (``OSError``, ``EOFError``) is a cancelled
    answer; any other exception propagates and the caller answers cancelled."""
    loop = asyncio.get_running_loop()
    started = loop.time()

    def remaining() -> float | None:
        if deadline_seconds is None:
            return None
        return deadline_seconds - (loop.time() - started)

    def expired() -> str:
        return f"the {deadline_seconds:g}s left of the turn budget elapsed waiting for the user"

    return await _ask_until(asker, prompt, remaining, expired)


async def ask_within_budget(
    asker: Asker, prompt: AskPrompt, clock: BudgetClock, now: Callable[[], float]
) -> AskAnswer:
    """Ask within a running turn budget. ``now`` reads the clock the budget uses (the event
    loop's). Frames that arrive while waiting may move the idle bound (``clock.touch``); the
    wait follows it, and ends cancelled once the nearer bound has elapsed."""

    def remaining() -> float | None:
        left = clock.remaining(now())
        return None if left is None else left[0]

    def expired() -> str:
        error = clock.expired(now(), "the user's answer")
        return error.message if error is not None else "the turn budget elapsed"

    return await _ask_until(asker, prompt, remaining, expired)
