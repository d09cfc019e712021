"""Property: Baton's "inside" verdict on a path never holds when, on the real file system, what
the path would change lies outside the worktree, is hard-linked, is not a regular file, or has
a ``.git`` component.

Each example builds a small random tree (directories, regular files, hard links and symlinks to
a file outside, symlinks inside and out, nested ``.git`` directories and files) in a fresh
temporary directory and asks about random paths through it.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from baton.runtime.permissions.local_policy import check_path

NAMES = ["a", "b", "sub", ".git", ".GIT", "link", "hard", "file.txt", "..", "."]

ENTRY = st.tuples(
    st.lists(st.sampled_from(["a", "b", "sub", ".git", ".GIT"]), min_size=0, max_size=2),
    st.sampled_from(
        [
            "dir",
            "file",
            "hardlink",
            "symlink_out",
            "symlink_in",
            "symlink_dir_out",
            "gitfile",
            "fifo",
        ]
    ),
    st.sampled_from(["link", "hard", "file.txt", "x", ".git"]),
)


def _build(root: Path, outside: Path, entries: list[tuple[list[str], str, str]]) -> None:
    for parents, kind, name in entries:
        directory = root.joinpath(*parents)
        try:
            directory.mkdir(parents=True, exist_ok=True)
            target = directory / name
            if target.exists() or target.is_symlink():
                continue
            if kind == "dir":
                target.mkdir()
            elif kind == "file":
                target.write_text("x")
            elif kind == "hardlink":
                os.link(outside / "secret.txt", target)
            elif kind == "symlink_out":
                target.symlink_to(outside / "secret.txt")
            elif kind == "symlink_in":
                target.symlink_to(root / "a")
            elif kind == "symlink_dir_out":
                target.symlink_to(outside)
            elif kind == "gitfile":
                target.write_text("gitdir: ../elsewhere\n")
            elif kind == "fifo":
                os.mkfifo(target)
        except (FileExistsError, NotADirectoryError, FileNotFoundError):
            continue


def _has_git_component(parts: list[str]) -> bool:
    return any(part.lower().rstrip(". ") == ".git" for part in parts)


@settings(max_examples=100, deadline=None)
@given(
    entries=st.lists(ENTRY, max_size=8),
    paths=st.lists(
        st.lists(st.sampled_from(NAMES), min_size=1, max_size=4), min_size=1, max_size=6
    ),
    mutating=st.booleans(),
)
def test_inside_means_inside_on_the_real_file_system(
    entries: list[tuple[list[str], str, str]], paths: list[list[str]], mutating: bool
) -> None:
    base = Path(tempfile.mkdtemp(prefix="baton-paths-"))
    try:
        outside, root = base / "outside", base / "repo"
        outside.mkdir()
        (outside / "secret.txt").write_text("s")
        root.mkdir()
        _build(root, outside, entries)
        real_root = os.path.realpath(root)
        for parts in paths:
            raw = "/".join(parts)
            if check_path(raw, real_root, real_root, mutating=mutating) is not None:
                continue
            resolved = os.path.realpath(os.path.join(real_root, raw))
            assert resolved == real_root or resolved.startswith(real_root + os.sep), raw
            if os.path.lexists(resolved):
                info = os.lstat(resolved)
                if not stat.S_ISDIR(info.st_mode):
                    assert stat.S_ISREG(info.st_mode), raw
                    assert info.st_nlink == 1, raw
            if mutating:
                assert resolved != real_root, raw
                relative = os.path.relpath(resolved, real_root).split(os.sep)
                assert not _has_git_component(relative), raw
                assert not _has_git_component(parts), raw
    finally:
        shutil.rmtree(base, ignore_errors=True)
