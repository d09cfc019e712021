"""Who can answer a run's questions in the service (issue 30, item 1).

A session prompt sent by `baton run --session` says whether its sender can answer the turn's
questions itself (``callerAnswers``: a CLI with a terminal answers at that terminal, through
the API). When it cannot (a CLI in CI, a pipe) and nobody else follows the run (no event
stream of the run that did not say ``?answers=none``: an inspector's run page, an API client),
a question is answered at once as in-process: a permission cancelled and an elicitation
declined, "no user available". Otherwise the question waits, as before, for the first answer
from the terminal, the inspector or the API.

A prompt that does not say (an API client's, the inspector's) keeps the service's behaviour:
its questions wait for an answer through the API up to the service's wait.
"""

from __future__ import annotations

from typing import Final

from baton.service.feeds import FeedBoard

#: Runs whose sender said whether it answers, remembered until the run's result. Bounds the
#: table if results were somehow never seen (the oldest entries are forgotten first).
MAX_TRACKED_CALLERS: Final = 4096


class CallerAnswers:
    """For each run sent with ``callerAnswers``, whether its sender can answer."""

    def __init__(self, feeds: FeedBoard) -> None:
        self.feeds = feeds
        self._callers: dict[str, bool] = {}

    def record(self, run_id: str, answers: bool) -> None:
        """Remember what the sender of ``run_id`` said (once the run exists)."""
        if len(self._callers) >= MAX_TRACKED_CALLERS:
            del self._callers[next(iter(self._callers))]
        self._callers[run_id] = answers

    def forget(self, run_id: str) -> None:
        """The run ended: nothing more to decide for it."""
        self._callers.pop(run_id, None)

    def nobody_answers(self, run_id: str | None) -> bool:
        """True when a question of ``run_id`` can reach nobody: its sender said it cannot
        answer and no other subscriber follows the run's events."""
        if run_id is None or self._callers.get(run_id, True):
            return False
        feed = self.feeds.live.get(run_id)
        return feed is None or feed.answering() == 0
