"""Opening Baton's store from a CLI verb: the data directory, the journal, and the passive
startup reconciliation every process performs before it reports anything."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, is_dataclass
from typing import Any

from baton.journal import Journal, JournalRef
from baton.runtime.lanes.reconcile import reconcile
from baton.store import Store, data_dir


@contextmanager
def open_store(flag: str | None) -> Iterator[tuple[Store, Journal]]:
    """The store and journal of the data directory (``--data-dir`` > ``BATON_HOME`` >
    platform default), reconciled: stale runs of a dead Baton become RECOVERY_REQUIRED."""
    path = data_dir(flag)
    journal = Journal.in_data_dir(path)
    store = Store.open(path, flush=journal.flush_refs)
    try:
        asyncio.run(reconcile(store))
        yield store, journal
    finally:
        store.close()


def plain(value: Any) -> Any:
    """A record as JSON types (journal references as dicts)."""
    if isinstance(value, JournalRef):
        return value.to_dict()
    if is_dataclass(value) and not isinstance(value, type):
        return {key: plain(item) for key, item in asdict(value).items()}
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    return value
