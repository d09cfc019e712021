"""The ``sessions`` table: ACP sessions Baton created or attached, with their native state."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Final, cast

import orjson

from baton.errors import RecordNotFound, StoreConflict
from baton.store.database import (
    MAX_ID_CHARS,
    MAX_LIST_ROWS,
    StoreDatabase,
    check_in,
    check_name,
    expected_set,
    new_id,
)
from baton.store.models import (
    STORED_SESSION_STATES,
    OneOrMany,
    StoredSession,
    StoredSessionState,
)

SESSION_COLUMNS: Final = (
    "id, provider_session_id, server_instance_id, profile, cwd, state, native_state, "
    "created_at, updated_at"
)


class SessionRecords(StoreDatabase):
    """Sessions: create, find (also by provider id), list, compare-and-set update. Mixed into :class:`baton.store.Store`."""

    def create_session(
        self,
        profile: str,
        cwd: str,
        *,
        server_instance_id: str | None = None,
        provider_session_id: str | None = None,
        state: StoredSessionState = "CREATING",
        native_state: Any = None,
        session_id: str | None = None,
    ) -> StoredSession:
        """Record a session (before or after session/new answered)."""
        check_in(state, STORED_SESSION_STATES, "session state")
        session_id = session_id or new_id("ses")
        now = self._now()
        with self._tx() as conn:
            conn.execute(
                f"INSERT INTO sessions ({SESSION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    session_id,
                    self._text(provider_session_id, MAX_ID_CHARS),
                    server_instance_id,
                    check_name(profile, "profile"),
                    cwd,
                    state,
                    self._json({} if native_state is None else native_state, "native state"),
                    now,
                    now,
                ),
            )
        return self.get_session(session_id)

    def get_session(self, session_id: str) -> StoredSession:
        """The session ``session_id``; RecordNotFound if there is none."""
        row = self._conn.execute(
            f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        if row is None:
            raise RecordNotFound(f"no session {session_id!r}")
        return _session(row)

    def find_session(self, session_id: str) -> StoredSession | None:
        """The session ``session_id``, or None."""
        row = self._conn.execute(
            f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        return None if row is None else _session(row)

    def sessions_by_id(self, session_ids: Iterable[str]) -> dict[str, StoredSession]:
        """The sessions of ``session_ids`` that exist, by id, in one query per
        :data:`MAX_IDS_PER_QUERY` ids (listings: no query per row)."""
        rows = self._rows_with_ids("sessions", SESSION_COLUMNS, session_ids)
        return {record.id: record for record in map(_session, rows)}

    def find_session_by_provider_id(
        self, profile: str, provider_session_id: str
    ) -> StoredSession | None:
        """The newest session of ``profile`` with that provider session id, or None."""
        row = self._conn.execute(
            f"SELECT {SESSION_COLUMNS} FROM sessions WHERE profile = ? AND "
            "provider_session_id = ? ORDER BY created_at DESC LIMIT 1",
            (profile, provider_session_id),
        ).fetchone()
        return None if row is None else _session(row)

    def sessions_by_provider_id(
        self, profile: str, provider_session_id: str, *, limit: int = MAX_LIST_ROWS
    ) -> list[StoredSession]:
        """Every session of ``profile`` with that provider session id (one provider session
        attached by several processes), oldest first, at most ``limit``."""
        rows = self._conn.execute(
            f"SELECT {SESSION_COLUMNS} FROM sessions WHERE profile = ? AND "
            "provider_session_id = ? ORDER BY created_at, id LIMIT ?",
            (profile, provider_session_id, limit),
        ).fetchall()
        return [_session(row) for row in rows]

    def list_sessions(
        self, *, profile: str | None = None, state: StoredSessionState | None = None
    ) -> list[StoredSession]:
        """Sessions, oldest first, optionally filtered."""
        sql = f"SELECT {SESSION_COLUMNS} FROM sessions WHERE 1 = 1"
        args: list[Any] = []
        if profile is not None:
            sql += " AND profile = ?"
            args.append(profile)
        if state is not None:
            sql += " AND state = ?"
            args.append(state)
        sql += f" ORDER BY created_at, id LIMIT {MAX_LIST_ROWS}"
        return [_session(row) for row in self._conn.execute(sql, args)]

    def update_session(
        self,
        session_id: str,
        *,
        state: StoredSessionState | None = None,
        expected: OneOrMany[StoredSessionState] | None = None,
        provider_session_id: str | None = None,
        server_instance_id: str | None = None,
        native_state: Any = None,
    ) -> StoredSession:
        """Change a session's fields (those given); compare-and-set on ``expected`` state."""
        if state is not None:
            check_in(state, STORED_SESSION_STATES, "session state")
        allowed = expected_set(expected)
        with self._tx() as conn:
            row = conn.execute(
                f"SELECT state FROM sessions WHERE id = ?{self._row_lock}", (session_id,)
            ).fetchone()
            if row is None:
                raise RecordNotFound(f"no session {session_id!r}")
            if allowed is not None and row[0] not in allowed:
                raise StoreConflict(
                    f"session {session_id} is {row[0]}, not {' or '.join(sorted(allowed))}"
                )
            conn.execute(
                "UPDATE sessions SET state = COALESCE(?, state), "
                "provider_session_id = COALESCE(?, provider_session_id), "
                "server_instance_id = COALESCE(?, server_instance_id), "
                "native_state = COALESCE(?, native_state), updated_at = ? WHERE id = ?",
                (
                    state,
                    self._text(provider_session_id, MAX_ID_CHARS),
                    server_instance_id,
                    None if native_state is None else self._json(native_state, "native state"),
                    self._now(),
                    session_id,
                ),
            )
        return self.get_session(session_id)


def _session(row: Sequence[Any]) -> StoredSession:
    return StoredSession(
        row[0],
        row[1],
        row[2],
        row[3],
        row[4],
        cast(StoredSessionState, row[5]),
        orjson.loads(row[6]),
        row[7],
        row[8],
    )
