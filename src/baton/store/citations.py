"""Which journal records the store cites: for ``baton journal verify``, and for journal
retention, which must keep every record at or after the oldest one cited."""

from __future__ import annotations

from typing import Final

from baton.durable.refs import JournalRef
from baton.store.database import (
    StoreDatabase,
    ref_value,
)

#: Every (table, column) holding a journal reference, for :meth:`pinned_sequence_floor`.
_CITING_COLUMNS: Final = (
    ("runs", "prompt_ref"),
    ("runs", "response_ref"),
    ("interactions", "request_ref"),
    ("interactions", "response_ref"),
    ("observations", "journal_ref"),
)


class CitationChecks(StoreDatabase):
    """The journal references the store cites. Mixed into :class:`baton.store.Store`."""

    def cited_refs(self, run_id: str | None = None) -> list[tuple[str, JournalRef]]:
        """Every journal reference the store cites (or, with ``run_id``, those of one run and
        its interactions and observations), each with a label naming the citing record. For
        ``baton journal verify``."""
        where_run = "" if run_id is None else " AND id = ?"
        where_child = "" if run_id is None else " AND run_id = ?"
        args: tuple[str, ...] = () if run_id is None else (run_id,)
        queries = (
            (
                "run {} prompt",
                f"SELECT id, prompt_ref FROM runs WHERE prompt_ref IS NOT NULL{where_run}",
            ),
            (
                "run {} response",
                f"SELECT id, response_ref FROM runs WHERE response_ref IS NOT NULL{where_run}",
            ),
            (
                "interaction {} request",
                "SELECT id, request_ref FROM interactions WHERE request_ref IS NOT NULL"
                + where_child,
            ),
            (
                "interaction {} response",
                "SELECT id, response_ref FROM interactions WHERE response_ref IS NOT NULL"
                + where_child,
            ),
            (
                "observation {}",
                "SELECT id, journal_ref FROM observations WHERE journal_ref IS NOT NULL"
                + where_child,
            ),
        )
        cited = []
        for label, sql in queries:
            for row in self._conn.execute(sql, args).fetchall():
                ref = ref_value(row[1])
                if ref is not None:
                    cited.append((label.format(row[0]), ref))
        return cited

    def pinned_sequence_floor(self, server_id: str) -> int | None:
        """The oldest sequence of ``server_id``'s journal a stored record cites, or None: the
        journal's retention keeps every record at or after it
        (``Journal.set_pinned_floor``). An unfinished run cites its prompt once it is sent,
        so every record of its turn from then on is kept."""
        floor: int | None = None
        for table, column in _CITING_COLUMNS:
            row = self._conn.execute(
                f"SELECT MIN({self._json_field(column, 'sequence', integer=True)}) FROM {table} "
                f"WHERE {column} IS NOT NULL AND {self._json_field(column, 'server')} = ?",
                (server_id,),
            ).fetchone()
            if row[0] is not None and (floor is None or row[0] < floor):
                floor = int(row[0])
        return floor
