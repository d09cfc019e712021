"""Confinement: every file the scripted agent touches lies inside the session cwd.

A path from a prompt is joined to the session cwd and both are resolved with symlinks followed;
the result must lie strictly inside the resolved cwd, or the path is refused. The check is
repeated just before a write (after creating parent directories), and the file is opened with
``O_NOFOLLOW``, so a symlink planted between the check and the write cannot redirect it.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import Final

#: Largest existing file ``write`` reads to report as ``oldText``: bounds what one prompt can
#: make the agent read into memory.
MAX_OLD_TEXT_BYTES: Final = 1024 * 1024

#: Permission bits of files the agent creates (before the umask).
NEW_FILE_MODE: Final = 0o644


class PathRefused(Exception):
    """A path the agent will not touch. The message says why, for the tool call's rawOutput."""


@dataclass(frozen=True, slots=True)
class ConfinedPath:
    """A path inside the session cwd: ``shown`` as the client sees it, ``real`` resolved."""

    shown: str
    real: str
    root: str


def _inside(root: str, real: str) -> bool:
    return real != root and os.path.commonpath([root, real]) == root


def confine(cwd: str, path: str) -> ConfinedPath:
    """Resolve ``path`` (relative to ``cwd``, or absolute) and check it lies inside ``cwd``."""
    if not os.path.isabs(cwd):
        raise PathRefused(f"the session cwd {cwd!r} is not absolute")
    if not path or "\x00" in path:
        raise PathRefused("the path is empty or contains a NUL byte")
    root = os.path.realpath(cwd)
    if not os.path.isdir(root):
        raise PathRefused(f"the session cwd {cwd!r} is not a directory")
    shown = os.path.normpath(os.path.join(cwd, path))
    real = os.path.realpath(shown)
    if not _inside(root, real):
        raise PathRefused(f"{path!r} resolves outside the session cwd")
    return ConfinedPath(shown, real, root)


def read_text(target: ConfinedPath) -> str | None:
    """The current text of ``target``, or None when it does not exist.

    Refuses anything but a UTF-8 regular file of at most :data:`MAX_OLD_TEXT_BYTES`.
    """
    try:
        info = os.stat(target.real, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise PathRefused(f"cannot inspect the file: {type(exc).__name__}") from exc
    if not stat.S_ISREG(info.st_mode):
        raise PathRefused("the path exists and is not a regular file")
    if info.st_size > MAX_OLD_TEXT_BYTES:
        raise PathRefused(f"the existing file is larger than {MAX_OLD_TEXT_BYTES} bytes")
    try:
        fd = os.open(target.real, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise PathRefused(f"cannot open the file: {type(exc).__name__}") from exc
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(MAX_OLD_TEXT_BYTES + 1)
    if len(data) > MAX_OLD_TEXT_BYTES:
        raise PathRefused(f"the existing file is larger than {MAX_OLD_TEXT_BYTES} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PathRefused("the existing file is not UTF-8 text") from exc


def write_text(cwd: str, path: str, text: str) -> int:
    """Write ``text`` to ``path`` inside ``cwd`` (parents created); return the bytes written."""
    target = confine(cwd, path)
    parent = os.path.dirname(target.real)
    try:
        os.makedirs(parent, exist_ok=True)
    except OSError as exc:
        raise PathRefused(f"cannot create the parent directory: {type(exc).__name__}") from exc
    # Check again now that the parents exist: nothing may have redirected them outside.
    target = confine(cwd, path)
    data = text.encode("utf-8")
    try:
        fd = os.open(
            target.real,
            os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC,
            NEW_FILE_MODE,
        )
    except OSError as exc:
        raise PathRefused(f"cannot open the file for writing: {type(exc).__name__}") from exc
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    return len(data)


def resolve_for_client(cwd: str, path: str) -> str:
    """The absolute path inside ``cwd`` to name in an fs/* request (refused when outside)."""
    return confine(cwd, path).shown
