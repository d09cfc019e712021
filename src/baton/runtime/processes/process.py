"""One agent child process: spawned in its own process group, stderr drained, shut down for sure.

Lifecycle. :meth:`AgentProcess.spawn` starts the executable (an absolute path, no shell) with
exactly the given environment, in a new session and so a new process group whose id is the
child's pid, with the ACP pipes on stdin and stdout. stderr is read by the event loop as it
arrives, straight into a bounded :class:`~baton.runtime.processes.stderr_tail.StderrTail`: there is no
intermediate buffer, so an agent that floods stderr never blocks on it.

Shutdown is a ladder over the whole group (the adapter's own children included: a Node wrapper
and its native binary): close stdin and wait ``eof_grace``; SIGTERM the group and wait
``term_grace``; SIGKILL the group and wait ``kill_grace``. The group counts as gone when the
child was reaped and no other member is alive. Members that are zombies count as gone: they
are dead, and their reaper is init (which on some machines never reaps them). A group still
alive after SIGKILL is reported ``survived`` so the caller latches a safety fence.

Python 3.11's ``asyncio.subprocess.Process.wait`` returns only once every pipe closed, which a
surviving grandchild holding stdout can delay forever; :meth:`AgentProcess.wait` returns when
the child itself exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno as errno_codes
import fcntl
import os
import signal
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from baton.errors import AgentLaunchFailed, ConfigurationError, InternalError, UsageError
from baton.runtime.processes.descendants import (
    ProcessId,
    become_subreaper,
    descendants,
    end_descendants,
    reap,
)
from baton.runtime.processes.keeper_launch import (
    KEEPER_REPORT_SECONDS,
    keeper_argv,
    keeper_available,
    read_keeper_report,
)
from baton.runtime.processes.stderr_tail import STDERR_TAIL_BYTES, StderrTail

__all__ = [
    "FAILURE_SIGTERM_GRACE_SECONDS",
    "GROUP_POLL_INTERVAL_SECONDS",
    "PIPE_CLOSE_GRACE_SECONDS",
    "PIPE_READER_LIMIT_BYTES",
    "SIGKILL_GRACE_SECONDS",
    "SIGTERM_GRACE_SECONDS",
    "STDERR_EOF_GRACE_SECONDS",
    "STDERR_TAIL_BYTES",
    "STDIN_EOF_GRACE_SECONDS",
    "AgentProcess",
    "ShutdownMethod",
    "ShutdownResult",
    "group_alive",
    "terminate_group",
]

#: How long shutdown waits after closing stdin before it signals. Short: several real adapters
#: (claude-agent-acp, codex-acp) ignore stdin EOF, so this wait is usually spent in full; it
#: protects agents that do exit on EOF from being signalled mid-cleanup.
STDIN_EOF_GRACE_SECONDS: Final = 1.0

#: How long shutdown waits after SIGTERM before SIGKILL. Protects an agent's own cleanup (a
#: wrapper forwarding the signal to its native child, flushing its session files). Task Monki's
#: shutdownGraceTimeoutMs.
SIGTERM_GRACE_SECONDS: Final = 3.0

#: A shorter SIGTERM grace for callers ending a child that failed to start or broke the
#: protocol: its cleanup is worth less than a fast release. Task Monki uses the same 1 s.
FAILURE_SIGTERM_GRACE_SECONDS: Final = 1.0

#: How long shutdown waits after SIGKILL before it reports the group as surviving. SIGKILL
#: cannot be caught, so only a process stuck in the kernel outlives this. Task Monki's
#: shutdownKillTimeoutMs.
SIGKILL_GRACE_SECONDS: Final = 2.0

#: How often a shutdown wait looks for remaining group members. Bounds the cost of scanning
#: /proc (about 1.5 ms for 80 processes; done only once the child itself exited) while keeping
#: shutdown prompt once the group is gone.
GROUP_POLL_INTERVAL_SECONDS: Final = 0.02

#: After the child exits, how long :meth:`AgentProcess.wait` waits for its stderr to reach end
#: of file so the tail holds the child's last words. Bounded because a surviving grandchild
#: may hold stderr open.
STDERR_EOF_GRACE_SECONDS: Final = 0.5

#: After the group is gone, how long shutdown lets stdout and stderr reach end of file on their
#: own (so every byte the agent wrote can still be read) before it closes them. Protects against
#: a process outside the group holding the pipes, and against nobody reading stdout.
PIPE_CLOSE_GRACE_SECONDS: Final = 1.0

#: The stdout reader's buffer limit. asyncio pauses reading from the pipe once more than twice
#: this is buffered and unread: this bounds the memory an agent can make Baton hold, and sizes
#: the reads asyncio makes from the pipe (up to 256 KiB each; the connection takes 64 KiB at a
#: time from its buffer).
PIPE_READER_LIMIT_BYTES: Final = 256 * 1024

#: The capacity Baton asks for on the agent's stdout pipe (Linux's default is 64 KiB; 1 MiB is
#: the default cap for unprivileged processes, ``/proc/sys/fs/pipe-max-size``). A streaming
#: agent then blocks on a full pipe a sixteenth as often, and asyncio reads its output in
#: 256 KiB gulps instead of 64 KiB ones (a 200,000-update turn: about 150 reads, not 600).
#: Kernel memory, bounded by the cap; best effort: where it is refused, the pipe keeps its size.
STDOUT_PIPE_BYTES: Final = 1024 * 1024

ShutdownMethod = Literal["exited", "stdin_eof", "sigterm", "sigkill", "survived"]

# Process states in /proc/<pid>/stat of processes that are dead but not yet reaped.
_DEAD_STATES: Final = frozenset({"Z", "X", "x"})


@dataclass(frozen=True)
class ShutdownResult:
    """How a shutdown ended.

    ``method`` names the step that ended the group: ``exited`` (already gone when shutdown
    began), ``stdin_eof``, ``sigterm``, ``sigkill``, or ``survived`` (still alive after SIGKILL
    and its grace; then ``survived`` is True and the caller must latch a safety fence).
    ``returncode`` is the child's (negative: the signal that ended it), None if unknown or
    still running. ``elapsed`` is the seconds the shutdown took.
    """

    returncode: int | None
    method: ShutdownMethod
    survived: bool
    elapsed: float


class _AgentProtocol(asyncio.subprocess.SubprocessStreamProtocol):
    """asyncio's subprocess protocol, with stderr fed to the tail and the exit observable."""

    def __init__(self, tail: StderrTail, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=limit, loop=loop)
        self._tail = tail
        self.exited = asyncio.Event()
        self.stdout_closed = asyncio.Event()
        self.stderr_closed = asyncio.Event()

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        """Route stderr to the tail (never buffered, never paused); the rest as asyncio does."""
        if fd == 2:
            self._tail.write(data.encode() if isinstance(data, str) else data)
            return
        super().pipe_data_received(fd, data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        """Note the end of file of stdout and stderr."""
        super().pipe_connection_lost(fd, exc)
        if fd == 1:
            self.stdout_closed.set()
        elif fd == 2:
            self.stderr_closed.set()

    def process_exited(self) -> None:
        """The child exited and was reaped."""
        super().process_exited()
        self.exited.set()


def _widen_stdout_pipe(transport: asyncio.SubprocessTransport) -> None:
    """Ask for :data:`STDOUT_PIPE_BYTES` of capacity on the agent's stdout pipe (Linux only;
    refused or unsupported leaves it as it is)."""
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None)
    pipe = transport.get_pipe_transport(1)
    handle = pipe.get_extra_info("pipe") if pipe is not None else None
    if set_size is None or handle is None:
        return
    with contextlib.suppress(OSError, ValueError):
        fcntl.fcntl(handle.fileno(), set_size, STDOUT_PIPE_BYTES)


class AgentProcess:
    """A running agent child. Create it with :meth:`spawn`; end it with :meth:`shutdown`.

    ``stdout`` and ``stdin`` are the ACP pipes: pass them to
    :class:`baton.connection.core.Connection` as its reader and writer. ``pid`` is also the
    process group id.
    """

    def __init__(
        self,
        transport: asyncio.SubprocessTransport,
        protocol: _AgentProtocol,
        tail: StderrTail,
    ) -> None:
        stdout, stdin = protocol.stdout, protocol.stdin
        if stdout is None or stdin is None:  # spawn always asks for both pipes
            raise InternalError("an agent process was made without its stdin and stdout pipes")
        self._transport = transport
        self._protocol = protocol
        self._tail = tail
        self._shutdown: asyncio.Task[ShutdownResult] | None = None
        self.pid: int = transport.get_pid()
        self.stdout: asyncio.StreamReader = stdout
        self.stdin: asyncio.StreamWriter = stdin

    @classmethod
    async def spawn(
        cls,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: str | None = None,
        redact: Callable[[str], str] | None = None,
        stderr_tail_bytes: int = STDERR_TAIL_BYTES,
    ) -> AgentProcess:
        """Start ``argv`` (``argv[0]`` an absolute path) with exactly ``env`` in ``cwd``.

        Raises :class:`AgentLaunchFailed` when the executable or the working directory cannot be
        used (missing, not executable, not a program, a relative path) and
        :class:`ConfigurationError` for an argument or environment entry the OS cannot pass.
        """
        args = _checked_argv(argv)
        child_env = _checked_env(env)
        _ensure_subreaper()
        tail = StderrTail(stderr_tail_bytes, redact=redact)
        loop = asyncio.get_running_loop()
        report_r, report_w = os.pipe() if keeper_available() else (-1, -1)
        command = keeper_argv(os.getpid(), report_w, args, child_env) if report_w >= 0 else args
        try:
            transport, protocol = await loop.subprocess_exec(
                lambda: _AgentProtocol(tail, PIPE_READER_LIMIT_BYTES, loop),
                *command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=child_env,
                cwd=cwd,
                start_new_session=True,
                close_fds=True,
                pass_fds=(report_w,) if report_w >= 0 else (),
            )
        except OSError as exc:
            if report_w >= 0:
                os.close(report_r)
            raise _launch_error(args[0], cwd, exc) from exc
        finally:
            if report_w >= 0:
                os.close(report_w)
        _widen_stdout_pipe(transport)
        process = cls(transport, protocol, tail)
        if report_r >= 0:
            await process._await_keeper(report_r, args[0], cwd)
        return process

    async def _await_keeper(self, report: int, executable: str, cwd: str | None) -> None:
        """Wait (at most :data:`KEEPER_REPORT_SECONDS`) for the keeper's word that the agent
        was executed; its ``execve`` failure is raised as a failed spawn would be."""
        try:
            word = await read_keeper_report(report, KEEPER_REPORT_SECONDS)
        except BaseException:
            self._transport.close()
            raise
        if word == b"ok":
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._protocol.exited.wait(), KEEPER_REPORT_SECONDS)
        self._transport.close()
        number = int(word[1:]) if word[:1] == b"E" and word[1:].isdigit() else 0
        if number:
            failure = OSError(number, os.strerror(number), executable)
            raise _launch_error(executable, cwd, failure) from failure
        raise AgentLaunchFailed(
            executable,
            f"the agent's keeper ended before it started the agent (exit status {self.returncode})",
            None,
        )

    @property
    def pgid(self) -> int:
        """The child's process group id (its pid: it leads a new session)."""
        return self.pid

    @property
    def returncode(self) -> int | None:
        """The child's exit status once it exited (negative: the ending signal), else None."""
        return self._transport.get_returncode()

    async def wait(self) -> int:
        """Wait for the child to exit; return its exit status.

        Returns when the child exits, even if a grandchild still holds its pipes. Waits a bounded
        moment (:data:`STDERR_EOF_GRACE_SECONDS`) for stderr to end, so :meth:`stderr_tail`
        then holds the child's last words.
        """
        await self._protocol.exited.wait()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._protocol.stderr_closed.wait(), STDERR_EOF_GRACE_SECONDS)
        code = self.returncode
        if code is None:  # exited is set only after the transport recorded the status
            raise InternalError("the agent process exited without an exit status")
        return code

    def stderr_tail(self) -> str:
        """The newest stderr, at most :data:`STDERR_TAIL_BYTES` (or the spawn's bound) once UTF-8
        encoded, decoded with replacement characters and passed through ``redact``."""
        return self._tail.text()

    @property
    def stderr_bytes_seen(self) -> int:
        """Every stderr byte the child wrote so far, kept or not."""
        return self._tail.total_bytes

    async def shutdown(
        self,
        *,
        eof_grace: float = STDIN_EOF_GRACE_SECONDS,
        term_grace: float = SIGTERM_GRACE_SECONDS,
        kill_grace: float = SIGKILL_GRACE_SECONDS,
    ) -> ShutdownResult:
        """End the child and its whole process group: close stdin, wait ``eof_grace``; SIGTERM,
        wait ``term_grace``; SIGKILL, wait ``kill_grace``.

        Idempotent: every call returns the first call's result (later graces are ignored).
        Cancelling a caller does not stop a shutdown under way. Safe after the child exited.
        """
        _check_graces(eof_grace, term_grace, kill_grace)
        if self._shutdown is None:
            self._shutdown = asyncio.ensure_future(
                self._run_shutdown(eof_grace, term_grace, kill_grace)
            )
        return await asyncio.shield(self._shutdown)

    async def _run_shutdown(
        self, eof_grace: float, term_grace: float, kill_grace: float
    ) -> ShutdownResult:
        started = time.monotonic()
        exited = self._protocol.exited.is_set
        already_gone = _group_gone(self.pid, exited)
        # The agent's whole tree, while it is intact: descendants that left the group (setsid)
        # are ended after the ladder.
        tree = [] if exited() else descendants(self.pid)
        self._close_stdin()
        if already_gone:
            method: ShutdownMethod = "exited"
        elif await _wait_gone(self.pid, exited, eof_grace):
            method = "stdin_eof"
        else:
            method = await _signal_ladder(self.pid, exited, term_grace, kill_grace)
        await _end_strays(tree, kill_grace)
        if method != "survived":
            await self._close_pipes()
        return ShutdownResult(
            returncode=self.returncode,
            method=method,
            survived=method == "survived",
            elapsed=time.monotonic() - started,
        )

    def _close_stdin(self) -> None:
        if not self.stdin.is_closing():
            self.stdin.close()

    async def _close_pipes(self) -> None:
        """Let stdout and stderr reach end of file on their own for a bounded moment (bytes
        already buffered stay readable either way), then close the transport."""
        both = asyncio.gather(
            self._protocol.stdout_closed.wait(), self._protocol.stderr_closed.wait()
        )
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(both, PIPE_CLOSE_GRACE_SECONDS)
        self._transport.close()


async def terminate_group(
    pgid: int,
    *,
    term_grace: float = SIGTERM_GRACE_SECONDS,
    kill_grace: float = SIGKILL_GRACE_SECONDS,
    leader: asyncio.subprocess.Process | None = None,
) -> ShutdownResult:
    """SIGTERM process group ``pgid``, wait ``term_grace``, SIGKILL, wait ``kill_grace``.

    For groups not started through :class:`AgentProcess` (a discovery probe made with
    ``asyncio.create_subprocess_exec(..., start_new_session=True)``). Pass that process as
    ``leader`` so the wait includes its reaping and the result carries its exit status;
    without it ``returncode`` is None. ``method`` is ``exited`` if the group was already gone.
    """
    _check_pgid(pgid)
    _check_graces(0.0, term_grace, kill_grace)
    started = time.monotonic()

    def leader_exited() -> bool:
        return leader is None or leader.returncode is not None

    if _group_gone(pgid, leader_exited):
        method: ShutdownMethod = "exited"
    else:
        method = await _signal_ladder(pgid, leader_exited, term_grace, kill_grace)
    return ShutdownResult(
        returncode=None if leader is None else leader.returncode,
        method=method,
        survived=method == "survived",
        elapsed=time.monotonic() - started,
    )


_subreaper: bool | None = None


def _ensure_subreaper() -> None:
    """Make Baton the child subreaper of its agents' trees once (best effort; see
    :mod:`baton.runtime.processes.descendants`)."""
    global _subreaper
    if _subreaper is None:
        _subreaper = become_subreaper()


async def _end_strays(tree: list[ProcessId], grace: float) -> None:
    """SIGKILL what is left of an agent's tree after its group's ladder (descendants that left
    the group), then reap those Baton adopted, waiting at most ``grace`` seconds for them."""
    if not tree:
        return
    left = end_descendants(tree)
    deadline = time.monotonic() + grace
    while left and time.monotonic() < deadline:
        await asyncio.sleep(GROUP_POLL_INTERVAL_SECONDS)
        left = reap(left)


def group_alive(pgid: int) -> bool:
    """True while process group ``pgid`` has a member that is not a zombie.

    Reads /proc where there is one (zombies are dead, whoever reaps them); elsewhere asks the
    kernel with signal 0, which also counts zombies.
    """
    try:
        entries = os.listdir("/proc")
    except OSError:
        return _group_signalable(pgid)
    return any(entry.isdigit() and _live_member(int(entry), pgid) for entry in entries)


# --- the ladder ----------------------------------------------------------------------------


async def _signal_ladder(
    pgid: int, leader_exited: Callable[[], bool], term_grace: float, kill_grace: float
) -> ShutdownMethod:
    """SIGTERM, wait, SIGKILL, wait. Signals only a group seen alive just before."""
    _send_signal(pgid, signal.SIGTERM)
    if await _wait_gone(pgid, leader_exited, term_grace):
        return "sigterm"
    if not _group_gone(pgid, leader_exited):
        _send_signal(pgid, signal.SIGKILL)
    if await _wait_gone(pgid, leader_exited, kill_grace):
        return "sigkill"
    return "survived"


def _send_signal(pgid: int, signum: signal.Signals) -> None:
    """Signal every member of the group; a group that already vanished is fine."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signum)


def _group_gone(pgid: int, leader_exited: Callable[[], bool]) -> bool:
    return leader_exited() and not group_alive(pgid)


async def _wait_gone(pgid: int, leader_exited: Callable[[], bool], grace: float) -> bool:
    """Poll until the group is gone (True) or ``grace`` seconds passed (False)."""
    deadline = time.monotonic() + grace
    while True:
        if _group_gone(pgid, leader_exited):
            return True
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        await asyncio.sleep(min(GROUP_POLL_INTERVAL_SECONDS, remaining))


def _live_member(pid: int, pgid: int) -> bool:
    """True if ``pid`` is in group ``pgid`` and not a zombie (per /proc/<pid>/stat)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:  # gone between listing and reading
        return False
    # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
    fields = stat[stat.rfind(b")") + 2 :].split()
    if len(fields) < 3:
        return False
    return fields[2] == str(pgid).encode() and fields[0].decode() not in _DEAD_STATES


def _group_signalable(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# --- argument checks -----------------------------------------------------------------------


def _checked_argv(argv: Sequence[str]) -> list[str]:
    if isinstance(argv, str | bytes):
        raise ConfigurationError("the agent command must be a sequence of arguments, not a string")
    args = list(argv)
    if not args:
        raise ConfigurationError("the agent command is empty")
    for arg in args:
        if not isinstance(arg, str):
            raise ConfigurationError(f"agent command arguments must be strings, got {arg!r}")
        if "\0" in arg:
            raise ConfigurationError("an agent command argument contains a NUL character")
    if not os.path.isabs(args[0]):
        raise AgentLaunchFailed(
            args[0],
            f"the agent executable {args[0]!r} is not an absolute path: resolve it before "
            "spawning (Baton never searches PATH through a shell)",
        )
    return args


def _checked_env(env: Mapping[str, str]) -> dict[str, str]:
    result: dict[str, str] = {}
    for key, value in env.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise ConfigurationError(
                f"environment names and values must be strings, got {type(key).__name__} {key!r}"
            )
        if not key or "=" in key or "\0" in key:
            raise ConfigurationError(f"invalid environment variable name {key!r}")
        if "\0" in value:
            raise ConfigurationError(f"the value of environment variable {key} contains NUL")
        result[key] = value
    return result


def _check_graces(*graces: float) -> None:
    for grace in graces:
        if isinstance(grace, bool) or not isinstance(grace, int | float) or not grace >= 0:
            raise UsageError(f"shutdown graces must be non-negative seconds, got {grace!r}")


def _check_pgid(pgid: int) -> None:
    # 0 means "my own group" to killpg and 1 is init's: never a child's group.
    if isinstance(pgid, bool) or not isinstance(pgid, int) or pgid <= 1:
        raise UsageError(f"not a child's process group id: {pgid!r}")
    if pgid == os.getpgrp():
        raise UsageError(f"refusing to signal Baton's own process group {pgid}")


def _launch_error(executable: str, cwd: str | None, exc: OSError) -> AgentLaunchFailed:
    code = exc.errno
    name = errno_codes.errorcode.get(code, "OSError") if code is not None else "OSError"
    reason = exc.strerror or str(exc)
    if cwd is not None and exc.filename == cwd and exc.filename != executable:
        return AgentLaunchFailed(
            executable,
            f"cannot start the agent in working directory {cwd!r}: {reason} ({name})",
            code,
        )
    advice = {
        errno_codes.ENOENT: "install the agent or fix its path",
        errno_codes.EACCES: "make it executable or fix its path",
        errno_codes.ENOEXEC: "it is not a program this machine runs (a script needs a #! line)",
        errno_codes.ENOTDIR: "fix its path",
        errno_codes.EISDIR: "it is a directory: point at the executable inside",
    }.get(code if code is not None else -1, "check the agent's installation")
    return AgentLaunchFailed(
        executable,
        # The path is not followed by ": reason": a path naming a credential word (passwd)
        # would make the reason look like that credential's value to the redactor.
        f"the agent executable {executable!r} cannot be started: {reason.lower()} ({name}); "
        f"{advice}",
        code,
    )
