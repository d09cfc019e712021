"""The run store's schema, as an ordered list of migrations keyed by ``PRAGMA user_version``.

Migration *n* (1-based) takes a database at version *n - 1* to version *n*. Each runs in one
``BEGIN IMMEDIATE`` transaction together with the version bump, so a failure leaves the
database at the previous version, and two processes opening the same store migrate it once.
Migrations are append-only: a released one is never edited, a change is a new migration.

A step is SQL text (SQLite's dialect, rendered for PostgreSQL by :mod:`baton.store.dialect`),
or a :class:`CheckValues`: a column's ``CHECK (column IN (...))`` list replaced, which the two
backends do differently from that one definition. SQLite cannot alter a constraint: the table
is rebuilt the way SQLite documents (https://sqlite.org/lang_altertable.html, "making other
kinds of table schema changes"): foreign keys off for the migration, a new table with the new
constraint, the rows copied, the old table dropped, the new one renamed, its indexes and
triggers recreated, then ``PRAGMA foreign_key_check`` before the commit. PostgreSQL drops and
re-adds the named constraint (:func:`baton.store.dialect.postgres_check_values`).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from baton.errors import MigrationInvalid, StoreSchemaTooNew


@dataclass(frozen=True, slots=True)
class CheckValues:
    """A migration step: the ``CHECK (column IN (...))`` constraint that ``table`` declares
    on ``column`` allows exactly ``values`` from now on (every row must already be one)."""

    table: str
    column: str
    values: tuple[str, ...]

    def check_sql(self) -> str:
        """The constraint's SQL, as a column definition carries it."""
        return _in(self.column, self.values)


#: One step of a migration: SQL text, or a constraint change (see the module docstring).
MigrationStep = str | CheckValues
Migration = Sequence[MigrationStep]


def _in(column: str, values: Sequence[str]) -> str:
    listed = ", ".join(f"'{value}'" for value in values)
    return f"CHECK ({column} IN ({listed}))"


_SERVER_STATES = (
    "STARTING",
    "READY",
    "RUNNING",
    "DEGRADED",
    "STOPPING",
    "EXITED",
    "FAILED",
    "LOST",
)
_SESSION_STATES = ("CREATING", "READY", "ACTIVE", "NOT_LOADED", "CLOSED", "FAILED")
_RUN_STATUSES = (
    "QUEUED",
    "STARTING",
    "RUNNING",
    "AWAITING_APPROVAL",
    "INTERRUPTING",
    "COMPLETED",
    "FAILED",
    "INTERRUPTED",
    "RECOVERY_REQUIRED",
    "LOST",
)
_INTERACTION_STATES = ("PENDING", "RESOLVED", "CANCELLED", "ABORTED")
#: The identifiers a :class:`CheckValues` step may name (the store's own, never input).
_IDENTIFIER = re.compile(r"[a-z_]+")
#: The suffix of the table a SQLite rebuild creates before it takes the old one's name.
_REBUILD_SUFFIX: Final = "__rebuild"

#: Version 1: servers, sessions, runs, items, interactions, observations, readiness.
V1: Final[Migration] = (
    f"""
    CREATE TABLE server_instances (
        id          TEXT PRIMARY KEY,
        profile     TEXT NOT NULL,
        lane        TEXT NOT NULL,
        generation  INTEGER NOT NULL,
        pid         INTEGER,
        state       TEXT NOT NULL {_in("state", _SERVER_STATES)},
        diagnostics TEXT,
        created_at  TEXT NOT NULL,
        updated_at  TEXT NOT NULL,
        ended_at    TEXT
    ) STRICT
    """,
    "CREATE INDEX server_instances_state ON server_instances (state)",
    f"""
    CREATE TABLE sessions (
        id                  TEXT PRIMARY KEY,
        provider_session_id TEXT,
        server_instance_id  TEXT REFERENCES server_instances (id),
        profile             TEXT NOT NULL,
        cwd                 TEXT NOT NULL,
        state               TEXT NOT NULL {_in("state", _SESSION_STATES)},
        native_state        TEXT NOT NULL,
        created_at          TEXT NOT NULL,
        updated_at          TEXT NOT NULL
    ) STRICT
    """,
    "CREATE INDEX sessions_provider ON sessions (profile, provider_session_id)",
    f"""
    CREATE TABLE runs (
        id                 TEXT PRIMARY KEY,
        session_id         TEXT REFERENCES sessions (id),
        server_instance_id TEXT REFERENCES server_instances (id),
        status             TEXT NOT NULL {_in("status", _RUN_STATUSES)},
        stop_reason        TEXT,
        prompt_text        TEXT NOT NULL,
        error_code         TEXT,
        diagnostic         TEXT,
        skipped_frames     INTEGER NOT NULL DEFAULT 0,
        violations         INTEGER NOT NULL DEFAULT 0,
        recovery_reason    TEXT,
        policy             TEXT NOT NULL,
        unattended         INTEGER NOT NULL CHECK (unattended IN (0, 1)),
        prompt_ref         TEXT,
        response_ref       TEXT,
        created_at         TEXT NOT NULL,
        started_at         TEXT,
        ended_at           TEXT,
        updated_at         TEXT NOT NULL
    ) STRICT
    """,
    "CREATE INDEX runs_status ON runs (status)",
    "CREATE INDEX runs_server ON runs (server_instance_id)",
    "CREATE INDEX runs_session ON runs (session_id)",
    """
    CREATE TABLE items (
        run_id           TEXT NOT NULL REFERENCES runs (id),
        seq              INTEGER NOT NULL,
        kind             TEXT NOT NULL,
        content          TEXT NOT NULL,
        coalesced_events INTEGER NOT NULL CHECK (coalesced_events >= 1),
        created_at       TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
    ) STRICT
    """,
    f"""
    CREATE TABLE interactions (
        id            TEXT PRIMARY KEY,
        run_id        TEXT NOT NULL REFERENCES runs (id),
        request_id    TEXT NOT NULL,
        tool_call     TEXT NOT NULL,
        offered       TEXT NOT NULL,
        state         TEXT NOT NULL {_in("state", _INTERACTION_STATES)},
        choice        TEXT,
        chosen_by     TEXT CHECK (chosen_by IS NULL OR chosen_by IN ('user', 'policy', 'default')),
        reason        TEXT,
        request_ref   TEXT,
        response_ref  TEXT,
        created_at    TEXT NOT NULL,
        resolved_at   TEXT
    ) STRICT
    """,
    "CREATE INDEX interactions_run ON interactions (run_id)",
    """
    CREATE TABLE observations (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id  TEXT REFERENCES sessions (id),
        run_id      TEXT REFERENCES runs (id),
        kind        TEXT NOT NULL,
        payload     TEXT NOT NULL,
        journal_ref TEXT,
        recorded_at TEXT NOT NULL
    ) STRICT
    """,
    "CREATE INDEX observations_session ON observations (session_id)",
    "CREATE INDEX observations_run ON observations (run_id)",
    """
    CREATE TABLE readiness (
        profile    TEXT PRIMARY KEY,
        state      TEXT NOT NULL,
        result     TEXT NOT NULL,
        checked_at TEXT NOT NULL
    ) STRICT
    """,
)

#: Every migration, in order; ``len(MIGRATIONS)`` is the schema version this Baton writes.
#: Version 2: the Baton process that owns each server instance and run (``pid:start-ticks``),
#: so startup reconciliation settles only what a *dead* Baton left behind, never the live
#: work of another Baton process sharing the data directory.
V2: Final[Migration] = (
    "ALTER TABLE server_instances ADD COLUMN owner TEXT",
    "ALTER TABLE runs ADD COLUMN owner TEXT",
)

_CONVERSATION_STATUSES = ("IDLE", "ACTIVE", "RECOVERY_REQUIRED", "CLOSED")

#: Version 3: conversations (named, persistent sessions, issue 17) and their runs in order.
#: ``owner`` names the Baton process holding an ACTIVE turn, reconciled like a run's owner.
V3: Final[Migration] = (
    f"""
    CREATE TABLE conversations (
        id                  TEXT PRIMARY KEY,
        name                TEXT NOT NULL UNIQUE,
        profile             TEXT NOT NULL,
        agent_command       TEXT,
        env_keys            TEXT NOT NULL,
        cwd                 TEXT NOT NULL,
        settings            TEXT NOT NULL,
        provider_session_id TEXT,
        capabilities        TEXT NOT NULL,
        status              TEXT NOT NULL {_in("status", _CONVERSATION_STATUSES)},
        owner               TEXT,
        active_run_id       TEXT REFERENCES runs (id),
        setup_run_id        TEXT REFERENCES runs (id),
        note                TEXT,
        created_at          TEXT NOT NULL,
        last_used_at        TEXT NOT NULL,
        updated_at          TEXT NOT NULL
    ) STRICT
    """,
    "CREATE INDEX conversations_recent ON conversations (cwd, profile, last_used_at)",
    """
    CREATE TABLE conversation_runs (
        conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
        seq             INTEGER NOT NULL CHECK (seq >= 1),
        run_id          TEXT NOT NULL UNIQUE REFERENCES runs (id),
        PRIMARY KEY (conversation_id, seq)
    ) STRICT
    """,
)

_WORKER_STATES = ("RUNNING", "STOPPED", "LOST")

#: Version 4 (issue 22, many hosts): what the queue adds to a shared store. A submission per
#: queued run (its queue, idempotency key, the request to run, the worker that took it), the
#: workers with their heartbeat, named sessions pinned to the worker that holds them, and the
#: events of a queued run for a submitter waiting elsewhere (``baton submit --wait``).
V4: Final[Migration] = (
    """
    CREATE TABLE fleet_submissions (
        run_id          TEXT PRIMARY KEY REFERENCES runs (id),
        queue           TEXT NOT NULL,
        idempotency_key TEXT UNIQUE,
        session_name    TEXT,
        request         TEXT NOT NULL,
        job_id          INTEGER,
        worker          TEXT,
        submitted_at    TEXT NOT NULL,
        taken_at        TEXT
    ) STRICT
    """,
    "CREATE INDEX fleet_submissions_worker ON fleet_submissions (worker)",
    f"""
    CREATE TABLE fleet_workers (
        name         TEXT PRIMARY KEY,
        host         TEXT NOT NULL,
        owner        TEXT NOT NULL,
        queues       TEXT NOT NULL,
        concurrency  INTEGER NOT NULL CHECK (concurrency >= 1),
        state        TEXT NOT NULL {_in("state", _WORKER_STATES)},
        started_at   TEXT NOT NULL,
        heartbeat_at TEXT NOT NULL,
        stopped_at   TEXT
    ) STRICT
    """,
    """
    CREATE TABLE fleet_sessions (
        name                TEXT PRIMARY KEY,
        worker              TEXT NOT NULL,
        queue               TEXT NOT NULL,
        provider_session_id TEXT,
        created_at          TEXT NOT NULL,
        updated_at          TEXT NOT NULL
    ) STRICT
    """,
    """
    CREATE TABLE run_events (
        run_id TEXT NOT NULL REFERENCES runs (id),
        seq    INTEGER NOT NULL,
        event  TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
    ) STRICT
    """,
)

#: Version 5 (issue 22): CANCELLED, the final status of a queued run cancelled before any
#: worker started it (run_status.py: QUEUED -> CANCELLED only). Runs cancelled that way by
#: an earlier Baton (INTERRUPTED with QUEUED_RUN_CANCELLED, never started) become CANCELLED,
#: keeping their error code; their ``started_at`` (which the earlier write set) is cleared.
V5: Final[Migration] = (
    CheckValues("runs", "status", (*_RUN_STATUSES, "CANCELLED")),
    """
    UPDATE runs SET status = 'CANCELLED', started_at = NULL
    WHERE status = 'INTERRUPTED' AND error_code = 'QUEUED_RUN_CANCELLED'
    AND prompt_ref IS NULL
    """,
)

#: Version 6 (issue 34): the indexes the listings' ORDER BY needs, so ``runs --limit N`` and
#: ``runs --status S --limit N`` read N index entries instead of sorting every run, and the
#: sessions and conversations listings likewise (``runs_status`` is subsumed by
#: ``runs_status_created``).
V6: Final[Migration] = (
    "CREATE INDEX runs_created ON runs (created_at, id)",
    "CREATE INDEX runs_status_created ON runs (status, created_at, id)",
    "DROP INDEX runs_status",
    "CREATE INDEX sessions_created ON sessions (created_at, id)",
    "CREATE INDEX conversations_used ON conversations (last_used_at, created_at, id)",
)

#: Version 7: how many questions (permission requests, elicitations) a run has open with a
#: person, so every surface (``baton runs``, the API, the inspector) shows the same count; the
#: run is AWAITING_APPROVAL while it is above zero (issue 30).
V7: Final[Migration] = ("ALTER TABLE runs ADD COLUMN pending_questions INTEGER NOT NULL DEFAULT 0",)

_WORKSPACE_KINDS = ("worktree", "dir")
_WORKSPACE_STATES = ("ACTIVE", "REMOVED")

#: Version 8 (issue 31, workspaces): each workspace Baton created or used (a worktree of a
#: repository on a branch of its own, or a directory), the host it lives on, the session it
#: belongs to, and each run's snapshots before and after its turn (the comparison's two
#: sides; the changes themselves are the run's ``workspace_changes`` item).
V8: Final[Migration] = (
    f"""
    CREATE TABLE workspaces (
        name         TEXT PRIMARY KEY,
        kind         TEXT NOT NULL {_in("kind", _WORKSPACE_KINDS)},
        path         TEXT NOT NULL,
        repository   TEXT,
        base_ref     TEXT,
        base_commit  TEXT,
        branch       TEXT,
        subdirectory TEXT NOT NULL,
        session_name TEXT,
        created_by   TEXT,
        host         TEXT NOT NULL,
        state        TEXT NOT NULL {_in("state", _WORKSPACE_STATES)},
        created_at   TEXT NOT NULL,
        updated_at   TEXT NOT NULL
    ) STRICT
    """,
    "CREATE INDEX workspaces_path ON workspaces (path)",
    """
    CREATE TABLE workspace_runs (
        run_id     TEXT PRIMARY KEY REFERENCES runs (id),
        workspace  TEXT NOT NULL REFERENCES workspaces (name),
        before_state TEXT NOT NULL,
        after_state  TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    ) STRICT
    """,
    "CREATE INDEX workspace_runs_workspace ON workspace_runs (workspace, created_at)",
)

_BATCH_STATES = ("RUNNING", "COMPLETED", "STOPPED", "CANCELLED")
_BATCH_CELL_STATES = (
    "PENDING",
    "RUNNING",
    "COMPLETED",
    "FAILED",
    "INTERRUPTED",
    "RECOVERY_REQUIRED",
    "LOST",
    "SKIPPED",
)

#: Version 9 (issue 32, batches): a batch (its spec, the spec's hash, its state and why it
#: stopped, the process running it), its cells (task x agent x repeat, each with its state
#: and the result of its last run) and every run each cell started, in order (a cell rerun
#: with ``--retry-ambiguous`` keeps its earlier run). The state tables are
#: :mod:`baton.store.batch_states`.
V9: Final[Migration] = (
    f"""
    CREATE TABLE batches (
        id          TEXT PRIMARY KEY,
        name        TEXT,
        spec_hash   TEXT NOT NULL,
        spec        TEXT NOT NULL,
        state       TEXT NOT NULL {_in("state", _BATCH_STATES)},
        stop_reason TEXT,
        max_cost    TEXT,
        owner       TEXT,
        created_at  TEXT NOT NULL,
        updated_at  TEXT NOT NULL
    ) STRICT
    """,
    "CREATE INDEX batches_created ON batches (created_at, id)",
    f"""
    CREATE TABLE batch_cells (
        batch_id   TEXT NOT NULL REFERENCES batches (id),
        cell       INTEGER NOT NULL,
        task       TEXT NOT NULL,
        agent      TEXT NOT NULL,
        repeat     INTEGER NOT NULL,
        state      TEXT NOT NULL {_in("state", _BATCH_CELL_STATES)},
        reason     TEXT,
        run_id     TEXT,
        result     TEXT,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (batch_id, cell)
    ) STRICT
    """,
    """
    CREATE TABLE batch_runs (
        batch_id   TEXT NOT NULL REFERENCES batches (id),
        cell       INTEGER NOT NULL,
        attempt    INTEGER NOT NULL,
        run_id     TEXT NOT NULL REFERENCES runs (id),
        created_at TEXT NOT NULL,
        PRIMARY KEY (batch_id, cell, attempt)
    ) STRICT
    """,
    "CREATE INDEX batch_runs_run ON batch_runs (run_id)",
)

#: Version 10 (issue 29, `baton session fork`): the conversation a conversation was forked
#: from and, when forked at an earlier turn, how many of its turns the fork holds (its history
#: starts with those turns of the parent).
V10: Final[Migration] = (
    "ALTER TABLE conversations ADD COLUMN forked_from TEXT",
    "ALTER TABLE conversations ADD COLUMN fork_turns INTEGER",
)

#: Version 11 (issue 33, fencing): the epoch of a run's claim. A worker's claim on a run is
#: ``(owner, epoch)``; a write by anyone not holding it (a settle, an adoption, a take)
#: increments the epoch, and every write the holder makes is refused unless both still match
#: (docs/fleet.md, "Fencing").
V11: Final[Migration] = ("ALTER TABLE runs ADD COLUMN epoch INTEGER NOT NULL DEFAULT 0",)

MIGRATIONS: Final[tuple[Migration, ...]] = (V1, V2, V3, V4, V5, V6, V7, V8, V9, V10, V11)

#: The schema version this Baton creates and understands.
SCHEMA_VERSION: Final = len(MIGRATIONS)


def schema_version(conn: sqlite3.Connection) -> int:
    """The database's ``PRAGMA user_version``."""
    row = conn.execute("PRAGMA user_version").fetchone()
    return int(row[0])


def migrate(conn: sqlite3.Connection, migrations: Sequence[Migration] = MIGRATIONS) -> int:
    """Bring ``conn`` (in autocommit mode) up to ``len(migrations)``; return the version.

    Raises :class:`~baton.errors.StoreSchemaTooNew`, touching nothing, when the database is
    newer than ``migrations`` know.
    """
    latest = len(migrations)
    while True:
        current = schema_version(conn)
        if current > latest:
            raise StoreSchemaTooNew(
                f"the run store is at schema version {current}; this Baton knows up to {latest}"
            )
        if current == latest:
            return current
        step = migrations[current]
        rebuilds = any(isinstance(part, CheckValues) for part in step)
        # A table rebuild drops a parent table: foreign keys are off for it (a no-op inside a
        # transaction, so before it) and checked before the commit.
        foreign_keys = bool(conn.execute("PRAGMA foreign_keys").fetchone()[0])
        if rebuilds and foreign_keys:
            conn.execute("PRAGMA foreign_keys = OFF")
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                # Another process may have migrated while this one waited for the write lock.
                if schema_version(conn) == current:
                    for part in step:
                        for statement in sqlite_statements(conn, part):
                            conn.execute(statement)
                    if rebuilds and conn.execute("PRAGMA foreign_key_check").fetchone():
                        raise MigrationInvalid(
                            f"migration {current + 1} would leave rows whose foreign keys "
                            "point at nothing"
                        )
                    conn.execute(f"PRAGMA user_version = {current + 1}")
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        finally:
            if rebuilds and foreign_keys:
                conn.execute("PRAGMA foreign_keys = ON")


def sqlite_statements(conn: sqlite3.Connection, step: MigrationStep) -> list[str]:
    """The SQLite statements of one migration step (a :class:`CheckValues` is the rebuild of
    its table, read from the schema as the database has it now)."""
    if isinstance(step, str):
        return [step]
    for name in (step.table, step.column):
        if not _IDENTIFIER.fullmatch(name):
            raise MigrationInvalid(f"not a store identifier: {name!r}")
    row = conn.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (step.table,)
    ).fetchone()
    if row is None:
        raise MigrationInvalid(f"no table {step.table} to change the {step.column} check of")
    create: str = row[0]
    check = re.compile(rf"CHECK \({step.column} IN \([^)]*\)\)")
    if len(check.findall(create)) != 1:
        raise MigrationInvalid(
            f"table {step.table} has no single CHECK ({step.column} IN (...)) to replace"
        )
    create = check.sub(lambda _match: step.check_sql(), create)
    new_table = step.table + _REBUILD_SUFFIX
    create, renamed = re.subn(
        rf'^CREATE TABLE\s+"?{step.table}"?', f"CREATE TABLE {new_table}", create
    )
    if renamed != 1:
        raise MigrationInvalid(f"cannot read the definition of table {step.table}")
    companions = [
        text
        for (text,) in conn.execute(
            "SELECT sql FROM sqlite_master WHERE tbl_name = ? AND type IN ('index', 'trigger') "
            "AND sql IS NOT NULL ORDER BY type, name",
            (step.table,),
        )
    ]
    return [
        create,
        f"INSERT INTO {new_table} SELECT * FROM {step.table}",
        f"DROP TABLE {step.table}",
        f"ALTER TABLE {new_table} RENAME TO {step.table}",
        *companions,
    ]
