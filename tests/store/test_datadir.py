"""The data directory: --data-dir > BATON_HOME > platformdirs, created 0700, never a symlink."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import platformdirs
import pytest

from baton.durable import files
from baton.errors import DataDirNotFound, StorageFull, StorageReadOnly, UnsafePath
from baton.store import (
    DATA_DIR_ENV,
    Store,
    data_dir,
    ensure_data_dir,
    existing_data_dir,
    prepare_data_dir,
    resolve_data_dir,
)

AS_ROOT = os.geteuid() == 0


def test_flag_wins_over_environment(tmp_path: Path) -> None:
    env = {DATA_DIR_ENV: str(tmp_path / "env")}
    assert resolve_data_dir(tmp_path / "flag", env) == tmp_path / "flag"
    assert resolve_data_dir(str(tmp_path / "flag"), env) == tmp_path / "flag"


def test_environment_wins_over_platform_default(tmp_path: Path) -> None:
    assert resolve_data_dir(None, {DATA_DIR_ENV: str(tmp_path / "env")}) == tmp_path / "env"


def test_platform_default_when_nothing_is_set() -> None:
    expected = Path(platformdirs.user_data_dir("baton", appauthor=False)).absolute()
    assert resolve_data_dir(None, {}) == expected
    # Empty values count as unset.
    assert resolve_data_dir("", {DATA_DIR_ENV: ""}) == expected


def test_relative_and_home_paths_become_absolute(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    assert resolve_data_dir("rel", {}) == tmp_path / "rel"
    monkeypatch.setenv("HOME", str(tmp_path))
    assert resolve_data_dir("~/x", {}) == tmp_path / "x"


def test_resolution_uses_the_real_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "from-env"))
    assert resolve_data_dir() == tmp_path / "from-env"


def test_created_private(tmp_path: Path) -> None:
    path = data_dir(tmp_path / "nested" / "data", {})
    assert path == tmp_path / "nested" / "data"
    assert stat.S_IMODE(os.lstat(path).st_mode) == 0o700
    assert ensure_data_dir(path) == path


def test_refuses_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(real)
    with pytest.raises(UnsafePath, match="symlink"):
        data_dir(tmp_path / "link", {})


def test_refuses_a_shared_directory(tmp_path: Path) -> None:
    # (Issue 16: an *empty* shared directory is now tightened, see below; one holding data
    # is still refused and left as it is.)
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "notes.txt").write_text("someone's data")
    shared.chmod(0o775)
    with pytest.raises(UnsafePath, match="chmod 700"):
        data_dir(shared, {})
    assert stat.S_IMODE(shared.stat().st_mode) == 0o775  # never changed behind the user's back


def test_an_empty_directory_of_ours_is_tightened_and_said_so(tmp_path: Path) -> None:
    made = tmp_path / "made-with-mkdir"
    made.mkdir()
    made.chmod(0o755)
    prepared = prepare_data_dir(made)
    assert prepared.path == made
    assert stat.S_IMODE(made.stat().st_mode) == 0o700
    assert prepared.notice is not None and "from mode 0755 to 0700" in prepared.notice
    # Already private: nothing to say.
    assert prepare_data_dir(made).notice is None


def test_a_missing_directory_is_created_and_said_so(tmp_path: Path) -> None:
    prepared = prepare_data_dir(tmp_path / "new" / "data")
    assert prepared.notice == f"created {tmp_path / 'new' / 'data'} (mode 0700)"
    assert stat.S_IMODE((tmp_path / "new" / "data").stat().st_mode) == 0o700


def test_another_users_empty_directory_is_refused_not_tightened(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    theirs.chmod(0o755)
    monkeypatch.setattr(os, "geteuid", lambda: os.getuid() + 4242)
    with pytest.raises(UnsafePath, match="owned by uid"):
        prepare_data_dir(theirs)
    assert stat.S_IMODE(theirs.stat().st_mode) == 0o755


def test_a_symlink_to_an_empty_directory_is_refused_not_tightened(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    real.chmod(0o755)
    (tmp_path / "link").symlink_to(real)
    with pytest.raises(UnsafePath, match="symlink"):
        prepare_data_dir(tmp_path / "link")
    assert stat.S_IMODE(real.stat().st_mode) == 0o755


def test_an_unwritable_directory_is_storage_read_only(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Root bypasses file modes, so the refusal of a 0500 directory is simulated where the
    # kernel would say it: os.access (and, for the creation of a child, os.mkdir).
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o700)
    monkeypatch.setattr(files.os, "access", lambda _path, _mode: False)
    with pytest.raises(StorageReadOnly, match="cannot write"):
        prepare_data_dir(locked)


def test_a_data_dir_under_an_unwritable_parent_is_storage_read_only(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def refuse(path: object, mode: int = 0o777) -> None:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(files.os, "mkdir", refuse)
    with pytest.raises(StorageReadOnly) as info:
        prepare_data_dir(tmp_path / "child")
    assert info.value.code == "STORAGE_READ_ONLY"


def test_a_full_disk_while_creating_is_storage_full(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def full(path: object, mode: int = 0o777) -> None:
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(files.os, "mkdir", full)
    with pytest.raises(StorageFull) as info:
        prepare_data_dir(tmp_path / "child")
    assert info.value.code == "STORAGE_FULL"


@pytest.mark.skipif(AS_ROOT, reason="root bypasses directory modes; covered by the patched tests")
def test_a_real_0500_directory_is_storage_read_only(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    try:
        with pytest.raises(StorageReadOnly):
            prepare_data_dir(locked)
    finally:
        locked.chmod(0o700)


def test_read_only_verbs_create_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "nonexistent" / "x" / "y"
    with pytest.raises(DataDirNotFound, match="no Baton data directory at"):
        existing_data_dir(missing)
    with pytest.raises(DataDirNotFound):
        Store.open_read_only(missing)
    assert not (tmp_path / "nonexistent").exists()


def test_read_only_open_of_an_empty_data_dir_is_an_empty_store(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    with Store.open_read_only(data) as store:
        assert store.list_runs() == []
    assert list(data.iterdir()) == []  # no database, no WAL, nothing


def test_read_only_verbs_refuse_a_loose_directory_without_changing_it(tmp_path: Path) -> None:
    loose = tmp_path / "loose"
    loose.mkdir()
    loose.chmod(0o755)
    with pytest.raises(UnsafePath):
        existing_data_dir(loose)
    assert stat.S_IMODE(loose.stat().st_mode) == 0o755
