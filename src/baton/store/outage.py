"""Waiting out an outage of a shared store (a PostgreSQL restart, a network cut) without
blocking the event loop: :func:`until_stored` runs one store action again, with an
``asyncio.sleep`` between tries, while it fails with STORE_UNAVAILABLE, for a bounded time.

The action must be safe to run again after a try whose outcome is unknown (a write whose
COMMIT was cut off): a compare-and-set that first reads back whether the earlier try already
took effect (:func:`status_written`), or an idempotent write. The store never replays a write
blindly; this module only repeats the ones written to be repeated.

A SQLite store never raises STORE_UNAVAILABLE, so on one host these calls run once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeVar

from baton.errors import StoreConflict, StoreUnavailable
from baton.store.models import RunStatus
from baton.store.run_status import reached
from baton.store.store import Store

_T = TypeVar("_T")

#: How long a write that must land (a run's status as its turn moves on or ends, the record
#: that its prompt went out) keeps trying while the store cannot be reached (seconds). It
#: covers a restart or a failover of the database server; past it the write fails with
#: STORE_UNAVAILABLE and the run is left to its worker's sweep (docs/fleet.md).
OUTAGE_WINDOW_SECONDS: Final = 60.0
#: The pause between two tries (seconds): bounds the load a waiting writer puts on a server
#: that is coming back, and the delay after it is back.
OUTAGE_PAUSE_SECONDS: Final = 0.5


async def until_stored(
    action: Callable[[], Awaitable[_T]],
    *,
    window: float = OUTAGE_WINDOW_SECONDS,
    pause: float = OUTAGE_PAUSE_SECONDS,
) -> _T:
    """``await action()``, tried again every ``pause`` seconds while it raises
    StoreUnavailable, for up to ``window`` seconds (then the last StoreUnavailable is
    raised). Other errors propagate at once.

    Cancellation: safe between tries; cancelled during a try, that try's outcome is unknown
    (as for any store write)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + window
    while True:
        try:
            return await action()
        except StoreUnavailable:
            if loop.time() >= deadline:
                raise
        await asyncio.sleep(pause)


async def status_written(store: Store, run_id: str, status: RunStatus, **fields: Any) -> None:
    """Move run ``run_id`` to ``status`` (:meth:`Store.update_run_status` with ``fields``),
    waiting out a store outage (:func:`until_stored`). A try cut off by the outage may have
    committed: the next try reads the run first and stops when it is already in ``status``,
    so the change is applied once. StoreConflict (the run moved elsewhere meanwhile) and
    StoreUnavailable past the window propagate.

    Cancellation: as :func:`until_stored`."""
    tried = False

    async def write() -> None:
        nonlocal tried
        if tried and reached(store.get_run(run_id).status, status):
            return  # the try that was cut off had committed
        tried = True
        await store.update_run_status(run_id, status, **fields)

    try:
        await until_stored(write)
    except StoreConflict:
        if not reached(store.get_run(run_id).status, status):
            raise  # another writer moved it elsewhere; one that moved it here agrees with us
