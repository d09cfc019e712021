"""Many processes opening one empty data directory at once (the data directory, the journal
directories and the run store created by whoever comes first): every one opens it, or gets a
classified storage error; none dies of a traceback."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from baton.errors import StoreBusy
from baton.store import STORE_FILENAME, Store
from baton.store import database as database_module
from baton.store.migrations import MIGRATIONS

#: Processes started at once on one empty data directory, and how many times.
OPENERS = 16
ROUNDS = 2

OPEN_AND_WRITE = """
import asyncio, os, sys, time
from baton.errors import StorageError
from baton.runtime.runtime import Runtime

async def main() -> int:
    # Imports done: wait for the others (the start file), so the openers really race.
    print("READY", flush=True)
    while not os.path.exists(sys.argv[2]):
        time.sleep(0.001)
    try:
        async with Runtime(data_dir=sys.argv[1], environ={}) as rt:
            assert rt.store is not None
    except StorageError as exc:
        print(f"CLASSIFIED {exc.code}", flush=True)
        return 3
    print("OPENED", flush=True)
    return 0

sys.exit(asyncio.run(main()))
"""


@pytest.mark.serial(reason="16 interpreters at once: it must not share the machine's 2 cores")
@pytest.mark.parametrize("round_number", range(ROUNDS))
def test_sixteen_first_openers_at_once(tmp_path: Path, round_number: int) -> None:
    data_dir = tmp_path / f"data-{round_number}"
    start = tmp_path / f"start-{round_number}"
    children = [
        subprocess.Popen(
            [sys.executable, "-c", OPEN_AND_WRITE, str(data_dir), str(start)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(OPENERS)
    ]
    for child in children:
        assert child.stdout is not None and child.stdout.readline() == "READY\n"
    start.touch()
    outcomes = [child.communicate(timeout=120) for child in children]
    for child, (out, err) in zip(children, outcomes, strict=True):
        assert "Traceback" not in err, err
        assert child.returncode in (0, 3), (child.returncode, out, err)
    opened = [out for out, _err in outcomes if "OPENED" in out]
    assert len(opened) == OPENERS, [out for out, _ in outcomes]


def _locked_new_store(data: Path) -> sqlite3.Connection:
    """Another opener half-way: the new store file exists, still in rollback-journal mode, and
    its connection holds the write lock (switching to WAL is refused at once meanwhile)."""
    holder = sqlite3.connect(data / STORE_FILENAME, isolation_level=None, check_same_thread=False)
    os.chmod(data / STORE_FILENAME, 0o600)
    holder.execute("CREATE TABLE held (x)")
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("INSERT INTO held VALUES (1)")
    return holder


def test_an_opener_waits_for_a_store_another_is_creating(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    holder = _locked_new_store(data)
    releaser = threading.Timer(0.3, lambda: holder.execute("COMMIT"))
    releaser.start()
    try:
        with Store.open(data) as store:
            assert store.schema_version == len(MIGRATIONS)
    finally:
        releaser.join()
        holder.close()


def test_a_store_locked_beyond_the_wait_is_store_busy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    monkeypatch.setattr(database_module, "STORE_OPEN_WAIT_SECONDS", 0.2)
    holder = _locked_new_store(data)
    try:
        with pytest.raises(StoreBusy) as caught:
            Store.open(data)
        assert caught.value.code == "STORE_BUSY" and caught.value.fault == "baton"
    finally:
        holder.close()
