"""Listings that stay flat (issue 34): the runs, sessions and conversations listings read
their rows through an index that matches their ORDER BY (no sort of the whole table), a limit
reaches SQL, and the CLI's per-row context is looked up in batches, not one query per row."""

from __future__ import annotations

import argparse
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from baton.cli.commands import runs as runs_verb
from baton.store import Store
from baton.store import runs as runs_module
from baton.store.database import MAX_LIST_ROWS
from baton.views.runs import run_contexts


def _plan(store: Store, sql: str, args: tuple[object, ...] = ()) -> str:
    conn = store._conn
    assert isinstance(conn, sqlite3.Connection)
    return " | ".join(row[-1] for row in conn.execute("EXPLAIN QUERY PLAN " + sql, args))


def _runs_sql(status: bool) -> str:
    where = " WHERE status IN (?)" if status else ""
    return (
        f"SELECT {runs_module.RUN_COLUMNS} FROM runs{where} "
        "ORDER BY created_at DESC, id DESC LIMIT 20"
    )


def test_runs_listing_reads_an_index_in_order(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        newest = _plan(store, _runs_sql(status=False))
        by_status = _plan(store, _runs_sql(status=True), ("COMPLETED",))
    assert "runs_created" in newest and "TEMP B-TREE" not in newest, newest
    assert "runs_status_created" in by_status and "TEMP B-TREE" not in by_status, by_status


def test_sessions_and_conversations_listings_read_an_index_in_order(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        sessions = _plan(store, "SELECT id FROM sessions ORDER BY created_at, id LIMIT 20")
        conversations = _plan(
            store,
            "SELECT id FROM conversations ORDER BY last_used_at DESC, created_at DESC, id LIMIT 20",
        )
    assert "sessions_created" in sessions and "TEMP B-TREE" not in sessions, sessions
    assert "conversations_used" in conversations, conversations


def test_runs_verb_pushes_its_limit_into_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    with Store(data / "baton.sqlite3") as store:
        for n in range(30):
            store.create_run(f"prompt {n}", run_id=f"run-{n:04d}")
    asked: list[int] = []
    listing = Store.list_runs

    def spy(self: Store, **kwargs: Any) -> Any:
        asked.append(kwargs.get("limit", MAX_LIST_ROWS))
        return listing(self, **kwargs)

    monkeypatch.setattr(Store, "list_runs", spy)
    args = argparse.Namespace(data_dir=str(data), store=None, status=None, limit=5)
    rows = runs_verb._rows_in_process(args)
    assert [row["id"] for row in rows] == [f"run-{n:04d}" for n in range(29, 24, -1)]
    assert asked[-1] == 5  # the listing itself (opening the store may list too)


def test_run_contexts_batch_their_lookups(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        records = []
        for n in range(12):
            server = store.create_server_instance("claude", "default", n + 1)
            session = store.create_session("claude", f"/w/{n}", server_instance_id=server.id)
            records.append(
                store.create_run(f"prompt {n}", session_id=session.id, server_instance_id=server.id)
            )
        statements: list[str] = []
        conn = store._conn
        assert isinstance(conn, sqlite3.Connection)
        conn.set_trace_callback(statements.append)
        contexts = run_contexts(store, records)
        conn.set_trace_callback(None)
    assert [c["cwd"] for c in contexts] == [f"/w/{n}" for n in range(12)]
    assert {c["agent"] for c in contexts} == {"claude"}
    # One for the servers, one for the sessions, one for the named sessions the runs are turns
    # of (and one for the names of provider sessions, when a session has one): never per row.
    assert len(statements) == 3, statements


def test_list_runs_filters_by_agent_cwd_and_id_prefix_in_sql(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        claude = store.create_server_instance("claude", "default", 1)
        codex_session = store.create_session("codex", "/w/b")
        claude_session = store.create_session("claude", "/w/a", server_instance_id=claude.id)
        a = store.create_run(
            "a", run_id="run-aa01", session_id=claude_session.id, server_instance_id=claude.id
        )
        b = store.create_run("b", run_id="run-ab02", session_id=codex_session.id)
        store.create_run("c", run_id="run-bc03")
        statements: list[str] = []
        conn = store._conn
        assert isinstance(conn, sqlite3.Connection)
        conn.set_trace_callback(statements.append)
        by_agent = store.list_runs(agent="codex", limit=1)
        by_cwd = store.list_runs(cwd="/w/a")
        by_prefix = store.list_runs(id_prefixes=["run-a"])
        conn.set_trace_callback(None)
    assert [r.id for r in by_agent] == [b.id]  # the session's profile when no server
    assert [r.id for r in by_cwd] == [a.id]
    assert {r.id for r in by_prefix} == {a.id, b.id}
    assert len(statements) == 3  # one query each, filtered and limited in SQL


def test_a_run_id_prefix_is_resolved_in_sql(tmp_path: Path) -> None:
    from baton.errors import AmbiguousRunId
    from baton.views.run_ids import resolve_run

    with Store(tmp_path / "s.db") as store:
        for n in range(3):
            store.create_run(f"p{n}", run_id=f"run-{n}0ff")
        store.create_run("q", run_id="run-1abc")
        assert resolve_run(store, "2").id == "run-20ff"
        assert resolve_run(store, "run-0").id == "run-00ff"
        with pytest.raises(AmbiguousRunId, match="run-10ff"):
            resolve_run(store, "1")
