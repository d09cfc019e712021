"""A run's items on their way to the store: the one writer of a turn's materialized output.

The turn hands its items here as the streaming buffer materializes them (a part evicted by a
memory bound mid-turn, every part at the end) and at its end (tool calls, plan, usage,
notices). A write that failed ordinarily (rolled back) is retried up to
:data:`MAX_STREAM_OUTPUT_APPEND_ATTEMPTS` times; one whose outcome is unknown is never
retried. A shared store that went away holds the items (up to
:data:`MAX_ITEMS_HELD_FOR_STORE`) for a later try, which skips what a cut-off try stored (the
append is by count). Output that cannot be recorded makes the run RECOVERY_REQUIRED
(OUTPUT_APPEND_FAILED) and quarantines the lane's generation.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any, Final

from baton.errors import StoreUnavailable
from baton.runtime.lanes.recorder import Recorder
from baton.runtime.turns.outcome import TurnOutcome
from baton.runtime.turns.streaming import Item
from baton.store import NewItem
from baton.store.outage import until_stored

#: Attempts at writing materialized output after an ordinary failure (an ambiguous one is
#: never retried).
MAX_STREAM_OUTPUT_APPEND_ATTEMPTS: Final = 3
#: Most materialized items a turn holds while a shared store is unreachable (the append is
#: repeated once it answers, skipping what a cut-off try stored): bounds the memory an
#: outage costs a streaming turn; past it the output counts as not recorded (as today).
MAX_ITEMS_HELD_FOR_STORE: Final = 1_000


class ItemWrites:
    """One run's items not yet stored, and whether its output could not be recorded."""

    def __init__(self, run_id: str, recorder: Recorder, *, on_failure: Callable[[], Any]) -> None:
        """``on_failure`` is called once output cannot be recorded (the turn quarantines its
        lane's generation)."""
        self._run_id = run_id
        self._recorder = recorder
        self._on_failure = on_failure
        self._held: list[Item] = []
        #: Items of this run the store holds: what makes an append cut off by a shared
        #: store's outage safe to repeat.
        self._stored = 0
        #: Why the output could not be recorded (None: it could, so far).
        self.failed: str | None = None

    def hold(self, items: Sequence[Item]) -> None:
        """Items to write with the next :meth:`write`."""
        self._held.extend(items)

    def write(self) -> bool:
        """Write the items not yet stored. False when a shared store could not be reached:
        they stay held (up to MAX_ITEMS_HELD_FOR_STORE) for a later try, which skips those a
        cut-off try stored. Any other failure is final (see :meth:`not_recorded`). A call on
        the event loop's thread (a part evicted mid-turn, an abandoned turn); the turn's end
        writes through :meth:`write_off_loop`."""
        if not self._held or self.failed is not None:
            return True
        batch = [NewItem(i.kind, i.content, i.coalesced_events) for i in self._held]
        for attempt in range(1, MAX_STREAM_OUTPUT_APPEND_ATTEMPTS + 1):
            try:
                self._recorder.items(self._run_id, batch, after=self._stored)
            except Exception as exc:
                verdict = self._failed(exc, attempt)
                if verdict is None:
                    continue
                return verdict
            return self._written(batch)
        return True  # pragma: no cover - every attempt returns

    async def write_off_loop(self) -> bool:
        """:meth:`write`, the store's round trips off the event loop on a shared store
        (:meth:`baton.store.Store.offload`), so the other lanes go on reading meanwhile.

        Cancellation: the items stay held unless the cancelled append had committed (its
        outcome is unknown, as for any cut-off write; the next try skips what it stored)."""
        if not self._held or self.failed is not None:
            return True
        batch = [NewItem(i.kind, i.content, i.coalesced_events) for i in self._held]
        for attempt in range(1, MAX_STREAM_OUTPUT_APPEND_ATTEMPTS + 1):
            try:
                await self._recorder.items_off_loop(self._run_id, batch, after=self._stored)
            except Exception as exc:
                verdict = self._failed(exc, attempt)
                if verdict is None:
                    continue
                return verdict
            return self._written(batch)
        return True  # pragma: no cover - every attempt returns

    def _written(self, batch: Sequence[NewItem]) -> bool:
        self._stored += len(batch)
        self._held = []
        return True

    def _failed(self, exc: Exception, attempt: int) -> bool | None:
        """What a failed append means: None to try again (rolled back), else what
        :meth:`write` returns."""
        if isinstance(exc, StoreUnavailable):
            if len(self._held) <= MAX_ITEMS_HELD_FOR_STORE:
                return False
            self.not_recorded(f"writing output had an unknown outcome: {exc.code}")
            return True
        if isinstance(exc, sqlite3.OperationalError):
            # Rolled back: an ordinary failure, retried.
            if attempt == MAX_STREAM_OUTPUT_APPEND_ATTEMPTS:
                self.not_recorded(f"writing output failed {attempt} times: {exc}")
                return True
            return None
        # The outcome of the write is unknown: never retried.
        self.not_recorded(f"writing output had an unknown outcome: {type(exc).__name__}")
        return True

    def write_now(self) -> None:
        """Write what is held now, without waiting out a store's outage (the abandoned
        turn's path): an unreachable store makes the output not recorded."""
        if not self.write():
            self.not_recorded("the store could not be reached")

    async def write_waiting_out_outage(self) -> None:
        """Write what is held; when the store went away meanwhile, try again once it answers
        (bounded, :func:`baton.store.outage.until_stored`); the append skips what a cut-off
        try stored. Cancellation: as ``until_stored``'s wait (the items stay held)."""
        if await self.write_off_loop():
            return

        async def again() -> None:
            if not await self.write_off_loop():
                raise StoreUnavailable("the run's output could not be written")

        try:
            await until_stored(again)
        except StoreUnavailable:
            self.not_recorded("the store could not be reached")

    def not_recorded(self, reason: str) -> None:
        """The output cannot be recorded: the held items are discarded and ``on_failure``
        called; :meth:`mark_unrecorded` then makes the outcome RECOVERY_REQUIRED."""
        self.failed = reason
        self._held = []
        self._on_failure()

    def mark_unrecorded(self, outcome: TurnOutcome) -> None:
        """Make ``outcome`` RECOVERY_REQUIRED (OUTPUT_APPEND_FAILED) when output was lost."""
        if self.failed is not None and outcome.status != "RECOVERY_REQUIRED":
            outcome.status = "RECOVERY_REQUIRED"
            outcome.error_code = "OUTPUT_APPEND_FAILED"
            outcome.recovery_reason = self.failed
