"""The ``server_instances`` table: one row per agent server process (its id names its journal)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any, Final, cast

from baton.durable.refs import validate_server_id
from baton.errors import RecordNotFound, StoreConflict
from baton.store.database import (
    MAX_LIST_ROWS,
    StoreDatabase,
    check_in,
    check_name,
    expected_set,
    new_id,
)
from baton.store.models import (
    LIVE_SERVER_STATES,
    SERVER_STATES,
    OneOrMany,
    ServerInstance,
    ServerState,
)

SERVER_COLUMNS: Final = (
    "id, profile, lane, generation, pid, state, diagnostics, created_at, updated_at, ended_at, "
    "owner"
)


class ServerRecords(StoreDatabase):
    """Server instances: create, read, compare-and-set state, mark lost on a cold start. Mixed into :class:`baton.store.Store`."""

    def create_server_instance(
        self,
        profile: str,
        lane: str,
        generation: int,
        *,
        pid: int | None = None,
        state: ServerState = "STARTING",
        server_id: str | None = None,
    ) -> ServerInstance:
        """Record a new server process (its id names its journal)."""
        server_id = validate_server_id(server_id or new_id("srv"))
        check_in(state, SERVER_STATES, "server state")
        now = self._now()
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO server_instances (id, profile, lane, generation, pid, state, "
                "created_at, updated_at, owner) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    server_id,
                    check_name(profile, "profile"),
                    check_name(lane, "lane"),
                    generation,
                    pid,
                    state,
                    now,
                    now,
                    self.owner,
                ),
            )
        return self.get_server_instance(server_id)

    def get_server_instance(self, server_id: str) -> ServerInstance:
        """The server instance ``server_id``; RecordNotFound if there is none."""
        row = self._conn.execute(
            f"SELECT {SERVER_COLUMNS} FROM server_instances WHERE id = ?", (server_id,)
        ).fetchone()
        if row is None:
            raise RecordNotFound(f"no server instance {server_id!r}")
        return _server(row)

    def find_server_instance(self, server_id: str) -> ServerInstance | None:
        """The server instance ``server_id``, or None."""
        row = self._conn.execute(
            f"SELECT {SERVER_COLUMNS} FROM server_instances WHERE id = ?", (server_id,)
        ).fetchone()
        return None if row is None else _server(row)

    def server_instances_by_id(self, server_ids: Iterable[str]) -> dict[str, ServerInstance]:
        """The server instances of ``server_ids`` that exist, by id, in one query per
        :data:`MAX_IDS_PER_QUERY` ids (listings: no query per row)."""
        rows = self._rows_with_ids("server_instances", SERVER_COLUMNS, server_ids)
        return {record.id: record for record in map(_server, rows)}

    def list_server_instances(
        self, *, states: OneOrMany[ServerState] | None = None, profile: str | None = None
    ) -> list[ServerInstance]:
        """Server instances, oldest first, optionally only in ``states`` or of ``profile``."""
        sql = f"SELECT {SERVER_COLUMNS} FROM server_instances WHERE 1 = 1"
        args: list[Any] = []
        wanted = expected_set(states)
        if wanted is not None:
            sql += f" AND state IN ({', '.join('?' for _ in wanted)})"
            args.extend(sorted(wanted))
        if profile is not None:
            sql += " AND profile = ?"
            args.append(profile)
        sql += f" ORDER BY created_at, id LIMIT {MAX_LIST_ROWS}"
        return [_server(row) for row in self._conn.execute(sql, args)]

    def update_server_state(
        self,
        server_id: str,
        state: ServerState,
        *,
        expected: OneOrMany[ServerState] | None = None,
        pid: int | None = None,
        diagnostics: str | None = None,
    ) -> ServerInstance:
        """Move a server to ``state`` (compare-and-set on ``expected``); ``pid`` and
        ``diagnostics`` are set when given. EXITED, FAILED and LOST set ``ended_at``."""
        check_in(state, SERVER_STATES, "server state")
        allowed = expected_set(expected)
        now = self._now()
        with self._tx() as conn:
            row = conn.execute(
                f"SELECT state FROM server_instances WHERE id = ?{self._row_lock}", (server_id,)
            ).fetchone()
            if row is None:
                raise RecordNotFound(f"no server instance {server_id!r}")
            if allowed is not None and row[0] not in allowed:
                raise StoreConflict(
                    f"server instance {server_id} is {row[0]}, not {' or '.join(sorted(allowed))}"
                )
            ended = now if state in ("EXITED", "FAILED", "LOST") else None
            conn.execute(
                "UPDATE server_instances SET state = ?, updated_at = ?, "
                "pid = COALESCE(?, pid), diagnostics = COALESCE(?, diagnostics), "
                "ended_at = COALESCE(ended_at, ?) WHERE id = ?",
                (state, now, pid, self._text(diagnostics), ended, server_id),
            )
        return self.get_server_instance(server_id)

    def mark_live_servers_lost(
        self,
        diagnostics: str,
        *,
        exclude: Collection[str] = (),
        owner_alive: Callable[[str | None], bool] | None = None,
    ) -> list[str]:
        """Cold start: every server recorded as possibly alive (STARTING..STOPPING) becomes
        LOST with ``diagnostics``, except the ids in ``exclude`` and, when ``owner_alive`` is
        given, those whose owning Baton process it says is still alive. Returns the ids."""
        now = self._now()
        live = sorted(LIVE_SERVER_STATES)
        with self._tx() as conn:
            ids = [
                row[0]
                for row in conn.execute(
                    f"SELECT id, owner FROM server_instances WHERE state IN "
                    f"({', '.join('?' for _ in live)}) ORDER BY created_at, id{self._row_lock}",
                    live,
                )
                if row[0] not in exclude and (owner_alive is None or not owner_alive(row[1]))
            ]
            conn.executemany(
                "UPDATE server_instances SET state = 'LOST', diagnostics = ?, updated_at = ?, "
                "ended_at = COALESCE(ended_at, ?) WHERE id = ?",
                [(self._text(diagnostics), now, now, server_id) for server_id in ids],
            )
        return ids


def _server(row: Sequence[Any]) -> ServerInstance:
    return ServerInstance(
        row[0],
        row[1],
        row[2],
        row[3],
        row[4],
        cast(ServerState, row[5]),
        row[6],
        row[7],
        row[8],
        row[9],
        row[10],
    )
