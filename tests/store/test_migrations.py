"""Schema versions: fresh databases, reopening, a newer schema, and a failing migration."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from baton.errors import StoreSchemaTooNew
from baton.store import MIGRATIONS, SCHEMA_VERSION, Store, migrate
from baton.store.migrations import schema_version

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
}


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
