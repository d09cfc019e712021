"""Waiting out a shared store's outage (baton/store/outage.py): tries repeated only while the
store is unreachable, bounded by the window, and a status write cut off after its commit is
read back instead of applied twice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from baton.errors import RunStatusTransitionInvalid, StoreConflict, StoreUnavailable, UsageError
from baton.store import Store
from baton.store.outage import status_written, until_stored


async def test_a_try_is_repeated_while_the_store_is_unreachable() -> None:
    tries: list[int] = []

    async def flaky() -> str:
        tries.append(1)
        if len(tries) < 3:
            raise StoreUnavailable("the database cannot be reached")
        return "stored"

    assert await until_stored(flaky, pause=0.0) == "stored"
    assert len(tries) == 3


async def test_past_the_window_the_last_failure_is_raised_and_other_errors_at_once() -> None:
    tries: list[int] = []

    async def down() -> None:
        tries.append(1)
        raise StoreUnavailable("the database cannot be reached")

    with pytest.raises(StoreUnavailable):
        await until_stored(down, window=0.0, pause=0.0)
    assert len(tries) == 1

    async def wrong() -> None:
        tries.append(1)
        raise UsageError("a bug")

    with pytest.raises(UsageError):
        await until_stored(wrong, pause=0.0)
    assert len(tries) == 2


class CutAfterCommit:
    """A store whose next status write commits, then reports the connection lost."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.cuts = 1
        self.writes = 0

    def get_run(self, run_id: str) -> Any:
        return self.store.get_run(run_id)

    async def update_run_status(self, run_id: str, status: Any, **fields: Any) -> Any:
        self.writes += 1
        run = await self.store.update_run_status(run_id, status, **fields)
        if self.cuts:
            self.cuts -= 1
            raise StoreUnavailable("the connection was lost inside a transaction")
        return run


async def test_a_status_write_cut_after_its_commit_is_read_back_not_repeated(
    tmp_path: Path,
) -> None:
    with Store(tmp_path / "s.sqlite3") as store:
        run = store.create_run("p", status="STARTING")
        cut = CutAfterCommit(store)
        await status_written(cut, run.id, "RUNNING", expected=("STARTING",))  # type: ignore[arg-type]
        assert store.get_run(run.id).status == "RUNNING"
        assert cut.writes == 1  # the second try found it written
        # A run another writer moved elsewhere is a conflict, as without an outage.
        await store.update_run_status(run.id, "FAILED")
        with pytest.raises(RunStatusTransitionInvalid):
            await status_written(store, run.id, "COMPLETED")
        # One that another writer moved to the same status agrees: nothing to do.
        await status_written(store, run.id, "FAILED")
        with pytest.raises(StoreConflict):
            await status_written(store, store.create_run("q").id, "RUNNING", expected=("STARTING",))
