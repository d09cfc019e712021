"""Owner-only files and directories, never through a symlink."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from baton.durable import files
from baton.errors import UnsafePath


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_creates_private_directories(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b"
    assert files.ensure_private_dir(target) == target
    assert _mode(target) == 0o700
    files.ensure_private_dir(target)  # idempotent


def test_refuses_symlinked_directory(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(real)
    with pytest.raises(UnsafePath, match="symlink"):
        files.ensure_private_dir(link)
    with pytest.raises(UnsafePath):
        files.open_dir(link)


def test_refuses_loose_directory_and_non_directory(tmp_path: Path) -> None:
    loose = tmp_path / "loose"
    loose.mkdir()
    loose.chmod(0o755)
    with pytest.raises(UnsafePath, match="open to other users") as info:
        files.ensure_private_dir(loose)
    assert info.value.code == "UNSAFE_PATH"
    plain = tmp_path / "plain"
    plain.write_text("x")
    with pytest.raises(UnsafePath, match="not a directory"):
        files.ensure_private_dir(plain)


def test_open_file_creates_0600_and_refuses_symlinks_and_links(tmp_path: Path) -> None:
    directory = files.ensure_private_dir(tmp_path / "d")
    dir_fd = files.open_dir(directory)
    try:
        fd = files.open_file(dir_fd, "f", os.O_RDWR | os.O_CREAT, display=directory / "f")
        os.close(fd)
        assert _mode(directory / "f") == 0o600

        (directory / "target").write_text("x")
        (directory / "target").chmod(0o600)
        (directory / "sym").symlink_to(directory / "target")
        with pytest.raises(UnsafePath, match="symlink"):
            files.open_file(dir_fd, "sym", os.O_RDONLY, display=directory / "sym")

        os.link(directory / "target", directory / "hard")
        with pytest.raises(UnsafePath, match="hard links"):
            files.open_file(dir_fd, "hard", os.O_RDONLY, display=directory / "hard")

        (directory / "loose").write_text("x")
        (directory / "loose").chmod(0o644)
        with pytest.raises(UnsafePath, match="open to other users"):
            files.open_file(dir_fd, "loose", os.O_RDONLY, display=directory / "loose")
    finally:
        os.close(dir_fd)
