"""The ``readiness`` table: the latest readiness check of each profile."""

from __future__ import annotations

from typing import Any

import orjson

from baton.store.database import (
    StoreDatabase,
    check_name,
)
from baton.store.models import (
    ReadinessRecord,
)


class ReadinessRecords(StoreDatabase):
    """Readiness results: replace, read, list. Mixed into :class:`baton.store.Store`."""

    def record_readiness(self, profile: str, state: str, result: Any) -> ReadinessRecord:
        """Replace the readiness result of ``profile``."""
        now = self._now()
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO readiness (profile, state, result, checked_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (profile) DO UPDATE SET state = excluded.state, "
                "result = excluded.result, checked_at = excluded.checked_at",
                (
                    check_name(profile, "profile"),
                    check_name(state, "readiness state"),
                    self._json(result, "readiness result"),
                    now,
                ),
            )
        readiness = self.get_readiness(profile)
        assert readiness is not None
        return readiness

    def get_readiness(self, profile: str) -> ReadinessRecord | None:
        """The latest readiness result of ``profile``, or None."""
        row = self._conn.execute(
            "SELECT profile, state, result, checked_at FROM readiness WHERE profile = ?",
            (profile,),
        ).fetchone()
        return (
            None if row is None else ReadinessRecord(row[0], row[1], orjson.loads(row[2]), row[3])
        )

    def list_readiness(self) -> list[ReadinessRecord]:
        """Every profile's latest readiness result, by profile."""
        return [
            ReadinessRecord(row[0], row[1], orjson.loads(row[2]), row[3])
            for row in self._conn.execute(
                "SELECT profile, state, result, checked_at FROM readiness ORDER BY profile"
            )
        ]
