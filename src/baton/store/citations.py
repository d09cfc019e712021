"""Which journal records the store cites: for ``baton journal verify``."""

from __future__ import annotations

from baton.durable.refs import JournalRef
from baton.store.database import (
    StoreDatabase,
    ref_value,
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
