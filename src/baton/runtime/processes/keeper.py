"""The keeper: a tiny supervisor between Baton and one agent, so the agent's whole tree ends
when the Baton process that owns it dies by any means (Linux).

Run as a script (``python -I -S keeper.py BATON_PID REPORT_FD LC_CTYPE_GIVEN -- ARGV...``), never imported
by Baton at run time: it uses the standard library only, so it starts in a few milliseconds
and carries nothing of Baton into the agent's process. Baton starts it as the leader of a new
session and process group; it

1. asks the kernel for a parent-death signal (``prctl(PR_SET_PDEATHSIG)``) and becomes the
   child subreaper of its tree (``PR_SET_CHILD_SUBREAPER``), so every orphaned descendant of
   the agent is re-parented to it, never to init;
2. forks the agent into the same group (the ladder's signals reach both; the agent gets
   ``SIGKILL`` as its own parent-death signal, should the keeper die first), and reports on ``REPORT_FD`` either ``ok`` or
   ``E<errno>`` when the agent's ``execve`` failed (Baton classifies it as it classifies a
   failed spawn);
3. waits for the agent and ends with the agent's own status (the same exit code, or the same
   signal), so Baton sees the agent's ending through it;
4. when Baton dies, kills every descendant (found through /proc, orphans re-parented to it
   included) and reaps them, in bounded rounds, then exits.

The parent-death signal fires when the *thread* that forked the keeper ends, not only when
Baton's process does: the keeper therefore compares its parent pid with Baton's on every such
signal and ends the tree only when it was re-parented (Baton is gone); a thread of a living
Baton ending changes nothing. ``SIGTERM``, ``SIGINT`` and ``SIGHUP`` reach the keeper with the
group (the shutdown ladder signals the whole group): it ignores them through a handler, which
``execve`` resets, so the agent still gets the default disposition.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time
from typing import Final, NoReturn

#: ``prctl`` options (linux/prctl.h).
PR_SET_PDEATHSIG: Final = 1
PR_SET_CHILD_SUBREAPER: Final = 36

#: The keeper's own parent-death signal: catchable, so it can end the tree first.
PARENT_DEATH_SIGNAL: Final = signal.SIGUSR1

#: Signals the group receives from the shutdown ladder or a terminal that the keeper outlives
#: (the agent decides how it ends; the keeper mirrors it).
OUTLIVED_SIGNALS: Final = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)

#: Rounds of "kill every descendant, reap" when Baton died, and the pause between them: a tree
#: that forks while it is being killed is ended within about a second.
END_ROUNDS: Final = 50
END_ROUND_PAUSE_SECONDS: Final = 0.02

#: The exit status of a keeper whose agent could not be executed (as a shell reports it).
EXEC_FAILED_STATUS: Final = 127

#: The exit status of a keeper that ended its tree because Baton died (128 + SIGKILL).
ORPHANED_STATUS: Final = 137

#: Bytes read of one ``/proc/PID/stat`` (ppid comes well before this).
MAX_STAT_BYTES: Final = 4096


class _Orphaned(Exception):
    """Raised from the parent-death handler: Baton is gone."""


def _prctl(libc: ctypes.CDLL, option: int, value: int) -> bool:
    return int(libc.prctl(option, value, 0, 0, 0)) == 0


def _ppid_of(pid: str) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            line = handle.read(MAX_STAT_BYTES)
    except OSError:
        return None
    fields = line[line.rfind(b")") + 2 :].split()
    return int(fields[1]) if len(fields) > 1 else None


def _descendants(root: int) -> list[int]:
    """Every live process whose parent chain leads to ``root`` (one /proc scan)."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if entry.isdigit():
            ppid = _ppid_of(entry)
            if ppid is not None:
                children.setdefault(ppid, []).append(int(entry))
    found: list[int] = []
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), ()):
            found.append(child)
            stack.append(child)
    return found


def _reap_any() -> bool:
    """Reap every exited child; True when no child is left at all."""
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return True
        if pid == 0:
            return False


def _end_tree() -> NoReturn:
    """Baton is gone: SIGKILL every descendant (orphans re-parented here included), reap."""
    me = os.getpid()
    for _ in range(END_ROUNDS):
        for pid in _descendants(me):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        if _reap_any() and not _descendants(me):
            break
        time.sleep(END_ROUND_PAUSE_SECONDS)
    os._exit(ORPHANED_STATUS)


def _mirror(status: int) -> NoReturn:
    """End as the agent ended: its exit code, or its signal."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        if number not in (signal.SIGKILL, signal.SIGSTOP):
            with contextlib.suppress(OSError, ValueError):
                signal.signal(number, signal.SIG_DFL)
                signal.pthread_sigmask(signal.SIG_UNBLOCK, [number])
        with contextlib.suppress(OSError):
            os.kill(os.getpid(), number)
        os._exit(128 + number)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


def _start_agent(libc: ctypes.CDLL, command: list[str], report: int, env: dict[str, str]) -> int:
    """Fork and exec the agent; report ``ok`` or ``E<errno>``; return its pid (or exit)."""
    keeper = os.getpid()
    failed_r, failed_w = os.pipe()  # both close-on-exec: the agent never sees them
    pid = os.fork()
    if pid == 0:
        code = b"0"
        try:
            os.close(failed_r)
            os.close(report)
            for number in (*OUTLIVED_SIGNALS, PARENT_DEATH_SIGNAL):
                signal.signal(number, signal.SIG_DFL)
            _prctl(libc, PR_SET_PDEATHSIG, signal.SIGKILL)
            if os.getppid() != keeper:
                os._exit(ORPHANED_STATUS)
            os.execve(command[0], command, env)
        except OSError as exc:
            code = str(exc.errno or 0).encode()
        with contextlib.suppress(OSError):
            os.write(failed_w, code)
        os._exit(EXEC_FAILED_STATUS)
    os.close(failed_w)
    failure = b""
    while chunk := os.read(failed_r, 64):
        failure += chunk
    os.close(failed_r)
    with contextlib.suppress(OSError):
        os.write(report, b"E" + failure if failure else b"ok")
        os.close(report)
    if failure:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
        os._exit(EXEC_FAILED_STATUS)
    return pid


def main(argv: list[str]) -> NoReturn:
    """``keeper.py BATON_PID REPORT_FD LC_CTYPE_GIVEN -- ARGV...`` (see the module docstring).

    ``LC_CTYPE_GIVEN`` is ``1`` when the agent's environment has ``LC_CTYPE``: Python's C
    locale coercion (PEP 538) adds one to the keeper's own environment, and the agent must get
    exactly what Baton gave."""
    if len(argv) < 6 or argv[4] != "--":
        os.write(2, b"baton keeper: usage: keeper.py BATON_PID REPORT_FD 0|1 -- ARGV...\n")
        os._exit(2)
    parent, report, command = int(argv[1]), int(argv[2]), argv[5:]
    env = dict(os.environ)
    if argv[3] != "1":
        env.pop("LC_CTYPE", None)

    def outlive(_number: int, _frame: object) -> None:
        return None

    def parent_died(_number: int, _frame: object) -> None:
        if os.getppid() != parent:
            raise _Orphaned

    for number in OUTLIVED_SIGNALS:
        signal.signal(number, outlive)
    signal.signal(PARENT_DEATH_SIGNAL, parent_died)
    libc = ctypes.CDLL(None, use_errno=True)
    try:
        _prctl(libc, PR_SET_CHILD_SUBREAPER, 1)
        _prctl(libc, PR_SET_PDEATHSIG, PARENT_DEATH_SIGNAL)
        if os.getppid() != parent:  # Baton died before the signal was armed
            raise _Orphaned
        agent = _start_agent(libc, command, report, env)
        while True:
            try:
                pid, status = os.waitpid(-1, 0)
            except ChildProcessError:
                os._exit(1)
            if pid == agent:
                _mirror(status)
    except _Orphaned:
        _end_tree()


if __name__ == "__main__":
    main(sys.argv)
