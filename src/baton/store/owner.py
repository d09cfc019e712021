"""Which Baton process owns a record, and whether that process is still alive.

An owner is ``"<pid>:<start-ticks>@<host>"``: the pid alone is not enough, since pids are
reused; the start time (field 22 of ``/proc/<pid>/stat``, in clock ticks since boot) tells a
live owner from a new process that got the same pid. Without ``/proc`` the pid's existence is
used. The host (``BATON_HOST``, else the machine's host name) matters once a store is shared
by hosts (a PostgreSQL store, docs/fleet.md): a process on another host cannot be looked up
here, so it counts as alive; the fleet's worker heartbeats decide about it instead. An owner
recorded without a host (before issue 22) is a process of this host.
"""

from __future__ import annotations

import os
import socket
from functools import cache
from typing import Final

#: Index of ``starttime`` (field 22 of /proc/<pid>/stat) among the fields after the command
#: name's closing parenthesis (which start at field 3).
_START_FIELD: Final = 22 - 3


#: Process states (field 3 of /proc/<pid>/stat) of a process that has ended: a zombie (a
#: SIGKILLed `baton run` its parent has not reaped yet) or a dead one. Its pid and start time
#: are still there, but it owns nothing any more.
_ENDED_STATES: Final = frozenset({b"Z", b"X", b"x"})


def _stat_fields(pid: int) -> list[bytes] | None:
    """The fields of /proc/<pid>/stat after the command name (from field 3), or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    # The command name (field 2) may contain spaces and parentheses: split after the last ')'.
    return data[data.rfind(b")") + 2 :].split()


def _start_ticks(pid: int) -> str | None:
    fields = _stat_fields(pid)
    if fields is None:
        return None
    return fields[_START_FIELD].decode() if len(fields) > _START_FIELD else None


def _ended(pid: int) -> bool:
    """True when the process ``pid`` has exited but is not reaped yet (a zombie)."""
    fields = _stat_fields(pid)
    return fields is not None and len(fields) > 0 and fields[0] in _ENDED_STATES


#: The variable naming this host in the records it owns (default: the machine's host name).
HOST_ENV: Final = "BATON_HOST"


@cache
def current_host() -> str:
    """The name this host's records carry."""
    return os.environ.get(HOST_ENV) or socket.gethostname() or "localhost"


@cache
def current_owner() -> str:
    """This process's owner string."""
    pid = os.getpid()
    return f"{pid}:{_start_ticks(pid) or '?'}@{current_host()}"


def owner_host(owner: str | None) -> str | None:
    """The host an owner string names (None for an owner recorded without one)."""
    if not owner or "@" not in owner:
        return None
    return owner.rpartition("@")[2]


def owner_alive(owner: str | None) -> bool:
    """True when the process named by ``owner`` still runs (False for no owner)."""
    if not owner:
        return False
    if owner == current_owner():
        return True
    host = owner_host(owner)
    if host is not None and host != current_host():
        return True  # another host's process: its worker heartbeat decides, not a pid here
    pid_text, _, ticks = owner.partition("@")[0].partition(":")
    try:
        pid = int(pid_text)
    except ValueError:
        return False
    if pid <= 0:
        return False
    start = _start_ticks(pid)
    if start is not None:
        # A SIGKILLed owner not yet reaped by its parent is a zombie: dead at once.
        return ticks in ("?", start) and not _ended(pid)
    if os.path.isdir("/proc"):
        return False  # /proc exists and has no such pid
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
