"""Owner-only files and directories, opened without following symlinks, and durable syncs.

Every file Baton keeps durably (journal segments, the run store) goes through here:

- directories are created ``0700`` and files ``0600``; an existing one must be a real directory
  or regular file (never a symlink), owned by the effective user, with no group or other
  permission bits, and a regular file must have exactly one link (a hard link could expose it
  under another name);
- files are opened with ``O_NOFOLLOW`` relative to a directory descriptor opened with
  ``O_NOFOLLOW | O_DIRECTORY``, so no component Baton owns can be swapped for a symlink between
  the check and the use;
- an existing directory that is empty and ours but open to others (``mkdir`` with the usual
  umask gives 0755) is tightened to ``0700`` by :func:`prepare_private_dir`, which says so, as
  PostgreSQL's ``initdb`` does; one that holds anything is refused, never changed;
- a full disk and a read-only file system or directory are raised as
  :class:`~baton.errors.StorageFull` and :class:`~baton.errors.StorageReadOnly`
  (:func:`classify_os_error`), never as a raw ``OSError``;
- :func:`sync_file` is the strongest sync the platform offers for file data (``F_FULLFSYNC`` on
  macOS, where ``fsync`` leaves data in the drive cache; ``fdatasync`` elsewhere: appends only
  need the data and the file size).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
from pathlib import Path
from typing import Final

from baton.errors import DataDirNotFound, StorageError, StorageFull, StorageReadOnly, UnsafePath

#: Permissions of every directory Baton creates (owner only).
PRIVATE_DIR_MODE: Final = 0o700
#: Permissions of every file Baton creates (owner read/write only).
PRIVATE_FILE_MODE: Final = 0o600

_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY: Final = getattr(os, "O_DIRECTORY", 0)


def check_private_dir(path: Path, st: os.stat_result) -> None:
    """Raise :class:`UnsafePath` unless ``st`` (from ``lstat``) is a private directory we own."""
    if stat.S_ISLNK(st.st_mode):
        raise UnsafePath(str(path), "is a symlink; Baton does not follow symlinks it owns")
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafePath(str(path), "is not a directory")
    if st.st_uid != os.geteuid():
        raise UnsafePath(str(path), f"is owned by uid {st.st_uid}, not by this user")
    if st.st_mode & 0o077:
        raise UnsafePath(
            str(path),
            f"is open to other users (mode {stat.S_IMODE(st.st_mode):04o}); "
            f"use a private directory or `chmod 700` it",
        )


def check_private_file(path: Path, st: os.stat_result) -> None:
    """Raise :class:`UnsafePath` unless ``st`` is a private regular file we own, linked once."""
    if stat.S_ISLNK(st.st_mode):
        raise UnsafePath(str(path), "is a symlink; Baton does not follow symlinks it owns")
    if not stat.S_ISREG(st.st_mode):
        raise UnsafePath(str(path), "is not a regular file")
    if st.st_uid != os.geteuid():
        raise UnsafePath(str(path), f"is owned by uid {st.st_uid}, not by this user")
    if st.st_mode & 0o077:
        raise UnsafePath(str(path), f"is open to other users (mode {stat.S_IMODE(st.st_mode):04o})")
    if st.st_nlink != 1:
        raise UnsafePath(str(path), f"has {st.st_nlink} hard links; Baton's files have one")


#: errno values that mean the file system has no room left (a full disk, a user's quota).
_FULL_ERRNOS: Final = frozenset(
    code for code in (errno.ENOSPC, getattr(errno, "EDQUOT", None)) if code is not None
)
#: errno values that mean Baton may not write there (a read-only mount, a mode or ACL).
_READ_ONLY_ERRNOS: Final = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})


def classify_os_error(exc: OSError, path: Path) -> StorageError | None:
    """The stable storage error an ``OSError`` on ``path`` stands for (a full disk, a place
    Baton may not write), or None for any other failure."""
    if exc.errno in _FULL_ERRNOS:
        return StorageFull(f"{path}: no space left on the device ({exc.strerror or exc})")
    if exc.errno in _READ_ONLY_ERRNOS:
        return StorageReadOnly(f"{path}: cannot be written by this user ({exc.strerror or exc})")
    return None


def storage_error(exc: OSError, path: Path, doing: str) -> StorageError:
    """:func:`classify_os_error`, or a plain STORAGE_ERROR naming what failed."""
    return classify_os_error(exc, path) or StorageError(
        f"{path}: {doing} failed ({exc.strerror or exc})"
    )


def prepare_private_dir(path: Path, *, tighten_empty: bool = True) -> tuple[Path, str | None]:
    """Make ``path`` a private directory Baton may write, and say what was changed.

    A missing directory is created ``0700`` (missing parents with the default mode: they are
    not Baton's to restrict). An existing empty directory of ours with group or other bits is
    tightened to ``0700`` (unless ``tighten_empty`` is False: then it is refused). Returns the absolute path and a one-line notice of what was
    created or tightened (None when nothing changed). Raises :class:`UnsafePath` for a
    symlink, a non-directory, another user's directory or one that holds data with loose
    modes; :class:`~baton.errors.StorageReadOnly` when this user cannot write it;
    :class:`~baton.errors.StorageFull` when there is no room to create it.
    """
    path = path.absolute()
    notice: str | None = None
    try:
        if not os.path.lexists(path):
            path.parent.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(FileExistsError):
                os.mkdir(path, PRIVATE_DIR_MODE)
                notice = f"created {path} (mode 0700)"
                with contextlib.suppress(OSError):
                    parent_fd = os.open(path.parent, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
                    try:
                        os.fsync(parent_fd)
                    finally:
                        os.close(parent_fd)
        st = os.lstat(path)
        if tighten_empty and _loose_empty_dir_of_ours(path, st):
            loose = stat.S_IMODE(st.st_mode)
            fd = os.open(path, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC)
            try:
                os.fchmod(fd, PRIVATE_DIR_MODE)
            finally:
                os.close(fd)
            notice = f"tightened {path} from mode {loose:04o} to 0700 (it was empty and yours)"
            st = os.lstat(path)
        check_private_dir(path, st)
        if not os.access(path, os.W_OK | os.X_OK):
            raise StorageReadOnly(f"{path}: this user cannot write the data directory")
    except OSError as exc:
        raise storage_error(exc, path, "preparing the directory") from exc
    return path, notice


def _loose_empty_dir_of_ours(path: Path, st: os.stat_result) -> bool:
    return (
        stat.S_ISDIR(st.st_mode)
        and st.st_uid == os.geteuid()
        and bool(st.st_mode & 0o077)
        and not os.listdir(path)
    )


def ensure_private_dir(path: Path) -> Path:
    """:func:`prepare_private_dir` that never changes an existing directory (Baton's own
    subdirectories: a loose one was loosened by someone, not made by ``mkdir``): the ready,
    absolute path."""
    return prepare_private_dir(path, tighten_empty=False)[0]


def existing_private_dir(path: Path) -> Path:
    """Check, creating and changing nothing, that ``path`` is a private directory we own
    (for read-only use). Raises :class:`~baton.errors.DataDirNotFound` when it is missing and
    :class:`UnsafePath` when it is not private or not ours."""
    path = path.absolute()
    try:
        st = os.lstat(path)
    except FileNotFoundError as exc:
        raise DataDirNotFound(
            f"no Baton data directory at {path} (pass --data-dir or set BATON_HOME)"
        ) from exc
    except OSError as exc:
        raise storage_error(exc, path, "reading the directory") from exc
    check_private_dir(path, st)
    return path


def open_dir(path: Path) -> int:
    """Open a private directory for ``dir_fd`` use, refusing a symlink at the last component."""
    try:
        fd = os.open(path, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC)
    except OSError as exc:
        raise UnsafePath(str(path), f"cannot be opened as a directory ({exc.strerror})") from exc
    try:
        check_private_dir(path, os.fstat(fd))
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_file(dir_fd: int, name: str, flags: int, *, display: Path) -> int:
    """Open ``name`` inside the directory ``dir_fd`` without following symlinks.

    ``flags`` are ``os.O_*`` access flags (``O_CREAT`` creates the file 0600). The opened file is
    checked with :func:`check_private_file`; ``display`` is the path shown in errors.
    """
    try:
        fd = os.open(name, flags | _NOFOLLOW | _CLOEXEC, PRIVATE_FILE_MODE, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in _SYMLINK_ERRNOS:
            raise UnsafePath(str(display), "is a symlink; Baton does not follow it") from exc
        raise
    try:
        check_private_file(display, os.fstat(fd))
    except BaseException:
        os.close(fd)
        raise
    return fd


# ELOOP on Linux; some BSDs report EMLINK or EFTYPE for O_NOFOLLOW on a symlink.
_SYMLINK_ERRNOS: Final = frozenset(
    code for code in (errno.ELOOP, errno.EMLINK, getattr(errno, "EFTYPE", None)) if code
)


def sync_file(fd: int) -> None:
    """Make the data written to ``fd`` durable (see the module docstring for the platform
    choice). Blocking: call it off the event loop."""
    full_fsync = getattr(fcntl, "F_FULLFSYNC", None)
    if full_fsync is not None:
        try:
            fcntl.fcntl(fd, full_fsync)
            return
        except OSError:
            pass  # not supported by this file system: fall back to fsync
        os.fsync(fd)
        return
    os.fdatasync(fd)


def sync_dir(fd: int) -> None:
    """Make the directory entries of ``fd`` durable (a new segment's name). Blocking."""
    os.fsync(fd)
