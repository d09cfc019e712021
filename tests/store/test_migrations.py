"""Schema versions: fresh databases, reopening, a newer schema, and a failing migration."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from baton.errors import StoreSchemaTooNew
from baton.store import MIGRATIONS, SCHEMA_VERSION, Store, migrate
from baton.store.migrations import schema_version
from version4_rows import VERSION_4_ROWS

TABLES = {
    "server_instances",
    "sessions",
    "runs",
    "items",
    "interactions",
    "observations",
    "readiness",
    "conversations",
    "conversation_runs",
    # Version 4 (issue 22): the queue's records.
    "fleet_submissions",
    "fleet_workers",
    "fleet_sessions",
    "run_events",
    # Version 8 (issue 31): workspaces and their runs' snapshots.
    "workspaces",
    "workspace_runs",
    # Version 9 (issue 32): batches, their cells and the runs each cell started.
    "batches",
    "batch_cells",
    "batch_runs",
}
#: The tables a later version than 5 added (absent from a version-4 store).
AFTER_V5_TABLES = {"workspaces", "workspace_runs", "batches", "batch_cells", "batch_runs"}


def _connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


def _tables(conn: sqlite3.Connection) -> set[str]:
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    return {row[0] for row in rows} - {"sqlite_sequence"}


def test_fresh_database_gets_every_table(tmp_path: Path) -> None:
    conn = _connect(tmp_path / "s.db")
    assert migrate(conn) == SCHEMA_VERSION == len(MIGRATIONS)
    assert _tables(conn) == TABLES
    assert migrate(conn) == SCHEMA_VERSION  # idempotent
    conn.close()


def test_store_uses_wal_and_the_current_version(tmp_path: Path) -> None:
    tmp_path.chmod(0o700)
    store = Store(tmp_path / "s.db")
    assert store.schema_version == SCHEMA_VERSION
    store.close()
    conn = _connect(tmp_path / "s.db")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert schema_version(conn) == SCHEMA_VERSION
    conn.close()


def test_a_newer_schema_is_refused_and_untouched(tmp_path: Path) -> None:
    conn = _connect(tmp_path / "s.db")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(StoreSchemaTooNew) as info:
        migrate(conn)
    assert info.value.code == "STORE_SCHEMA_TOO_NEW"
    assert schema_version(conn) == SCHEMA_VERSION + 1
    assert _tables(conn) == set()
    conn.close()


def test_migrations_apply_in_order_from_an_older_version(tmp_path: Path) -> None:
    steps = (
        ("CREATE TABLE a (x INTEGER)",),
        ("ALTER TABLE a ADD COLUMN y TEXT", "CREATE TABLE b (z INTEGER)"),
    )
    conn = _connect(tmp_path / "s.db")
    assert migrate(conn, steps[:1]) == 1
    assert _tables(conn) == {"a"}
    assert migrate(conn, steps) == 2
    assert _tables(conn) == {"a", "b"}
    columns = [row[1] for row in conn.execute("PRAGMA table_info(a)")]
    assert columns == ["x", "y"]
    conn.close()


def test_a_failing_migration_rolls_back_entirely(tmp_path: Path) -> None:
    steps = (
        ("CREATE TABLE a (x INTEGER)",),
        ("CREATE TABLE b (z INTEGER)", "THIS IS NOT SQL"),
    )
    conn = _connect(tmp_path / "s.db")
    with pytest.raises(sqlite3.OperationalError):
        migrate(conn, steps)
    assert schema_version(conn) == 1
    assert _tables(conn) == {"a"}  # b was rolled back with the failed step
    assert not conn.in_transaction
    conn.close()


def test_a_version_2_store_gains_conversations_and_keeps_its_runs(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    conn = _connect(path)
    assert migrate(conn, MIGRATIONS[:2]) == 2
    conn.execute(
        "INSERT INTO runs (id, status, prompt_text, policy, unattended, created_at, updated_at) "
        "VALUES ('run-1', 'COMPLETED', 'hi', 'ask', 0, 't', 't')"
    )
    conn.close()
    path.chmod(0o600)
    with Store(path) as store:
        assert store.schema_version == SCHEMA_VERSION
        assert store.get_run("run-1").prompt_text == "hi"
        assert store.list_conversations() == []


def _version_4_store(path: Path) -> None:
    conn = _connect(path)
    conn.execute("PRAGMA foreign_keys = ON")
    assert migrate(conn, MIGRATIONS[:4]) == 4
    for statement in VERSION_4_ROWS:
        conn.execute(statement)
    conn.close()
    path.chmod(0o600)


def _indexes(conn: sqlite3.Connection, table: str) -> set[str]:
    rows = conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL",
        (table,),
    )
    return {row[0] for row in rows}


def test_version_5_rebuilds_runs_for_cancelled_and_loses_nothing(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    _version_4_store(path)
    conn = _connect(path)
    before = {
        table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        for table in TABLES - AFTER_V5_TABLES
    }
    indexes = _indexes(conn, "runs")
    columns = [row[1] for row in conn.execute("PRAGMA table_info(runs)")]
    conn.close()
    assert indexes == {"runs_status", "runs_server", "runs_session"}

    with Store(path) as store:
        assert store.schema_version == SCHEMA_VERSION
        done = store.get_run("run-done")
        assert (done.status, done.prompt_text, done.owner) == ("COMPLETED", "hi", "1:2@host-a")
        assert (done.started_at, done.ended_at) == ("t1", "t2")
        gone = store.get_run("run-gone")
        # The earlier form of a cancelled queued run is migrated, its code kept.
        assert (gone.status, gone.error_code, gone.started_at, gone.ended_at) == (
            "CANCELLED",
            "QUEUED_RUN_CANCELLED",
            None,
            "t4",
        )
        assert [item.seq for item in store.list_items("run-done")] == [1]
        assert [run.id for run in store.conversation_runs("fix")] == ["run-done"]

    conn = _connect(path)
    conn.execute("PRAGMA foreign_keys = ON")
    after = {
        table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        for table in TABLES - AFTER_V5_TABLES
    }
    assert after == before
    # Version 6 (the listings' indexes) replaced runs_status by runs_status_created.
    assert _indexes(conn, "runs") == indexes - {"runs_status"} | {
        "runs_created",
        "runs_status_created",
    }
    # Version 7 (after 6) adds the count of open questions, version 9 the claim's epoch;
    # nothing else changes.
    assert [row[1] for row in conn.execute("PRAGMA table_info(runs)")] == [
        *columns,
        "pending_questions",
        "epoch",
    ]
    assert not conn.execute("PRAGMA foreign_key_check").fetchall()
    assert _tables(conn) == TABLES  # no rebuild table left behind
    # The new constraint: CANCELLED is a status, a made-up one still is not.
    conn.execute("UPDATE runs SET status = 'CANCELLED' WHERE id = 'run-done'")
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("UPDATE runs SET status = 'PAUSED' WHERE id = 'run-done'")
    # The other tables' foreign keys name the rebuilt table.
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(
            "INSERT INTO items (run_id, seq, kind, content, coalesced_events, created_at) "
            "VALUES ('run-none', 1, 'text', '{}', 1, 't')"
        )
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    conn.close()


def test_a_check_rebuild_that_fits_nothing_rolls_back(tmp_path: Path) -> None:
    from baton.errors import MigrationInvalid
    from baton.store.migrations import CheckValues

    conn = _connect(tmp_path / "s.db")
    conn.execute("PRAGMA foreign_keys = ON")
    steps = (
        ("CREATE TABLE a (x TEXT CHECK (x IN ('p')))",),
        (CheckValues("a", "y", ("p", "q")),),
    )
    with pytest.raises(MigrationInvalid) as info:
        migrate(conn, steps)
    assert info.value.code == "STORE_MIGRATION_INVALID"
    assert schema_version(conn) == 1
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1  # restored
    conn.close()


def test_a_rebuild_that_would_orphan_rows_is_refused(tmp_path: Path) -> None:
    from baton.errors import MigrationInvalid
    from baton.store.migrations import CheckValues

    conn = _connect(tmp_path / "s.db")
    conn.execute("PRAGMA foreign_keys = ON")
    steps = (
        (
            "CREATE TABLE p (id TEXT PRIMARY KEY, s TEXT CHECK (s IN ('a')))",
            "CREATE TABLE c (p_id TEXT REFERENCES p (id))",
            "INSERT INTO p VALUES ('1', 'a')",
            "INSERT INTO c VALUES ('1')",
        ),
        (CheckValues("p", "s", ("a", "b")), "DELETE FROM p"),
    )
    with pytest.raises(MigrationInvalid, match="foreign keys"):
        migrate(conn, steps)
    assert schema_version(conn) == 1
    assert conn.execute("SELECT count(*) FROM p").fetchone()[0] == 1
    conn.close()
