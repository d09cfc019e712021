"""Which Baton process owns a record, and whether that process is still alive.

An owner is ``"<pid>:<start-ticks>"``: the pid alone is not enough, since pids are reused; the
start time (field 22 of ``/proc/<pid>/stat``, in clock ticks since boot) tells a live owner
from a new process that got the same pid. Without ``/proc`` the pid's existence is used.
"""

from __future__ import annotations

import os
from functools import cache
from typing import Final

#: Index of ``starttime`` (field 22 of /proc/<pid>/stat) among the fields after the command
#: name's closing parenthesis (which start at field 3).
_START_FIELD: Final = 22 - 3


def _start_ticks(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    # The command name (field 2) may contain spaces and parentheses: split after the last ')'.
    fields = data[data.rfind(b")") + 2 :].split()
    return fields[_START_FIELD].decode() if len(fields) > _START_FIELD else None


@cache
def current_owner() -> str:
    """This process's owner string."""
    pid = os.getpid()
    return f"{pid}:{_start_ticks(pid) or '?'}"


def owner_alive(owner: str | None) -> bool:
    """True when the process named by ``owner`` still runs (False for no owner)."""
    if not owner:
        return False
    pid_text, _, ticks = owner.partition(":")
    try:
        pid = int(pid_text)
    except ValueError:
        return False
    if pid <= 0:
        return False
    if owner == current_owner():
        return True
    start = _start_ticks(pid)
    if start is not None:
        return ticks in ("?", start)
    if os.path.isdir("/proc"):
        return False  # /proc exists and has no such pid
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
