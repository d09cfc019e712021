"""Confinement to the session cwd (pure: the local file system only)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from baton.agents.scripted.paths import (
    MAX_OLD_TEXT_BYTES,
    PathRefused,
    confine,
    read_text,
    write_text,
)


def test_inside_paths(tmp_path: Path) -> None:
    target = confine(str(tmp_path), "a/../b.txt")
    assert target.shown == str(tmp_path / "b.txt")
    assert confine(str(tmp_path), str(tmp_path / "c")).shown == str(tmp_path / "c")


@pytest.mark.parametrize("path", ["..", "../x", "/tmp", ".", "", "a\x00b"])
def test_outside_paths(tmp_path: Path, path: str) -> None:
    with pytest.raises(PathRefused):
        confine(str(tmp_path), path)


def test_cwd_must_be_an_absolute_directory(tmp_path: Path) -> None:
    with pytest.raises(PathRefused):
        confine("relative", "a")
    with pytest.raises(PathRefused):
        confine(str(tmp_path / "missing"), "a")


def test_symlinks_are_resolved(tmp_path: Path) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    (tmp_path / "out").mkdir()
    os.symlink(tmp_path / "out", cwd / "dir")
    os.symlink(cwd / "real", cwd / "inner")
    with pytest.raises(PathRefused):
        confine(str(cwd), "dir/x")
    assert confine(str(cwd), "inner").real == str(cwd / "real")


def test_read_text(tmp_path: Path) -> None:
    target = confine(str(tmp_path), "f")
    assert read_text(target) is None
    (tmp_path / "f").write_text("héllo")
    assert read_text(target) == "héllo"
    (tmp_path / "f").write_bytes(b"\xff")
    with pytest.raises(PathRefused):
        read_text(target)
    (tmp_path / "f").write_bytes(b"x" * (MAX_OLD_TEXT_BYTES + 1))
    with pytest.raises(PathRefused):
        read_text(target)
    (tmp_path / "f").write_bytes(b"x" * MAX_OLD_TEXT_BYTES)
    assert read_text(target) == "x" * MAX_OLD_TEXT_BYTES
    (tmp_path / "d").mkdir()
    with pytest.raises(PathRefused):
        read_text(confine(str(tmp_path), "d"))


def test_write_text(tmp_path: Path) -> None:
    assert write_text(str(tmp_path), "deep/er/f.txt", "é") == 2
    assert (tmp_path / "deep" / "er" / "f.txt").read_text() == "é"
    (tmp_path / "d").mkdir()
    with pytest.raises(PathRefused):
        write_text(str(tmp_path), "d", "x")
