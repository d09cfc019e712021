"""Opening the store: read-only opens create nothing; storage failures are stable codes."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from baton.errors import StorageFull, StorageReadOnly, StoreCorrupt
from baton.store import STORE_FILENAME, Store
from baton.store import database as database_module


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "data"
    path.mkdir(mode=0o700)
    return path


def _seed(data: Path) -> str:
    with Store.open(data) as store:
        return store.create_run("hello").id


def test_read_only_open_reads_and_creates_nothing(data: Path) -> None:
    run_id = _seed(data)
    before = sorted(p.name for p in data.iterdir())
    with Store.open_read_only(data) as store:
        assert [run.id for run in store.list_runs()] == [run_id]
        assert store.read_only
    assert sorted(p.name for p in data.iterdir()) == before


def test_read_only_open_refuses_every_write(data: Path) -> None:
    run_id = _seed(data)
    with Store.open_read_only(data) as store:
        with pytest.raises(StorageReadOnly, match="opened read-only"):
            store.create_run("more")
        with pytest.raises(StorageReadOnly):
            store.set_run_session(run_id, session_id="ses-1")
        assert store.get_run(run_id).session_id is None


def test_read_only_open_falls_back_to_an_immutable_snapshot(
    monkeypatch: pytest.MonkeyPatch, data: Path
) -> None:
    # On a read-only directory, mode=ro cannot create the WAL index: simulate that refusal
    # (root could write the directory anyway) and check the immutable snapshot is read.
    run_id = _seed(data)
    writer = Store.open(data)  # a writer is active: the WAL files exist
    real_connect = sqlite3.connect
    uris: list[str] = []

    def connect(target: str, *args: object, **kwargs: object) -> sqlite3.Connection:
        uris.append(target)
        if "immutable=1" not in target:
            raise sqlite3.OperationalError("unable to open database file")
        return real_connect(target, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(database_module.sqlite3, "connect", connect)
    try:
        with Store.open_read_only(data) as store:
            assert [run.id for run in store.list_runs()] == [run_id]
    finally:
        writer.close()
    assert uris[-2].endswith("?mode=ro") and uris[-1].endswith("mode=ro&immutable=1")


def test_an_overwritten_header_is_store_corrupt(data: Path) -> None:
    _seed(data)
    with open(data / STORE_FILENAME, "r+b") as handle:
        handle.write(b"this is not SQLite" * 8)
    with pytest.raises(StoreCorrupt) as info:
        Store.open(data)
    assert info.value.code == "STORE_CORRUPT" and info.value.fault == "caller"
    with pytest.raises(StoreCorrupt):
        Store.open_read_only(data)


def test_a_full_database_is_storage_full(data: Path) -> None:
    with Store.open(data) as store:
        # SQLite's own quota: the file may not grow, exactly as on a full disk (SQLITE_FULL).
        pages = store._conn.execute("PRAGMA page_count").fetchone()[0]
        store._conn.execute(f"PRAGMA max_page_count = {pages}")
        with pytest.raises(StorageFull) as info:
            for _ in range(100):
                store.create_run("x" * 100_000)
        assert info.value.code == "STORAGE_FULL"


def test_an_unwritable_store_file_is_storage_read_only(
    monkeypatch: pytest.MonkeyPatch, data: Path
) -> None:
    # What a 0500 directory or read-only mount does to the O_CREAT of the store file (root
    # bypasses modes, so the refusal is simulated at os.open).
    real_open = os.open

    def refuse(path: object, flags: int, *args: object, **kwargs: object) -> int:
        if flags & os.O_CREAT:
            raise OSError(30, "Read-only file system", str(path))
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", refuse)
    with pytest.raises(StorageReadOnly) as info:
        Store.open(data)
    assert info.value.code == "STORAGE_READ_ONLY"


def test_classification_leaves_other_sqlite_errors_alone(tmp_path: Path) -> None:
    error = sqlite3.OperationalError("no such table: nope")
    assert database_module.classify_sqlite_error(error, tmp_path) is None


def test_read_only_open_sees_an_active_writers_commits(data: Path) -> None:
    with Store.open(data) as writer:
        run_id = writer.create_run("in flight").id
        with Store.open_read_only(data) as reader:
            assert [run.id for run in reader.list_runs()] == [run_id]
