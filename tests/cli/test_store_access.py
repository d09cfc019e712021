"""Opening the data directory from CLI verbs: read-only verbs create nothing, storage failures
are stable codes with exit 2 (issues 15 and 16)."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from baton.cli import store_access
from baton.cli.main import main
from baton.durable import files
from baton.store import STORE_FILENAME, Store


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "data"
    path.mkdir(mode=0o700)
    return path


def test_runs_on_a_missing_directory_creates_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nonexistent" / "x" / "y"
    # `runs` lists nothing (scripts see no lines, exit 0) and says why on stderr.
    code, out, err = _run(capsys, "runs", "--json", "--data-dir", str(missing))
    assert (code, out) == (0, "")
    assert f"no Baton data directory at {missing}" in err
    code, out, err = _run(capsys, "runs", "--data-dir", str(missing))
    assert (code, out.strip()) == (0, "no runs")
    # A verb that names a record fails with the stable code.
    code, _out, err = _run(capsys, "show", "run-x", "--data-dir", str(missing))
    assert code == 2 and "DATA_DIR_NOT_FOUND" in err
    assert not (tmp_path / "nonexistent").exists()


def test_runs_and_show_on_an_empty_directory_create_no_database(
    data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _err = _run(capsys, "runs", "--data-dir", str(data))
    assert (code, out.strip()) == (0, "no runs")
    code, _out, err = _run(capsys, "show", "run-nope", "--data-dir", str(data))
    assert code == 2 and "run-nope" in err
    assert list(data.iterdir()) == []


def test_runs_on_a_directory_this_user_cannot_write(
    monkeypatch: pytest.MonkeyPatch, data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Store.open(data) as store:
        run = store.create_run("hello", status="RUNNING")  # a dead owner's run: reconcile
    before = sorted(p.name for p in data.iterdir())
    # A 0500 directory (root would bypass the mode): the access check says "not writable".
    monkeypatch.setattr(store_access.os, "access", lambda _path, _mode: False)
    code, out, err = _run(capsys, "runs", "--data-dir", str(data))
    assert code == 0, err
    assert run.id in out and "RUNNING" in out  # read as it is: no reconciliation write
    assert sorted(p.name for p in data.iterdir()) == before


def test_an_overwritten_store_header_is_store_corrupt(
    data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Store.open(data) as store:
        store.create_run("hello")
    with open(data / STORE_FILENAME, "r+b") as handle:
        handle.write(b"\0garbage" * 16)
    for argv in (["runs"], ["journal", "verify", "--all"], ["recover", "run-x"]):
        code, _out, err = _run(capsys, *argv, "--data-dir", str(data))
        assert code == 2, argv
        assert "STORE_CORRUPT" in err, argv
        assert "Traceback" not in err


def test_journal_verify_writes_nothing(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with Store.open(data) as store:
        store.create_run("hello")
    before = sorted(p.name for p in data.iterdir())
    code, _out, err = _run(capsys, "journal", "verify", "--all", "--data-dir", str(data))
    assert code == 0, err
    assert sorted(p.name for p in data.iterdir()) == before  # no journals/, no -wal, no -shm


def test_a_writing_verb_tightens_an_empty_directory_it_was_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    fresh.chmod(0o755)
    code, _out, err = _run(capsys, "recover", "run-x", "--data-dir", str(fresh))
    assert code == 2 and "RUN_NOT_FOUND" in err
    assert os.stat(fresh).st_mode & 0o777 == 0o700
    assert f"tightened {fresh} from mode 0755 to 0700" in err


AGENT = f"{sys.executable} -m baton.agents.scripted"


def test_run_on_a_corrupt_store_is_a_stable_code(data: Path) -> None:
    with Store.open(data) as store:
        store.create_run("hello")
    with open(data / STORE_FILENAME, "r+b") as handle:
        handle.write(b"\0garbage" * 16)
    done = subprocess.run(
        [sys.executable, "-m", "baton.cli.main", "run", "--agent-command", AGENT, "echo hi"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=str(data.parent),
        env={"PATH": "/usr/bin:/bin", "HOME": str(data.parent), "BATON_HOME": str(data)},
    )
    assert done.returncode == 2, done.stderr
    assert "STORE_CORRUPT" in done.stderr and "Traceback" not in done.stderr


def test_run_on_a_full_disk_is_a_stable_code(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def full(path: object, mode: int = 0o777) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(files.os, "mkdir", full)
    code, _out, err = _run(
        capsys, "run", "--data-dir", str(tmp_path / "d"), "--agent-command", AGENT, "echo hi"
    )
    assert code == 2
    assert "STORAGE_FULL" in err


def test_run_says_when_it_tightens_the_data_directory(tmp_path: Path) -> None:
    made = tmp_path / "made"
    made.mkdir()
    made.chmod(0o755)
    done = subprocess.run(
        [sys.executable, "-m", "baton.cli.main", "run", "--agent-command", AGENT, "echo hi"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=str(tmp_path),
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "BATON_HOME": str(made)},
    )
    assert done.returncode == 0, done.stderr
    assert f"baton: tightened {made} from mode 0755 to 0700" in done.stderr
    assert os.stat(made).st_mode & 0o777 == 0o700
