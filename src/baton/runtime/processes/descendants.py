"""An agent's descendants, found through /proc, and their end at shutdown (Linux).

The shutdown ladder signals the agent's process group. A descendant that left the group (a
daemon that called ``setsid()``, a double fork) is not in it and used to outlive Baton. Two
things close that gap, both best effort and Linux-only (elsewhere they do nothing):

- :func:`become_subreaper` makes Baton the *child subreaper* of its process tree
  (``prctl(PR_SET_CHILD_SUBREAPER)``): an orphaned descendant is re-parented to Baton instead of
  init, so it stays in Baton's tree (and is reaped by Baton, never left a zombie of init's);
- :func:`descendants` walks /proc for every process whose parent chain leads to the agent, and
  :func:`end_descendants` kills the ones still alive after the ladder and reaps those that
  Baton adopted.

A snapshot is taken when the shutdown begins (the agent alive, its tree intact), so a daemon
that already detached is still found through its parent chain. A process is identified by its
pid *and* its start time, so a pid the kernel reused for an unrelated process is never
signalled. Descendants of an agent that died on its own before the shutdown are re-parented to
Baton (as subreaper) and reaped when they exit, but not tracked back to that agent.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Final

#: ``prctl`` option that makes the caller the child subreaper of its descendants (linux/prctl.h).
PR_SET_CHILD_SUBREAPER: Final = 36

#: Where the kernel lists processes.
PROC: Final = Path("/proc")

#: Processes :func:`descendants` reports at most. Bounds the walk against a fork bomb under the
#: agent (the rest are still ended with the group or re-parented to Baton).
MAX_DESCENDANTS: Final = 4096

#: Bytes read of a ``/proc/PID/stat`` line (the fields Baton needs come well before this).
MAX_STAT_BYTES: Final = 4096

#: Index of ``ppid`` and ``starttime`` among the fields after the command name's ``)``
#: (proc(5): state is field 3, ppid field 4, starttime field 22).
_PPID_FIELD: Final = 1
_STARTTIME_FIELD: Final = 19


@dataclass(frozen=True, slots=True)
class ProcessId:
    """A process as the kernel knows it at one moment: pid and start time (clock ticks since
    boot), so a reused pid is never mistaken for it."""

    pid: int
    start: int


def become_subreaper() -> bool:
    """Make this process the child subreaper of its descendants; True if the kernel agreed.
    Best effort: False off Linux or when ``prctl`` is unavailable. Idempotent."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return int(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _stat(pid: int, proc: Path) -> tuple[int, int] | None:
    """(ppid, starttime) of ``pid``, or None if it is gone or unreadable."""
    try:
        with open(proc / str(pid) / "stat", "rb") as handle:
            line = handle.read(MAX_STAT_BYTES)
    except OSError:
        return None
    end = line.rfind(b")")
    if end < 0:
        return None
    fields = line[end + 2 :].split()
    try:
        return int(fields[_PPID_FIELD]), int(fields[_STARTTIME_FIELD])
    except (IndexError, ValueError):
        return None


def descendants(root: int, proc: Path = PROC) -> list[ProcessId]:
    """Every live process whose parent chain leads to ``root`` (``root`` excluded), parents
    before their children, at most :data:`MAX_DESCENDANTS`. Empty when /proc is unreadable."""
    children: dict[int, list[ProcessId]] = {}
    try:
        entries = [entry.name for entry in os.scandir(proc) if entry.name.isdigit()]
    except OSError:
        return []
    for name in entries:
        stat = _stat(int(name), proc)
        if stat is not None:
            children.setdefault(stat[0], []).append(ProcessId(int(name), stat[1]))
    found: list[ProcessId] = []
    frontier = [root]
    seen = {root}
    while frontier and len(found) < MAX_DESCENDANTS:
        parent = frontier.pop(0)
        for child in children.get(parent, ()):
            if child.pid in seen:
                continue
            seen.add(child.pid)
            found.append(child)
            frontier.append(child.pid)
    return found[:MAX_DESCENDANTS]


def alive(process: ProcessId, proc: Path = PROC) -> bool:
    """True while ``process`` (the same pid *and* start time) exists and is not a zombie."""
    try:
        with open(proc / str(process.pid) / "stat", "rb") as handle:
            line = handle.read(MAX_STAT_BYTES)
    except OSError:
        return False
    end = line.rfind(b")")
    fields = line[end + 2 :].split() if end >= 0 else []
    try:
        return fields[0] != b"Z" and int(fields[_STARTTIME_FIELD]) == process.start
    except (IndexError, ValueError):
        return False


def end_descendants(snapshot: list[ProcessId], proc: Path = PROC) -> list[ProcessId]:
    """SIGKILL every process of ``snapshot`` still alive, and the live descendants they made
    since; reap those Baton adopted that already ended. Returns the processes signalled (the
    caller waits for them with :func:`reap` until they are gone)."""
    targets = list(snapshot)
    known = {p.pid for p in targets}
    for process in snapshot:
        if alive(process, proc):
            for extra in descendants(process.pid, proc):
                if extra.pid not in known:
                    known.add(extra.pid)
                    targets.append(extra)
    signalled: list[ProcessId] = []
    for process in targets[:MAX_DESCENDANTS]:
        if alive(process, proc):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(process.pid, signal.SIGKILL)
                signalled.append(process)
    reap(targets, proc)
    return signalled


def reap(processes: list[ProcessId], proc: Path = PROC) -> list[ProcessId]:
    """Collect the exit status of those of ``processes`` that are Baton's children now (adopted
    as subreaper) and have ended (zombies); others are left alone (not ours to wait for). A pid
    is reaped only while its start time is still the snapshot's. Returns those still alive."""
    left: list[ProcessId] = []
    for process in processes:
        if alive(process, proc):
            left.append(process)
            continue
        stat = _stat(process.pid, proc)
        if stat is None or stat[1] != process.start:
            continue  # gone, or the pid now names another process
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(process.pid, os.WNOHANG)
    return left
