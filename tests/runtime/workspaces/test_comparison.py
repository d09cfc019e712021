"""Snapshots and the comparison: every kind of change, symlinks never followed out, and
each bound at cap - 1, cap and cap + 1 with its marker."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from baton.runtime.workspaces.changes import DIFF_CUT_MARKER, compare_trees, unhashed_changes
from baton.runtime.workspaces.reported import match_reports, reported_paths
from baton.runtime.workspaces.snapshot import (
    FingerprintCache,
    RepositoryLayout,
    repository_layout,
    take_snapshot,
)
from workspace_repos import make_repo

ENV = dict(os.environ)


def _layout(tmp_path: Path, files: dict[str, str] | None = None) -> RepositoryLayout:
    return repository_layout(str(make_repo(tmp_path / "repo", files)), ENV)


def test_every_kind_of_change(tmp_path: Path) -> None:
    layout = _layout(
        tmp_path,
        {
            "a.txt": "1\n2\n",
            "b.txt": "b\n",
            "c.txt": "c\n" * 20,
            "run.sh": "echo\n",
            "l": "target\n",
        },
    )
    top = Path(layout.top)
    cache = FingerprintCache()
    before = take_snapshot(layout, cache, ENV)
    (top / "a.txt").write_text("1\nTWO\n3\n")
    (top / "b.txt").unlink()
    (top / "c.txt").rename(top / "moved.txt")
    (top / "run.sh").chmod(0o755)
    (top / "l").unlink()
    (top / "l").symlink_to("a.txt")
    (top / "new.bin").write_bytes(b"\0\1\2\3")
    after = take_snapshot(layout, cache, ENV)
    comparison = compare_trees(layout, before.tree, after.tree, ENV, str)
    kinds = {c.path: c for c in comparison.changes}
    assert kinds["a.txt"].kind == "modified"
    assert (kinds["a.txt"].added_lines, kinds["a.txt"].removed_lines) == (2, 1)
    assert kinds["b.txt"].kind == "deleted"
    assert kinds["moved.txt"].kind == "renamed" and kinds["moved.txt"].old_path == "c.txt"
    assert kinds["run.sh"].kind == "mode" and kinds["run.sh"].new_mode == "100755"
    assert kinds["l"].kind == "symlink" and kinds["l"].new_mode == "120000"
    assert kinds["new.bin"].kind == "added" and kinds["new.bin"].binary
    assert "GIT binary patch" in kinds["new.bin"].diff
    counts = comparison.counts()
    assert counts["files"] == 6 and counts["renamed"] == 1 and counts["unreported"] == 0
    assert comparison.truncated == []


def test_an_unchanged_file_is_not_read_again(tmp_path: Path) -> None:
    layout = _layout(tmp_path)
    cache = FingerprintCache()
    first = take_snapshot(layout, cache, ENV)
    # Age every file past the racy window: their stat then identifies them.
    for path in Path(layout.top).glob("*.txt"):
        os.utime(path, (1_000_000_000, 1_000_000_000))
    second = take_snapshot(layout, cache, ENV)
    third = take_snapshot(layout, cache, ENV)
    assert first.tree == second.tree == third.tree
    assert second.hashed_bytes > 0 and third.hashed_bytes == 0


def test_a_symlink_is_never_followed_out(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("the user's secret\n")
    layout = _layout(tmp_path)
    top = Path(layout.top)
    cache = FingerprintCache()
    before = take_snapshot(layout, cache, ENV)
    (top / "escape").symlink_to(outside)  # a link to a directory outside
    (top / "secret-link").symlink_to(outside / "secret.txt")
    after = take_snapshot(layout, cache, ENV)
    comparison = compare_trees(layout, before.tree, after.tree, ENV, str)
    by_path = {c.path: c for c in comparison.changes}
    assert set(by_path) == {"escape", "secret-link"}
    for change in by_path.values():
        assert change.new_mode == "120000"
        assert "the user's secret" not in change.diff  # the link's target path, not content
    assert str(outside) in by_path["escape"].diff


def test_a_tracked_file_under_a_directory_replaced_by_a_link_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "mod.py").write_text("outside content\n")
    layout = _layout(tmp_path, {"pkg/mod.py": "inside\n"})
    top = Path(layout.top)
    cache = FingerprintCache()
    before = take_snapshot(layout, cache, ENV)
    (top / "pkg" / "mod.py").unlink()
    (top / "pkg").rmdir()
    (top / "pkg").symlink_to(outside)
    after = take_snapshot(layout, cache, ENV)
    comparison = compare_trees(layout, before.tree, after.tree, ENV, str)
    assert all("outside content" not in c.diff for c in comparison.changes)


@pytest.mark.parametrize(("count", "cut"), [(4, False), (5, False), (6, True)])
def test_the_files_bound(tmp_path: Path, count: int, cut: bool) -> None:
    layout = _layout(tmp_path, {f"f{i}.txt": f"{i}\n" for i in range(count)})
    snapshot = take_snapshot(layout, FingerprintCache(), ENV, max_files=5)
    assert ("files" in snapshot.truncated) is cut
    assert snapshot.files == min(count, 5) and snapshot.files_seen == count


@pytest.mark.parametrize(("size", "hashed"), [(99, True), (100, True), (101, False)])
def test_the_file_hash_bound(tmp_path: Path, size: int, hashed: bool) -> None:
    layout = _layout(tmp_path)
    cache = FingerprintCache()
    before = take_snapshot(layout, cache, ENV, max_file_bytes=100)
    Path(layout.top, "big.txt").write_text("x" * (size - 1) + "\n")
    after = take_snapshot(layout, cache, ENV, max_file_bytes=100)
    assert ("big.txt" in after.not_hashed) is not hashed
    if not hashed:
        [change] = unhashed_changes(before, after)
        assert change.not_hashed and change.diff_truncated and change.kind == "added"


def test_the_hashed_bytes_bound(tmp_path: Path) -> None:
    layout = _layout(tmp_path, {f"f{i}.txt": "x" * 9 + "\n" for i in range(4)})
    snapshot = take_snapshot(layout, FingerprintCache(), ENV, max_bytes=25)
    assert "hashed_bytes" in snapshot.truncated
    assert len(snapshot.not_hashed) == 2 and snapshot.hashed_bytes == 20


def _one_file_diff(tmp_path: Path, lines: int, limit: int) -> tuple[str, bool, int]:
    layout = _layout(tmp_path)
    cache = FingerprintCache()
    before = take_snapshot(layout, cache, ENV)
    Path(layout.top, "a.txt").write_text("".join(f"line {i}\n" for i in range(lines)))
    after = take_snapshot(layout, cache, ENV)
    whole = compare_trees(layout, before.tree, after.tree, ENV, str)
    size = len(whole.changes[0].diff.encode())
    comparison = compare_trees(
        layout, before.tree, after.tree, ENV, str, max_file_diff=limit if limit else size
    )
    change = comparison.changes[0]
    return change.diff, change.diff_truncated, size


@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_the_per_file_diff_bound(tmp_path: Path, delta: int) -> None:
    _, _, size = _one_file_diff(tmp_path / "probe", 30, 0)
    diff, truncated, _ = _one_file_diff(tmp_path / "run", 30, size + delta)
    assert truncated is (delta < 0)
    if truncated:
        assert diff.endswith(DIFF_CUT_MARKER.format(limit=size + delta))
        assert len(diff.encode()) <= size + delta + len(DIFF_CUT_MARKER) + 8


def test_the_per_turn_diff_bound(tmp_path: Path) -> None:
    layout = _layout(tmp_path)
    cache = FingerprintCache()
    before = take_snapshot(layout, cache, ENV)
    for name in ("a.txt", "b.txt", "c.txt"):
        Path(layout.top, name).write_text(f"{name} changed\n")
    after = take_snapshot(layout, cache, ENV)
    whole = compare_trees(layout, before.tree, after.tree, ENV, str)
    first = len(whole.changes[0].diff.encode())
    cut = compare_trees(layout, before.tree, after.tree, ENV, str, max_turn_diff=first)
    assert cut.changes[0].diff and not cut.changes[0].diff_truncated
    assert all(c.diff == "" and c.diff_truncated for c in cut.changes[1:])
    assert cut.truncated == ["diff_bytes"]
    assert [c.added_lines for c in cut.changes] == [1, 1, 1]  # counts stay whole


def test_the_changes_listed_bound(tmp_path: Path) -> None:
    layout = _layout(tmp_path)
    cache = FingerprintCache()
    before = take_snapshot(layout, cache, ENV)
    for name in ("a.txt", "b.txt", "c.txt"):
        Path(layout.top, name).write_text("changed\n")
    after = take_snapshot(layout, cache, ENV)
    cut = compare_trees(layout, before.tree, after.tree, ENV, str, max_changes=2)
    assert len(cut.changes) == 2 and cut.omitted == 1 and "changes" in cut.truncated
    assert cut.counts()["files"] == 3


def test_diffs_are_redacted(tmp_path: Path) -> None:
    layout = _layout(tmp_path)
    cache = FingerprintCache()
    before = take_snapshot(layout, cache, ENV)
    Path(layout.top, "a.txt").write_text("token = hunter2-secret\n")
    after = take_snapshot(layout, cache, ENV)
    comparison = compare_trees(
        layout, before.tree, after.tree, ENV, lambda text: text.replace("hunter2-secret", "[R]")
    )
    assert "hunter2" not in comparison.changes[0].diff and "[R]" in comparison.changes[0].diff


def test_matching_with_reports(tmp_path: Path) -> None:
    layout = _layout(tmp_path)
    top = Path(layout.top)
    cache = FingerprintCache()
    before = take_snapshot(layout, cache, ENV)
    (top / "a.txt").write_text("reported\n")
    (top / "b.txt").write_text("denied but written\n")
    (top / "c.txt").write_text("silent\n")
    after = take_snapshot(layout, cache, ENV)
    comparison = compare_trees(layout, before.tree, after.tree, ENV, str)
    tool_calls = {
        "call_1": {"toolCallId": "call_1", "locations": [{"path": str(top / "a.txt")}]},
        "call_2": {"toolCallId": "call_2", "content": [{"type": "diff", "path": "b.txt"}]},
    }
    permissions = [
        {
            "toolCallId": "call_2",
            "outcome": "selected",
            "optionId": "reject",
            "options": [{"optionId": "reject", "kind": "reject_once"}],
        },
    ]
    match_reports(comparison, reported_paths(tool_calls, permissions, cwd=str(top), top=str(top)))
    by_path = {c.path: c for c in comparison.changes}
    assert by_path["a.txt"].reported_by == ["call_1"] and not by_path["a.txt"].unreported
    assert by_path["b.txt"].unreported  # its permission was refused
    assert by_path["c.txt"].unreported
    assert comparison.counts()["unreported"] == 2
