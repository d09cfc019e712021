"""A workspace's state at one moment: HEAD and a content fingerprint of its tracked and
untracked (not ignored) files, as a git tree object, bounded.

:func:`take_snapshot` lists the files with ``git ls-files`` (no filter, no fsmonitor: see
:mod:`~baton.runtime.workspaces.git`), ``lstat``s each (a path whose directory resolves
outside the workspace is skipped: symlinks are never followed out), reads the content of
regular files with ``O_NOFOLLOW`` and the target of symlinks, writes the blobs git lacks
(:mod:`~baton.runtime.workspaces.objects`) and builds a tree in a private index file
(``update-index --index-info``, ``write-tree``), so two snapshots compare as two trees.

A :class:`FingerprintCache` (held by the caller, per workspace) keeps each file's stat and
blob id: a file whose stat did not change, and was not modified within
:data:`~baton.runtime.workspaces.limits.RACY_WINDOW_SECONDS` of the snapshot, is not read
again. Every bound leaves a marker (``truncated``, ``not_hashed``).

Blocking (subprocess and file I/O): :func:`take_snapshot` runs in a thread of its caller's.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import time
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from baton.runtime.workspaces.git import filter_drivers, run_git
from baton.runtime.workspaces.limits import (
    MAX_FILES_COMPARED,
    MAX_HASHED_BYTES,
    MAX_HASHED_FILE_BYTES,
    RACY_WINDOW_SECONDS,
)
from baton.runtime.workspaces.objects import blob_id, missing_objects, write_blob

#: A file's stat as compared: (git mode, size, mtime ns, ctime ns, inode).
StatKey = tuple[str, int, int, int, int]

#: The git modes of what a snapshot holds.
REGULAR_MODE = "100644"
EXECUTABLE_MODE = "100755"
SYMLINK_MODE = "120000"


@dataclass
class FingerprintCache:
    """Each file's last stat and blob id, so an unchanged file is not read again, and a
    private index file holding the last snapshot's entries, so the next tree is built by
    updating only what changed. One per workspace, owned by whoever takes its snapshots (no
    global state); its index directory is removed when the cache is collected."""

    entries: dict[str, tuple[StatKey, str]] = field(default_factory=dict)
    #: The private index's directory (None until the first snapshot) and what it holds.
    index_dir: str | None = None
    indexed: dict[str, tuple[str, str]] = field(default_factory=dict)
    tree: str | None = None

    def index_file(self) -> str:
        """The private index file (its directory created on first use)."""
        if self.index_dir is None or not os.path.isdir(self.index_dir):
            self.index_dir = tempfile.mkdtemp(prefix="baton-snapshot-")
            self.indexed, self.tree = {}, None
            weakref.finalize(self, shutil.rmtree, self.index_dir, ignore_errors=True)
        return os.path.join(self.index_dir, "index")


@dataclass(frozen=True, slots=True)
class RepositoryLayout:
    """Where a workspace's git data lives: its top directory, the object store, the object
    format and the filter drivers to empty on every command."""

    top: str
    objects_dir: str
    object_format: str
    filters: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A workspace's state: HEAD (None before the first commit), the tree of its fingerprinted
    files, the files too large (or past the byte bound) to hash with their stat, and which
    bounds were reached."""

    head: str | None
    tree: str
    files: int
    hashed_bytes: int
    not_hashed: Mapping[str, StatKey]
    truncated: tuple[str, ...]
    files_seen: int

    def to_json(self) -> dict[str, Any]:
        """The snapshot as the store keeps it."""
        return {
            "head": self.head,
            "tree": self.tree,
            "files": self.files,
            "filesSeen": self.files_seen,
            "hashedBytes": self.hashed_bytes,
            "notHashed": {path: list(key) for path, key in self.not_hashed.items()},
            "truncated": list(self.truncated),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Snapshot:
        """A snapshot the store kept."""
        not_hashed = data.get("notHashed") or {}
        return cls(
            head=data.get("head"),
            tree=str(data["tree"]),
            files=int(data.get("files", 0)),
            hashed_bytes=int(data.get("hashedBytes", 0)),
            not_hashed={
                str(path): (str(k[0]), int(k[1]), int(k[2]), int(k[3]), int(k[4]))
                for path, k in not_hashed.items()
            },
            truncated=tuple(str(t) for t in data.get("truncated") or ()),
            files_seen=int(data.get("filesSeen", data.get("files", 0))),
        )


def repository_layout(top: str, environ: Mapping[str, str]) -> RepositoryLayout:
    """The layout of the repository whose work tree is ``top``."""
    objects = run_git(top, ["rev-parse", "--git-path", "objects"], environ=environ).text
    object_format = (
        run_git(top, ["rev-parse", "--show-object-format"], environ=environ, check=False).text
        or "sha1"
    )
    return RepositoryLayout(
        top=top,
        objects_dir=os.path.realpath(os.path.join(top, objects)),
        object_format=object_format if object_format in ("sha1", "sha256") else "sha1",
        filters=filter_drivers(top, environ),
    )


def _git_mode(mode: int) -> str | None:
    if stat.S_ISLNK(mode):
        return SYMLINK_MODE
    if stat.S_ISREG(mode):
        return EXECUTABLE_MODE if mode & stat.S_IXUSR else REGULAR_MODE
    return None


def _read_nofollow(path: str) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    try:
        chunks: list[bytes] = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    finally:
        os.close(fd)


def _listed_paths(layout: RepositoryLayout, environ: Mapping[str, str]) -> list[str]:
    listed = run_git(
        layout.top,
        ["ls-files", "-z", "--cached", "--others", "--exclude-standard", "--deduplicate"],
        filters=layout.filters,
        environ=environ,
    )
    paths = {p for p in listed.stdout.decode("utf-8", "surrogateescape").split("\0") if p}
    return sorted(paths)


def take_snapshot(
    layout: RepositoryLayout,
    cache: FingerprintCache,
    environ: Mapping[str, str],
    *,
    max_files: int = MAX_FILES_COMPARED,
    max_bytes: int = MAX_HASHED_BYTES,
    max_file_bytes: int = MAX_HASHED_FILE_BYTES,
) -> Snapshot:
    """The workspace's state now (module docstring); ``cache`` is read and updated."""
    top = layout.top
    head_result = run_git(
        top, ["rev-parse", "--verify", "-q", "HEAD^{commit}"], environ=environ, check=False
    )
    head = head_result.text or None
    paths = _listed_paths(layout, environ)
    truncated: list[str] = []
    files_seen = len(paths)
    if len(paths) > max_files:
        paths = paths[:max_files]
        truncated.append("files")
    now_ns = time.time_ns()
    racy_ns = int(RACY_WINDOW_SECONDS * 1e9)
    real_top = os.path.realpath(top)
    inside_dirs: dict[str, bool] = {}
    entries: list[tuple[str, str, str]] = []  # (mode, id, path)
    contents: dict[str, bytes] = {}
    not_hashed: dict[str, StatKey] = {}
    hashed = 0
    seen: set[str] = set()
    for path in paths:
        if path.endswith("/"):
            continue  # a nested repository listed as a directory: not this workspace's
        full = os.path.join(top, path)
        parent = os.path.dirname(path)
        inside = inside_dirs.get(parent)
        if inside is None:
            real_parent = os.path.realpath(os.path.join(top, parent))
            inside = real_parent == real_top or real_parent.startswith(real_top + os.sep)
            inside_dirs[parent] = inside
        if not inside:
            continue  # reached through a symlinked directory: never followed out
        try:
            info = os.lstat(full)
        except OSError:
            continue  # deleted (a tracked file no longer there)
        mode = _git_mode(info.st_mode)
        if mode is None:
            continue  # a directory (a submodule), a socket, a fifo
        key: StatKey = (mode, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)
        seen.add(path)
        cached = cache.entries.get(path)
        racy = now_ns - info.st_mtime_ns < racy_ns
        if cached is not None and cached[0] == key and not racy:
            entries.append((mode, cached[1], path))
            continue
        if mode != SYMLINK_MODE and (
            info.st_size > max_file_bytes or hashed + info.st_size > max_bytes
        ):
            not_hashed[path] = key
            if info.st_size <= max_file_bytes and "hashed_bytes" not in truncated:
                truncated.append("hashed_bytes")
            continue
        try:
            if mode == SYMLINK_MODE:
                content = os.fsencode(os.readlink(full))
            else:
                content = _read_nofollow(full)
        except OSError:
            continue  # replaced or removed meanwhile
        hashed += len(content)
        object_id = blob_id(content, layout.object_format)
        contents[object_id] = content
        cache.entries[path] = (key, object_id)
        entries.append((mode, object_id, path))
    for gone in [p for p in cache.entries if p not in seen]:
        del cache.entries[gone]
    for object_id in missing_objects(top, contents, environ):
        write_blob(layout.objects_dir, object_id, contents[object_id])
    tree = _update_tree(layout, cache, entries, environ)
    return Snapshot(
        head=head,
        tree=tree,
        files=len(entries) + len(not_hashed),
        hashed_bytes=hashed,
        not_hashed=not_hashed,
        truncated=tuple(truncated),
        files_seen=files_seen,
    )


def _update_tree(
    layout: RepositoryLayout,
    cache: FingerprintCache,
    entries: list[tuple[str, str, str]],
    environ: Mapping[str, str],
) -> str:
    """The tree of ``entries``, built by updating the cache's private index with what
    changed since its last snapshot (mode 0 removes an entry); the workspace's own index is
    never touched."""
    index = {"GIT_INDEX_FILE": cache.index_file()}
    wanted = {path: (mode, object_id) for mode, object_id, path in entries}
    zero = "0" * (64 if layout.object_format == "sha256" else 40)
    lines = [
        f"{mode} {object_id}\t".encode() + os.fsencode(path) + b"\0"
        for path, (mode, object_id) in wanted.items()
        if cache.indexed.get(path) != (mode, object_id)
    ]
    lines += [
        f"0 {zero}\t".encode() + os.fsencode(path) + b"\0"
        for path in cache.indexed
        if path not in wanted
    ]
    if lines or cache.tree is None:
        cache.tree = None  # an interrupted update leaves the index unknown
        run_git(
            layout.top,
            ["update-index", "-z", "--add", "--remove", "--index-info"],
            environ=environ,
            extra_env=index,
            stdin=b"".join(lines),
        )
        cache.indexed = wanted
        cache.tree = run_git(layout.top, ["write-tree"], environ=environ, extra_env=index).text
    return cache.tree


def _write_tree(
    layout: RepositoryLayout, entries: list[tuple[str, str, str]], environ: Mapping[str, str]
) -> str:
    """A tree of ``entries`` built in a private index file (the workspace's index is never
    touched)."""
    with tempfile.TemporaryDirectory(prefix="baton-snapshot-") as scratch:
        index = {"GIT_INDEX_FILE": os.path.join(scratch, "index")}
        lines = b"".join(
            f"{mode} {object_id}\t".encode() + os.fsencode(path) + b"\0"
            for mode, object_id, path in entries
        )
        run_git(
            layout.top,
            ["update-index", "-z", "--add", "--index-info"],
            environ=environ,
            extra_env=index,
            stdin=lines,
        )
        return run_git(layout.top, ["write-tree"], environ=environ, extra_env=index).text


def empty_tree(layout: RepositoryLayout, environ: Mapping[str, str]) -> str:
    """The empty tree's id (the base of a repository with no commit)."""
    return _write_tree(layout, [], environ)


def base_tree(layout: RepositoryLayout, base_commit: str | None, environ: Mapping[str, str]) -> str:
    """The tree a workspace's changes since its base are against: its base commit's, or the
    empty tree when it has none."""
    if base_commit:
        return commit_tree(layout, base_commit, environ)
    return empty_tree(layout, environ)


def commit_tree(layout: RepositoryLayout, commit: str, environ: Mapping[str, str]) -> str:
    """The tree of ``commit``."""
    return run_git(
        layout.top, ["rev-parse", "--verify", f"{commit}^{{tree}}"], environ=environ
    ).text
