"""The ``conversations`` and ``conversation_runs`` tables: named, persistent sessions (issue
17) and their runs in order.

Every status write goes through :func:`~baton.store.conversation_status.check_session_transition`
inside its transaction. An ACTIVE conversation names its owning Baton process (``pid:start
ticks``, like a run's owner); only that process may attach runs to it or end its turn, and a
dead owner's claim is settled by :meth:`ConversationRecords.reconcile_conversation`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, cast

import orjson

from baton.errors import (
    SessionBusy,
    SessionNameTaken,
    SessionNotFound,
    StoreConflict,
    UsageError,
)
from baton.store.conversation_status import INITIAL_SESSION_STATUS, check_session_transition
from baton.store.database import (
    MAX_ID_CHARS,
    MAX_LIST_ROWS,
    StoreConnection,
    StoreDatabase,
    check_in,
    check_name,
    id_chunks,
    new_id,
)
from baton.store.models import (
    ACTIVE_RUN_STATUSES,
    CONVERSATION_STATUSES,
    Conversation,
    ConversationStatus,
    Run,
)
from baton.store.runs import RUN_COLUMNS, _run

CONVERSATION_COLUMNS: Final = (
    "id, name, profile, agent_command, env_keys, cwd, settings, provider_session_id, "
    "capabilities, status, owner, active_run_id, note, created_at, last_used_at, updated_at, "
    "forked_from, fork_turns"
)
#: Run statuses that leave a conversation RECOVERY_REQUIRED: an unknown outcome, or a turn
#: still recorded as in flight (its owner died before reconciliation reached it).
UNSETTLED_RUN_STATUSES: Final = frozenset(ACTIVE_RUN_STATUSES | {"RECOVERY_REQUIRED"})
#: Most ``--env`` key names one conversation records (each a name, bounded like one).
MAX_ENV_KEYS: Final = 64
#: Most runs one conversation lists (its history is paged from the newest by the caller).
MAX_CONVERSATION_RUNS: Final = MAX_LIST_ROWS


class ConversationRecords(StoreDatabase):
    """Conversations: create (claimed by its creator), read, list, claim a turn, attach runs,
    end a turn, close, reconcile a dead owner, delete. Mixed into :class:`baton.store.Store`."""

    def create_conversation(
        self,
        name: str,
        profile: str,
        cwd: str,
        *,
        agent_command: str | Sequence[str] | None = None,
        env_keys: Sequence[str] = (),
        settings: Mapping[str, Any] | None = None,
        forked_from: str | None = None,
        fork_turns: int | None = None,
    ) -> Conversation:
        """Record a new conversation, ACTIVE and owned by this process until its provider
        session exists (:meth:`release_conversation`). :class:`SessionNameTaken` when the
        name is in use. ``agent_command`` is redacted like every stored text. A fork names
        its parent (``forked_from``) and how many of the parent's turns it holds."""
        check_name(name, "session name")
        if len(env_keys) > MAX_ENV_KEYS:
            raise UsageError(f"a session records at most {MAX_ENV_KEYS} --env keys")
        keys = [check_name(key, "--env key") for key in env_keys]
        command: str | None = None
        if agent_command is not None:
            value = agent_command if isinstance(agent_command, str) else list(agent_command)
            command = self._json(value, "agent command")
        now = self._now()
        conversation_id = new_id("cnv")
        with self._tx(f"conversation:{name}") as conn:
            # Creations of one name are serialized (SQLite's write lock; on PostgreSQL the
            # name's advisory lock), so this check and the insert below cannot interleave.
            if conn.execute("SELECT 1 FROM conversations WHERE name = ?", (name,)).fetchone():
                raise SessionNameTaken(
                    f"a session named {name!r} already exists; pick another name "
                    "(`baton sessions` lists them)"
                )
            conn.execute(
                "INSERT INTO conversations (id, name, profile, agent_command, env_keys, cwd, "
                "settings, capabilities, status, owner, created_at, last_used_at, "
                "updated_at, forked_from, fork_turns) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, '{}', ?, ?, ?, ?, ?, ?, ?)",
                (
                    conversation_id,
                    name,
                    check_name(profile, "profile"),
                    command,
                    orjson.dumps(keys).decode(),
                    cwd,
                    self._json(dict(settings or {}), "session settings"),
                    INITIAL_SESSION_STATUS,
                    self.owner,
                    now,
                    now,
                    now,
                    forked_from,
                    fork_turns,
                ),
            )
        return self.get_conversation(name)

    def get_conversation(self, name: str) -> Conversation:
        """The conversation ``name``; :class:`SessionNotFound` if there is none."""
        found = self.find_conversation(name)
        if found is None:
            raise SessionNotFound(f"no session named {name!r}; `baton sessions` lists them")
        return found

    def find_conversation(self, name: str) -> Conversation | None:
        """The conversation ``name``, or None."""
        row = self._conn.execute(
            f"SELECT {CONVERSATION_COLUMNS} FROM conversations WHERE name = ?", (name,)
        ).fetchone()
        return None if row is None else _conversation(row)

    def list_conversations(
        self,
        *,
        status: ConversationStatus | None = None,
        profile: str | None = None,
        cwd: str | None = None,
        limit: int = MAX_LIST_ROWS,
    ) -> list[Conversation]:
        """Conversations, most recently used first, optionally filtered."""
        sql = f"SELECT {CONVERSATION_COLUMNS} FROM conversations WHERE 1 = 1"
        args: list[Any] = []
        if status is not None:
            check_in(status, CONVERSATION_STATUSES, "session status")
            sql += " AND status = ?"
            args.append(status)
        if profile is not None:
            sql += " AND profile = ?"
            args.append(profile)
        if cwd is not None:
            sql += " AND cwd = ?"
            args.append(cwd)
        sql += " ORDER BY last_used_at DESC, created_at DESC, id LIMIT ?"
        args.append(max(0, min(limit, MAX_LIST_ROWS)))
        return [_conversation(row) for row in self._conn.execute(sql, args)]

    def turn_counts_by_conversation(self) -> dict[str, int]:
        """How many runs each conversation has, by name (for listings)."""
        return {
            row[0]: row[1]
            for row in self._conn.execute(
                "SELECT c.name, count(cr.run_id) FROM conversations c "
                "LEFT JOIN conversation_runs cr ON cr.conversation_id = c.id GROUP BY c.id"
            )
        }

    def conversation_holders(self, name: str | None = None) -> dict[str, str | None]:
        """The Baton process (``pid:start@host``) whose host holds each conversation's
        provider session, by name (only ``name``'s when given): the owner of its ACTIVE turn,
        else of its newest run, else of the run that created it; None when no run of it
        names one. On a shared store the host part says where the agent process and the
        session's own files are: its turns run there only (docs/fleet.md)."""
        sql = (
            "SELECT c.name, COALESCE(c.owner, r.owner) FROM conversations c "
            "LEFT JOIN runs r ON r.id = COALESCE((SELECT cr.run_id FROM conversation_runs cr "
            "WHERE cr.conversation_id = c.id ORDER BY cr.seq DESC LIMIT 1), c.setup_run_id)"
        )
        args: tuple[str, ...] = ()
        if name is not None:
            sql += " WHERE c.name = ?"
            args = (name,)
        return {row[0]: row[1] for row in self._conn.execute(sql, args)}

    def conversation_names_of_runs(self, run_ids: Iterable[str]) -> dict[str, str]:
        """The name of the named session (conversation) each of ``run_ids`` is a turn of,
        by run id (runs of no conversation are left out), in one query per
        :data:`MAX_IDS_PER_QUERY` ids (listings: no query per row)."""
        names: dict[str, str] = {}
        for chunk in id_chunks(run_ids):
            marks = ", ".join("?" for _ in chunk)
            for run_id, name in self._conn.execute(
                "SELECT cr.run_id, c.name FROM conversation_runs cr JOIN conversations c "
                f"ON c.id = cr.conversation_id WHERE cr.run_id IN ({marks})",
                chunk,
            ):
                names[str(run_id)] = str(name)
        return names

    def conversation_names_of_provider_sessions(
        self, provider_session_ids: Iterable[str]
    ) -> dict[tuple[str, str], str]:
        """The name of the conversation that continues each provider session of
        ``provider_session_ids``, by ``(profile, provider session id)`` (a session's creation
        run, which is no turn of it, is found this way), batched as above."""
        names: dict[tuple[str, str], str] = {}
        for chunk in id_chunks(provider_session_ids):
            marks = ", ".join("?" for _ in chunk)
            for profile, provider_id, name in self._conn.execute(
                "SELECT profile, provider_session_id, name FROM conversations "
                f"WHERE provider_session_id IN ({marks}) ORDER BY created_at",
                chunk,
            ):
                names[(str(profile), str(provider_id))] = str(name)
        return names

    def conversation_runs(self, name: str, *, limit: int = MAX_CONVERSATION_RUNS) -> list[Run]:
        """The conversation's runs, oldest first (the last ``limit`` of them)."""
        conversation = self.get_conversation(name)
        columns = ", ".join(f"r.{c.strip()}" for c in RUN_COLUMNS.split(","))
        rows = self._conn.execute(
            f"SELECT {columns} FROM conversation_runs cr JOIN runs r ON r.id = cr.run_id "
            "WHERE cr.conversation_id = ? ORDER BY cr.seq DESC LIMIT ?",
            (conversation.id, max(0, min(limit, MAX_CONVERSATION_RUNS))),
        ).fetchall()
        return [_run(row) for row in reversed(rows)]

    def conversation_of_run(self, run_id: str) -> Conversation | None:
        """The conversation whose turn ``run_id`` is, or None (a run of no named session)."""
        columns = ", ".join(f"c.{c.strip()}" for c in CONVERSATION_COLUMNS.split(","))
        row = self._conn.execute(
            f"SELECT {columns} FROM conversation_runs cr "
            "JOIN conversations c ON c.id = cr.conversation_id WHERE cr.run_id = ? LIMIT 1",
            (run_id,),
        ).fetchone()
        return None if row is None else _conversation(row)

    def conversation_prompted(self, name: str) -> bool:
        """True when a prompt may have reached the conversation's provider session: one of its
        runs cites a sent prompt, or got past setup (any status but QUEUED, STARTING or
        FAILED). In doubt, true."""
        conversation = self.get_conversation(name)
        row = self._conn.execute(
            "SELECT EXISTS (SELECT 1 FROM conversation_runs cr JOIN runs r ON r.id = cr.run_id "
            "WHERE cr.conversation_id = ? AND (r.prompt_ref IS NOT NULL "
            "OR r.status NOT IN ('QUEUED', 'STARTING', 'FAILED')))",
            (conversation.id,),
        ).fetchone()
        return bool(row[0])

    # --- turns ---------------------------------------------------------------------------

    def claim_conversation(self, name: str) -> Conversation:
        """IDLE -> ACTIVE, owned by this process: the one active turn. :class:`StoreConflict`
        (writing nothing) when it is not IDLE; the caller reads why from the record."""
        with self._tx() as conn:
            status, _owner = self._status_of(conn, name)
            if status != "IDLE":
                raise StoreConflict(f"session {name} is {status}, not IDLE")
            check_session_transition(name, status, "ACTIVE")
            conn.execute(
                "UPDATE conversations SET status = 'ACTIVE', owner = ?, active_run_id = NULL, "
                "updated_at = ? WHERE name = ?",
                (self.owner, self._now(), name),
            )
        return self.get_conversation(name)

    def attach_conversation_run(self, name: str, run_id: str, *, setup: bool = False) -> None:
        """The run of this process's ACTIVE turn: appended to the conversation's runs and
        remembered as the active one (``setup``: the creation's session/new, remembered apart
        and not a turn of the conversation)."""
        with self._tx() as conn:
            conversation_id = self._owned(conn, name)
            if setup:
                conn.execute(
                    "UPDATE conversations SET setup_run_id = ?, updated_at = ? WHERE id = ?",
                    (run_id, self._now(), conversation_id),
                )
                return
            conn.execute(
                "INSERT INTO conversation_runs (conversation_id, seq, run_id) VALUES (?, "
                "(SELECT COALESCE(max(seq), 0) + 1 FROM conversation_runs "
                "WHERE conversation_id = ?), ?)",
                (conversation_id, conversation_id, run_id),
            )
            conn.execute(
                "UPDATE conversations SET active_run_id = ?, updated_at = ? WHERE id = ?",
                (run_id, self._now(), conversation_id),
            )

    def release_conversation(
        self,
        name: str,
        status: ConversationStatus,
        *,
        provider_session_id: str | None = None,
        capabilities: Mapping[str, bool] | None = None,
        note: str | None = None,
    ) -> Conversation:
        """End this process's ACTIVE turn in ``status`` (IDLE, RECOVERY_REQUIRED or CLOSED),
        recording the provider session id and capabilities when given."""
        now = self._now()
        with self._tx() as conn:
            conversation_id = self._owned(conn, name)
            check_session_transition(name, "ACTIVE", status)
            conn.execute(
                "UPDATE conversations SET status = ?, owner = NULL, active_run_id = NULL, "
                "provider_session_id = COALESCE(?, provider_session_id), "
                "capabilities = COALESCE(?, capabilities), note = COALESCE(?, note), "
                "last_used_at = ?, updated_at = ? WHERE id = ?",
                (
                    status,
                    self._text(provider_session_id, MAX_ID_CHARS),
                    None if capabilities is None else orjson.dumps(dict(capabilities)).decode(),
                    self._text(note),
                    now,
                    now,
                    conversation_id,
                ),
            )
        return self.get_conversation(name)

    def close_conversation(self, name: str, note: str | None = None) -> Conversation:
        """IDLE -> CLOSED (final), with a note saying what the provider was told."""
        now = self._now()
        with self._tx() as conn:
            status, _owner = self._status_of(conn, name)
            check_session_transition(name, status, "CLOSED")
            if status != "IDLE":
                raise StoreConflict(f"session {name} is {status}, not IDLE")
            conn.execute(
                "UPDATE conversations SET status = 'CLOSED', note = COALESCE(?, note), "
                "last_used_at = ?, updated_at = ? WHERE name = ?",
                (self._text(note), now, now, name),
            )
        return self.get_conversation(name)

    def delete_conversation(self, name: str) -> None:
        """Delete Baton's record of the conversation (its runs stay); refused while ACTIVE."""
        with self._tx() as conn:
            status, _owner = self._status_of(conn, name)
            if status == "ACTIVE":
                raise SessionBusy(f"session {name} has a turn running; it cannot be removed now")
            conn.execute("DELETE FROM conversations WHERE name = ?", (name,))

    def delete_conversation_claimed(self, name: str) -> None:
        """Delete a conversation whose creation failed: only while this process holds it
        ACTIVE with no provider session (StoreConflict otherwise)."""
        with self._tx() as conn:
            conversation_id = self._owned(conn, name)
            row = conn.execute(
                "SELECT provider_session_id FROM conversations WHERE id = ?", (conversation_id,)
            ).fetchone()
            if row[0] is not None:
                raise StoreConflict(f"session {name} has a provider session; it was created")
            conn.execute("DELETE FROM conversations WHERE id = ?", (conversation_id,))

    def reconcile_conversation(
        self, name: str, owner_alive: Callable[[str | None], bool]
    ) -> Conversation:
        """Settle what the record says against what is true now, in one transaction:

        - ACTIVE whose owner is dead: RECOVERY_REQUIRED when its run is unsettled (in flight
          or RECOVERY_REQUIRED), CLOSED when its creation never produced a provider session,
          IDLE otherwise (the owner died after the turn's outcome was recorded).
        - RECOVERY_REQUIRED none of whose runs is unsettled any more (`baton recover`
          settled it): IDLE.
        """
        with self._tx() as conn:
            row = conn.execute(
                "SELECT id, status, owner, active_run_id, provider_session_id "
                f"FROM conversations WHERE name = ?{self._row_lock}",
                (name,),
            ).fetchone()
            if row is None:
                raise SessionNotFound(f"no session named {name!r}; `baton sessions` lists them")
            conversation_id, status, owner, active_run, provider_id = row
            new: ConversationStatus | None = None
            note: str | None = None
            if status == "ACTIVE" and not owner_alive(owner):
                run_status = None
                if active_run is not None:
                    found = conn.execute(
                        "SELECT status FROM runs WHERE id = ?", (active_run,)
                    ).fetchone()
                    run_status = found[0] if found else None
                if run_status in UNSETTLED_RUN_STATUSES:
                    new = "RECOVERY_REQUIRED"
                elif provider_id is None:
                    new, note = "CLOSED", "its creation never finished (the Baton process died)"
                else:
                    new = "IDLE"
            elif status == "RECOVERY_REQUIRED" and not self._unsettled(conn, conversation_id):
                new = "IDLE"
            if new is not None:
                check_session_transition(name, status, new)
                conn.execute(
                    "UPDATE conversations SET status = ?, owner = NULL, active_run_id = NULL, "
                    "note = COALESCE(?, note), updated_at = ? WHERE id = ?",
                    (new, note, self._now(), conversation_id),
                )
        return self.get_conversation(name)

    # --- helpers -------------------------------------------------------------------------

    def _status_of(self, conn: StoreConnection, name: str) -> tuple[str, str | None]:
        row = conn.execute(
            f"SELECT status, owner FROM conversations WHERE name = ?{self._row_lock}", (name,)
        ).fetchone()
        if row is None:
            raise SessionNotFound(f"no session named {name!r}; `baton sessions` lists them")
        return row[0], row[1]

    def _owned(self, conn: StoreConnection, name: str) -> str:
        """The id of ``name`` if this process holds its ACTIVE turn, else StoreConflict."""
        row = conn.execute(
            f"SELECT id, status, owner FROM conversations WHERE name = ?{self._row_lock}", (name,)
        ).fetchone()
        if row is None:
            raise SessionNotFound(f"no session named {name!r}; `baton sessions` lists them")
        if row[1] != "ACTIVE" or row[2] != self.owner:
            raise StoreConflict(f"session {name} is {row[1]} and not owned by this process")
        return cast(str, row[0])

    def _unsettled(self, conn: StoreConnection, conversation_id: str) -> bool:
        statuses = sorted(UNSETTLED_RUN_STATUSES)
        row = conn.execute(
            "SELECT count(*) FROM conversation_runs cr JOIN runs r ON r.id = cr.run_id "
            f"WHERE cr.conversation_id = ? AND r.status IN ({', '.join('?' for _ in statuses)})",
            (conversation_id, *statuses),
        ).fetchone()
        return bool(row[0])


def _conversation(row: Sequence[Any]) -> Conversation:
    command = None if row[3] is None else orjson.loads(row[3])
    return Conversation(
        id=row[0],
        name=row[1],
        profile=row[2],
        agent_command=command,
        env_keys=list(orjson.loads(row[4])),
        cwd=row[5],
        settings=dict(orjson.loads(row[6])),
        provider_session_id=row[7],
        capabilities={str(k): bool(v) for k, v in orjson.loads(row[8]).items()},
        status=cast(ConversationStatus, row[9]),
        owner=row[10],
        active_run_id=row[11],
        note=row[12],
        created_at=row[13],
        last_used_at=row[14],
        updated_at=row[15],
        forked_from=row[16],
        fork_turns=row[17],
    )
