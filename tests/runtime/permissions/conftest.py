"""A real worktree on disk (with a symlink that escapes it) and the local context over it."""

from __future__ import annotations

from pathlib import Path

import pytest

from baton.runtime.permissions.local_policy import LocalContext


@pytest.fixture
def worktree(tmp_path: Path) -> Path:
    """``repo/`` with a file, a subdirectory, a ``.git`` directory, an inner symlink, and
    symlinks (one dangling) that point outside to ``outside/``."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s")
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / ".git").mkdir()
    (repo / "README.md").write_text("r")
    (repo / "src" / "main.py").write_text("m")
    (repo / "escape").symlink_to(outside)
    (repo / "escape_file").symlink_to(outside / "secret.txt")
    (repo / "dangling").symlink_to(outside / "not-yet")
    (repo / "inner").symlink_to(repo / "src")
    return repo


@pytest.fixture
def context(worktree: Path) -> LocalContext:
    """The worktree with network access allowed (the only setting a run may have)."""
    return LocalContext(str(worktree), network_allowed=True)
