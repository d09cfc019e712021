"""The ``items`` table: a run's normalized output items, numbered in order."""

from __future__ import annotations

from collections.abc import Sequence

import orjson

from baton.errors import StoreConflict, UsageError
from baton.store.database import (
    StoreDatabase,
    check_name,
)
from baton.store.models import (
    NewItem,
    StoredItem,
)


class ItemRecords(StoreDatabase):
    """Items: append (numbered after the run's last) and list. Mixed into :class:`baton.store.Store`."""

    def append_items(
        self, run_id: str, items: Sequence[NewItem], *, after: int | None = None
    ) -> list[StoredItem]:
        """Append items to a run, numbered after its last one, in one transaction.

        ``after``: the number of items the caller knows the run had before these (its one
        writer counts them), which makes the append safe to repeat after a try whose commit
        was cut off (a shared store's outage): the items are numbered ``after + 1`` on, and
        those the run already holds (written by that try) are skipped. StoreConflict, writing
        nothing, when the run holds fewer than ``after`` items or more than these add;
        RunClaimLost when this process's claim on the run is no longer current."""
        now = self._now()
        rows = []
        contents = []  # the redacted values, returned as they were stored (not parsed back)
        with self._tx() as conn:
            self._fence(conn, run_id)  # the run's row, locked; this process's claim checked
            last = conn.execute(
                "SELECT COALESCE(MAX(seq), 0) FROM items WHERE run_id = ?", (run_id,)
            ).fetchone()[0]
            present = 0
            if after is not None:
                present = last - after
                if not 0 <= present <= len(items):
                    raise StoreConflict(
                        f"run {run_id} holds {last} items; this append expected {after} "
                        f"to {after + len(items)}"
                    )
                last = after
            for offset, item in enumerate(items, start=1):
                if item.coalesced_events < 1:
                    raise UsageError("an item coalesces at least one event")
                content, text = self._redacted_json(item.content, "item content")
                contents.append(content)
                rows.append(
                    (
                        run_id,
                        last + offset,
                        check_name(item.kind, "item kind"),
                        text,
                        item.coalesced_events,
                        now,
                    )
                )
            if rows[present:]:
                self._insert_rows(
                    conn,
                    "INSERT INTO items (run_id, seq, kind, content, coalesced_events, created_at)",
                    rows[present:],
                )
        return [
            StoredItem(run_id, seq, kind, content, events, created)
            for (run_id, seq, kind, _, events, created), content in zip(rows, contents, strict=True)
        ]

    def list_items(self, run_id: str) -> list[StoredItem]:
        """A run's items in order."""
        return [
            StoredItem(row[0], row[1], row[2], orjson.loads(row[3]), row[4], row[5])
            for row in self._conn.execute(
                "SELECT run_id, seq, kind, content, coalesced_events, created_at FROM items "
                "WHERE run_id = ? ORDER BY seq",
                (run_id,),
            )
        ]
