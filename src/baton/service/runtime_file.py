"""One service per data directory: the lock, and the runtime file the CLI reads.

The service owns the file's format; this module writes it (:class:`ServiceLock`) and reads it
(:func:`find_service`, which the CLI calls to reach a running service). It imports neither
Starlette nor uvicorn, so a CLI verb that looks for a service stays fast; it sits below both
surfaces in the layer table.

The lock is an exclusive ``flock`` on ``serve.lock`` (0600, never followed through a
symlink), held for the process's life: the kernel releases it when the process dies, even by
SIGKILL, so a stale runtime file is told apart from a live service by the lock alone
(:func:`find_service`). The runtime file ``serve.json`` (0600, URL, pid and token) is
written atomically (a temporary file, fsync, rename) after the socket is bound, and removed on
a clean exit. Nothing is created while looking.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

import orjson

from baton.durable.files import open_dir, open_file, storage_error, sync_dir, sync_file
from baton.errors import ServiceAlreadyRunning, UnsafePath

#: Seconds a service started in the background (issue 30, item 2: the first `baton run
#: --session`/`session new` starts it) waits with nothing to do before it stops by itself
#: (``[service] idle_stop``, ``baton serve --idle-stop``): keeps agents warm between a person's
#: turns without leaving a service behind for good. Nothing queued, running or waiting for an
#: answer, no event stream open and no request for this long (baton.service.idle).
DEFAULT_IDLE_STOP_SECONDS: Final = 1800.0

#: The service's lock file in the data directory (held with flock while it runs).
LOCK_FILENAME: Final = "serve.lock"
#: The service's runtime file in the data directory: URL, pid, token (0600).
RUNTIME_FILENAME: Final = "serve.json"
#: The temporary name the runtime file is written under before its rename.
TEMPORARY_RUNTIME_FILENAME: Final = RUNTIME_FILENAME + ".tmp"
#: Largest runtime file read (it holds three short fields): a bigger file is not the
#: service's, and is not read past this.
MAX_RUNTIME_FILE_BYTES: Final = 64 * 1024


@dataclass(frozen=True)
class RuntimeInfo:
    """What ``serve.json`` says: the service's base URL, its pid and its token."""

    url: str
    pid: int
    token: str
    #: The launch key (see :class:`baton.service.tokens.Credentials`); empty in a file an
    #: older service wrote.
    launch_key: str = ""

    def to_json(self) -> bytes:
        """The file's contents."""
        fields: dict[str, object] = {"url": self.url, "pid": self.pid, "token": self.token}
        if self.launch_key:
            fields["launchKey"] = self.launch_key
        return orjson.dumps(fields)


def _read_private(data_dir: Path, name: str) -> bytes | None:
    try:
        dir_fd = open_dir(data_dir)
    except UnsafePath:
        return None
    try:
        try:
            fd = open_file(dir_fd, name, os.O_RDONLY, display=data_dir / name)
        except (FileNotFoundError, UnsafePath):
            # Absent, or not a private file of this user (a symlink, open to others): never
            # trusted; the verb works in-process instead.
            return None
        try:
            return os.read(fd, MAX_RUNTIME_FILE_BYTES)
        finally:
            os.close(fd)
    finally:
        os.close(dir_fd)


def lock_is_held(data_dir: Path) -> bool:
    """Whether some process holds the service lock of ``data_dir`` (creates nothing)."""
    try:
        fd = os.open(data_dir / LOCK_FILENAME, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
    return False


def find_service(data_dir: Path) -> RuntimeInfo | None:
    """The running service of ``data_dir``, or None when there is none (no runtime file, an
    unsafe one, or a lock nobody holds: the service died)."""
    raw = _read_private(data_dir, RUNTIME_FILENAME)
    if raw is None or not lock_is_held(data_dir):
        return None
    try:
        fields = orjson.loads(raw)
        info = RuntimeInfo(
            str(fields["url"]),
            int(fields["pid"]),
            str(fields["token"]),
            str(fields.get("launchKey") or ""),
        )
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return None
    if urlsplit(info.url).scheme != "http":
        return None
    return info


class ServiceLock:
    """The data directory's service lock, held from :meth:`acquire` to :meth:`release`."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self._dir_fd: int | None = None
        self._lock_fd: int | None = None

    def acquire(self) -> None:
        """Take the lock, or raise SERVICE_ALREADY_RUNNING naming the holder's pid."""
        dir_fd = open_dir(self.data_dir)
        try:
            lock_fd = open_file(
                dir_fd, LOCK_FILENAME, os.O_RDWR | os.O_CREAT, display=self.data_dir / LOCK_FILENAME
            )
        except OSError as exc:
            os.close(dir_fd)
            raise storage_error(exc, self.data_dir / LOCK_FILENAME, "opening the lock") from exc
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(lock_fd)
            os.close(dir_fd)
            raise ServiceAlreadyRunning(
                f"another `baton serve` runs on {self.data_dir}{self._holder()}; "
                "stop it or use another --data-dir"
            ) from None
        self._dir_fd, self._lock_fd = dir_fd, lock_fd

    def _holder(self) -> str:
        info = find_service(self.data_dir)
        return f" (pid {info.pid}, {info.url})" if info is not None else ""

    def write_runtime_file(self, info: RuntimeInfo) -> None:
        """Publish the URL, pid and token for this user's CLI (atomically, 0600)."""
        assert self._dir_fd is not None, "acquire the lock first"
        path = self.data_dir / RUNTIME_FILENAME
        with contextlib.suppress(FileNotFoundError):
            os.unlink(TEMPORARY_RUNTIME_FILENAME, dir_fd=self._dir_fd)
        try:
            fd = open_file(
                self._dir_fd,
                TEMPORARY_RUNTIME_FILENAME,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL,
                display=path,
            )
            try:
                os.write(fd, info.to_json())
                sync_file(fd)
            finally:
                os.close(fd)
            os.rename(
                TEMPORARY_RUNTIME_FILENAME,
                RUNTIME_FILENAME,
                src_dir_fd=self._dir_fd,
                dst_dir_fd=self._dir_fd,
            )
            sync_dir(self._dir_fd)
        except OSError as exc:
            raise storage_error(exc, path, "writing the runtime file") from exc

    def release(self) -> None:
        """Remove the runtime file and let go of the lock (idempotent)."""
        if self._dir_fd is not None:
            with contextlib.suppress(OSError):
                os.unlink(RUNTIME_FILENAME, dir_fd=self._dir_fd)
            os.close(self._dir_fd)
            self._dir_fd = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None
