"""The data directory: --data-dir > BATON_HOME > platformdirs, created 0700, never a symlink."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import platformdirs
import pytest

from baton.errors import UnsafePath
from baton.store import DATA_DIR_ENV, data_dir, ensure_data_dir, resolve_data_dir


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
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o775)
    with pytest.raises(UnsafePath, match="chmod 700"):
        data_dir(shared, {})
    assert stat.S_IMODE(shared.stat().st_mode) == 0o775  # never changed behind the user's back
