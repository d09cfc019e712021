"""The runtime's side of workspaces: the ``--workspace`` values, and the bounded caches."""

from __future__ import annotations

from pathlib import Path

import pytest

from baton.runtime.workspaces import tracking
from baton.runtime.workspaces.tracking import WorkspaceTracker, split_workspace_flag
from baton.store.models import WorkspaceRecord


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, (None, "danger-full-access")),
        ("none", (None, "danger-full-access")),
        ("danger-full-access", (None, "danger-full-access")),
        ("worktree", ("worktree", "danger-full-access")),
        ("/some/dir", ("/some/dir", "danger-full-access")),
        ("read-only", (None, "read-only")),
        ("workspace-write", (None, "workspace-write")),
    ],
)
def test_the_workspace_flag(value: str | None, expected: tuple[str | None, str]) -> None:
    assert split_workspace_flag(value) == expected


def _record(name: str, path: Path) -> WorkspaceRecord:
    return WorkspaceRecord(
        name, "dir", str(path), None, None, None, None, "", None, None, "h", "ACTIVE", "t", "t"
    )


@pytest.mark.parametrize(("used", "kept"), [(1, 1), (2, 2), (3, 2)])
async def test_the_cached_workspaces_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, used: int, kept: int
) -> None:
    monkeypatch.setattr(tracking, "MAX_CACHED_WORKSPACES", 2)
    tracker = WorkspaceTracker(str(tmp_path), {})
    first = await tracker.activate(_record("w0", tmp_path))
    for index in range(1, used):
        await tracker.activate(_record(f"w{index}", tmp_path))
    assert len(tracker._caches) == kept
    again = await tracker.activate(_record("w0", tmp_path))
    assert (again.cache is first.cache) is (used <= 2)  # evicted past the bound
