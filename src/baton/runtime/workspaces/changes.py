"""The independent comparison: what changed between two snapshots (or a base commit and a
snapshot), file by file, read from git's tree-to-tree diff (never a worktree file through a
filter, ``--no-textconv --no-ext-diff``).

Each change has its kind (``added``, ``modified``, ``deleted``, ``renamed``, ``mode``,
``symlink``), its path (and ``oldPath`` for a rename), its modes, +/- line counts, whether it
is binary, and a bounded, redacted unified diff in git's format (``git apply`` takes the
concatenation of the diffs of a comparison that reached no bound). Every bound leaves a
marker (:mod:`~baton.runtime.workspaces.limits`).

Blocking (subprocess): callers run :func:`compare_trees` in a thread.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from baton.runtime.workspaces.git import run_git
from baton.runtime.workspaces.limits import (
    MAX_CHANGES_LISTED,
    MAX_DIFF_BYTES_PER_FILE,
    MAX_DIFF_BYTES_PER_TURN,
)
from baton.runtime.workspaces.snapshot import SYMLINK_MODE, RepositoryLayout, Snapshot

#: The kinds of change, in the order a summary counts them.
CHANGE_KINDS = ("added", "modified", "deleted", "renamed", "mode", "symlink")

#: The marker a diff cut at its per-file bound ends with.
DIFF_CUT_MARKER = "\\ Baton: diff cut at {limit} bytes (MAX_DIFF_BYTES_PER_FILE)\n"

_FILE_HEADER = re.compile(rb"^diff --git ", re.MULTILINE)

_DIFF_OPTIONS = ("-r", "-M", "--no-textconv", "--no-ext-diff", "--no-color")


@dataclass
class FileChange:
    """One file's change (module docstring)."""

    kind: str
    path: str
    old_path: str | None = None
    old_mode: str | None = None
    new_mode: str | None = None
    added_lines: int = 0
    removed_lines: int = 0
    binary: bool = False
    diff: str = ""
    diff_truncated: bool = False
    not_hashed: bool = False
    #: Set by matching (:mod:`~baton.runtime.workspaces.reported`): the tool calls that
    #: reported it; None when it was not compared with a turn's reports.
    reported_by: list[str] | None = None

    @property
    def unreported(self) -> bool:
        """Matched with a turn's reports and reported by none of them."""
        return self.reported_by is not None and not self.reported_by

    def to_json(self) -> dict[str, Any]:
        """The change as the ``workspace_changes`` item carries it."""
        view: dict[str, Any] = {
            "kind": self.kind,
            "path": self.path,
            "added": self.added_lines,
            "removed": self.removed_lines,
            "binary": self.binary,
        }
        if self.old_path is not None:
            view["oldPath"] = self.old_path
        if self.old_mode is not None:
            view["oldMode"] = self.old_mode
        if self.new_mode is not None:
            view["newMode"] = self.new_mode
        view["diff"] = self.diff
        if self.diff_truncated:
            view["diffTruncated"] = True
        if self.not_hashed:
            view["notHashed"] = True
        if self.reported_by is not None:
            view["reportedBy"] = list(self.reported_by)
            view["unreported"] = not self.reported_by
        return view


@dataclass
class Comparison:
    """The changes between two states, with the bounds reached."""

    changes: list[FileChange] = field(default_factory=list)
    truncated: list[str] = field(default_factory=list)
    omitted: int = 0
    diff_bytes: int = 0

    def counts(self) -> dict[str, int]:
        """How many changes of each kind (and unreported ones), with the lines added and
        removed."""
        counts = {kind: 0 for kind in CHANGE_KINDS}
        for change in self.changes:
            counts[change.kind] += 1
        counts["files"] = len(self.changes) + self.omitted
        counts["unreported"] = sum(1 for c in self.changes if c.unreported)
        counts["linesAdded"] = sum(c.added_lines for c in self.changes)
        counts["linesRemoved"] = sum(c.removed_lines for c in self.changes)
        return counts

    def to_json(self) -> dict[str, Any]:
        """The comparison as the item carries it."""
        return {
            "counts": self.counts(),
            "files": [change.to_json() for change in self.changes],
            "changesOmitted": self.omitted,
            "truncated": list(self.truncated),
        }


def _kind(status: str, old_mode: str, new_mode: str) -> str:
    letter = status[:1]
    if letter == "A":
        return "added"
    if letter == "D":
        return "deleted"
    if letter in ("R", "C"):
        return "renamed"
    if letter == "T" or (old_mode != new_mode and SYMLINK_MODE in (old_mode, new_mode)):
        return "symlink"
    if old_mode != new_mode:
        return "mode"
    return "modified"


def _diff_tree(
    layout: RepositoryLayout, old: str, new: str, environ: Mapping[str, str], *form: str
) -> bytes:
    """``git diff-tree`` of two trees in ``form`` (hardened, no textconv or external diff)."""
    return run_git(
        layout.top,
        ["diff-tree", *_DIFF_OPTIONS, *form, old, new],
        environ=environ,
        filters=layout.filters,
    ).stdout


def tree_patch(layout: RepositoryLayout, old: str, new: str, environ: Mapping[str, str]) -> bytes:
    """The whole patch from tree ``old`` to tree ``new`` in git's format (binary patches,
    full ids: ``git apply`` takes it), unbounded but for the git output bound."""
    return _diff_tree(layout, old, new, environ, "-p", "--binary", "--full-index")


def _raw_changes(
    layout: RepositoryLayout, old: str, new: str, environ: Mapping[str, str]
) -> list[FileChange]:
    fields = _diff_tree(layout, old, new, environ, "-z", "--raw").split(b"\0")
    changes: list[FileChange] = []
    index = 0
    while index < len(fields) and fields[index].startswith(b":"):
        meta = fields[index][1:].decode("ascii").split(" ")
        old_mode, new_mode, status = meta[0], meta[1], meta[4]
        if status[:1] in ("R", "C"):
            old_path = fields[index + 1].decode("utf-8", "surrogateescape")
            path = fields[index + 2].decode("utf-8", "surrogateescape")
            index += 3
        else:
            old_path = None
            path = fields[index + 1].decode("utf-8", "surrogateescape")
            index += 2
        changes.append(
            FileChange(
                kind=_kind(status, old_mode, new_mode),
                path=path,
                old_path=old_path,
                old_mode=None if old_mode == "000000" else old_mode,
                new_mode=None if new_mode == "000000" else new_mode,
            )
        )
    return changes


def _numstat(
    layout: RepositoryLayout, old: str, new: str, environ: Mapping[str, str]
) -> list[tuple[int, int, bool]]:
    fields = _diff_tree(layout, old, new, environ, "-z", "--numstat").split(b"\0")
    stats: list[tuple[int, int, bool]] = []
    index = 0
    while index < len(fields) and fields[index]:
        parts = fields[index].split(b"\t")
        binary = parts[0] == b"-"
        stats.append((0 if binary else int(parts[0]), 0 if binary else int(parts[1]), binary))
        # A rename's numstat ends its line with a tab, then old and new paths as fields.
        index += 3 if parts[2:] == [b""] else 1
    return stats


def _patches(
    layout: RepositoryLayout, old: str, new: str, environ: Mapping[str, str]
) -> list[bytes]:
    raw = tree_patch(layout, old, new, environ)
    starts = [match.start() for match in _FILE_HEADER.finditer(raw)]
    # A header starts a line; a content line starts with " ", "+" or "-", a binary patch's
    # lines hold no space: only headers match.
    return [raw[start:end] for start, end in zip(starts, [*starts[1:], len(raw)], strict=True)]


def _grouped(changes: list[FileChange], patches: list[bytes]) -> list[bytes]:
    """One patch per change: a type change (a file made a symlink, or back) is two file
    patches in git's format (the old removed, the new added), joined here."""
    grouped: list[bytes] = []
    position = 0
    for change in changes:
        take = 2 if change.kind == "symlink" else 1
        grouped.append(b"".join(patches[position : position + take]))
        position += take
    return grouped if position == len(patches) else []


def _cut(text: str, limit: int) -> str:
    encoded = text.encode("utf-8", "surrogateescape")
    if len(encoded) <= limit:
        return text
    kept = encoded[:limit]
    kept = kept[: kept.rfind(b"\n") + 1] if b"\n" in kept else b""
    return kept.decode("utf-8", "replace") + DIFF_CUT_MARKER.format(limit=limit)


def compare_trees(
    layout: RepositoryLayout,
    old: str,
    new: str,
    environ: Mapping[str, str],
    redact: Callable[[str], str],
    *,
    max_file_diff: int = MAX_DIFF_BYTES_PER_FILE,
    max_turn_diff: int = MAX_DIFF_BYTES_PER_TURN,
    max_changes: int = MAX_CHANGES_LISTED,
) -> Comparison:
    """The changes from tree ``old`` to tree ``new``, diffs redacted with ``redact``."""
    changes = _raw_changes(layout, old, new, environ)
    stats = _numstat(layout, old, new, environ)
    patches = _grouped(changes, _patches(layout, old, new, environ)) if changes else []
    comparison = Comparison()
    if len(stats) != len(changes) or len(patches) != len(changes):
        # Never a guess: counts and diffs that do not line up with the file list are left
        # out, with a marker.
        stats = [(0, 0, False)] * len(changes)
        patches = []
        comparison.truncated.append("diff_unaligned")
    for position, change in enumerate(changes):
        if position >= max_changes:
            comparison.omitted = len(changes) - max_changes
            comparison.truncated.append("changes")
            break
        change.added_lines, change.removed_lines, change.binary = stats[position]
        if not patches:
            change.diff_truncated = True
            comparison.changes.append(change)
            continue
        text = redact(patches[position].decode("utf-8", "surrogateescape"))
        cut = _cut(text, max_file_diff)
        change.diff_truncated = cut != text
        size = len(cut.encode("utf-8", "surrogateescape"))
        if comparison.diff_bytes + size > max_turn_diff:
            change.diff = ""
            change.diff_truncated = True
            if "diff_bytes" not in comparison.truncated:
                comparison.truncated.append("diff_bytes")
        else:
            change.diff = cut
            comparison.diff_bytes += size
        comparison.changes.append(change)
    return comparison


def unhashed_changes(before: Snapshot | None, after: Snapshot) -> list[FileChange]:
    """Files too large to hash (in either snapshot) whose stat differs: changed, compared by
    stat only (``notHashed``, no diff)."""
    old = dict(before.not_hashed) if before is not None else {}
    found: list[FileChange] = []
    for path, key in after.not_hashed.items():
        if old.get(path) != key:
            found.append(
                FileChange(
                    kind="modified" if path in old else "added",
                    path=path,
                    new_mode=key[0],
                    not_hashed=True,
                    diff_truncated=True,
                )
            )
    return found
