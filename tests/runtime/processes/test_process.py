"""AgentProcess against real child processes: spawn, exact environment, stderr floods, the
shutdown ladder over the whole process group, reaping, and spawn failures."""

from __future__ import annotations

import asyncio
import errno
import os
import shutil
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from baton.connection.core import Connection
from baton.errors import AgentLaunchFailed, ConfigurationError, UsageError
from baton.runtime.processes import process as process_module
from baton.runtime.processes.process import (
    AgentProcess,
    ShutdownResult,
    group_alive,
    terminate_group,
)
from baton.runtime.processes.stderr_tail import STDERR_TAIL_BYTES

PY = sys.executable
ENV = {"PYTHONDONTWRITEBYTECODE": "1"}
#: Generous bound on any single wait in these tests: a hang fails, a slow machine does not.
WAIT = 30.0
#: Short graces keep the suite fast; each is an upper bound, ended early once the group is gone.
FAST = {"eof_grace": 0.05, "term_grace": 0.5, "kill_grace": 5.0}

Spawn = Callable[..., Awaitable[AgentProcess]]


@pytest.fixture
async def spawn() -> AsyncIterator[Spawn]:
    """Spawn Python children; whatever a test leaves running is killed and reaped after it."""
    started: list[AgentProcess] = []

    async def start(code: str, **kwargs: object) -> AgentProcess:
        proc = await AgentProcess.spawn([PY, "-c", code], env=ENV, **kwargs)  # type: ignore[arg-type]
        started.append(proc)
        return proc

    yield start
    for proc in started:
        await proc.shutdown(eof_grace=0, term_grace=0, kill_grace=WAIT)


def alive(pid: int) -> bool:
    """True if ``pid`` exists and is not a zombie (a zombie is dead, only not yet reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except FileNotFoundError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


async def line(proc: AgentProcess) -> str:
    return (await asyncio.wait_for(proc.stdout.readline(), WAIT)).decode().strip()


def in_proc(pid: int) -> bool:
    """True while ``pid`` has a /proc entry (alive, or a zombie not yet reaped)."""
    return Path(f"/proc/{pid}").exists()


def assert_reaped(pid: int) -> None:
    """Our direct child must not be left a zombie: its /proc entry is gone once reaped."""
    assert not in_proc(pid)


def real_path(path: Path) -> str:
    return str(path.resolve())


# --- spawning ------------------------------------------------------------------------------


async def test_child_leads_its_own_process_group(spawn: Spawn) -> None:
    proc = await spawn("import os; print(os.getpgid(0), os.getsid(0), flush=True); input()")
    pgid, sid = (int(part) for part in (await line(proc)).split())
    assert pgid == proc.pid == proc.pgid
    assert sid == proc.pid
    assert os.getpgid(proc.pid) != os.getpgrp()


async def test_environment_is_exactly_the_given_mapping(monkeypatch: pytest.MonkeyPatch) -> None:
    env_path = shutil.which("env")
    if env_path is None:
        pytest.skip("no env executable")
    monkeypatch.setenv("BATON_TEST_LEAK", "must-not-reach-the-child")
    given = {"ONLY": "this", "SPACED": "a b", "EMPTY": ""}
    proc = await AgentProcess.spawn([env_path], env=given)
    output = await asyncio.wait_for(proc.stdout.read(), WAIT)
    assert await asyncio.wait_for(proc.wait(), WAIT) == 0
    assert sorted(output.decode().splitlines()) == ["EMPTY=", "ONLY=this", "SPACED=a b"]
    assert (await proc.shutdown()).method == "exited"


async def test_empty_environment_is_allowed(tmp_path: Path) -> None:
    env_path = shutil.which("env")
    if env_path is None:
        pytest.skip("no env executable")
    proc = await AgentProcess.spawn([env_path], env={}, cwd=str(tmp_path))
    assert await asyncio.wait_for(proc.stdout.read(), WAIT) == b""
    await asyncio.wait_for(proc.wait(), WAIT)
    await proc.shutdown()


async def test_cwd_is_used(spawn: Spawn, tmp_path: Path) -> None:
    proc = await spawn("import os; print(os.getcwd(), flush=True)", cwd=str(tmp_path))
    assert await line(proc) == real_path(tmp_path)


async def test_pipes_work_with_the_connection(spawn: Spawn) -> None:
    echo = (
        "import json, sys\n"
        "for raw in sys.stdin:\n"
        "    msg = json.loads(raw)\n"
        "    reply = {'jsonrpc': '2.0', 'id': msg['id'], 'result': {'echo': msg['params']}}\n"
        "    sys.stdout.write(json.dumps(reply) + '\\n')\n"
        "    sys.stdout.flush()\n"
    )
    proc = await spawn(echo)
    conn = Connection(proc.stdout, proc.stdin)
    conn.start()
    assert await conn.request("echo", {"n": 1}, timeout=WAIT) == {"echo": {"n": 1}}
    assert await conn.request("echo", {"n": 2}, timeout=WAIT) == {"echo": {"n": 2}}
    result = await proc.shutdown(eof_grace=WAIT)
    assert (result.method, result.returncode) == ("stdin_eof", 0)
    await conn.close()


# --- stderr --------------------------------------------------------------------------------


async def test_stderr_flood_never_blocks_the_agent(spawn: Spawn) -> None:
    # 10 MiB of stderr before the answer: an unread stderr pipe would stall the child long
    # before it answers (the official SDK deadlocks at about 300 KiB).
    flood = (
        "import sys\n"
        "request = sys.stdin.readline().strip()\n"
        "err = sys.stderr.buffer\n"
        "for i in range(10 * 1024 * 1024 // 64):\n"
        "    err.write(b'flood line %08d ' % i + b'x' * 43 + b'\\n')\n"  # 64 bytes a line
        "err.write(b'the last words\\n')\n"
        "err.flush()\n"
        "print('answer to', request, flush=True)\n"
        "sys.stdin.read()\n"
    )
    proc = await spawn(flood)
    proc.stdin.write(b"ping\n")
    await proc.stdin.drain()
    assert await line(proc) == "answer to ping"
    result = await proc.shutdown(eof_grace=WAIT)
    assert result.method == "stdin_eof"
    tail = proc.stderr_tail()
    assert len(tail.encode()) <= STDERR_TAIL_BYTES
    assert tail.endswith("the last words\n")
    assert f"flood line {10 * 1024 * 1024 // 64 - 1:08d} " in tail  # the newest flood line
    assert "flood line 00000000 " not in tail  # the oldest bytes were dropped
    assert tail.startswith("flood line ")  # cut at a line boundary
    assert proc.stderr_bytes_seen == 10 * 1024 * 1024 + len(b"the last words\n")


async def test_stderr_tail_is_redacted(spawn: Spawn) -> None:
    code = "import sys; sys.stderr.write('auth failed for key sk-SECRET-42\\n')"
    proc = await spawn(code, redact=lambda text: text.replace("sk-SECRET-42", "[REDACTED]"))
    assert await asyncio.wait_for(proc.wait(), WAIT) == 0
    assert proc.stderr_tail() == "auth failed for key [REDACTED]\n"


async def test_stderr_tail_bound_is_configurable(spawn: Spawn) -> None:
    code = "import sys; sys.stderr.write('a' * 50 + '\\n' + 'b' * 50 + '\\n')"
    proc = await spawn(code, stderr_tail_bytes=64)
    await asyncio.wait_for(proc.wait(), WAIT)
    assert proc.stderr_tail() == "b" * 50 + "\n"


async def test_wait_holds_the_last_stderr(spawn: Spawn) -> None:
    proc = await spawn("import sys; sys.stderr.write('fatal: no config\\n'); sys.exit(3)")
    assert await asyncio.wait_for(proc.wait(), WAIT) == 3
    assert proc.returncode == 3
    assert proc.stderr_tail() == "fatal: no config\n"


# --- the shutdown ladder -------------------------------------------------------------------


async def test_child_that_exits_on_eof(spawn: Spawn) -> None:
    proc = await spawn("import sys; sys.stdin.read()")
    assert proc.returncode is None
    result = await proc.shutdown(eof_grace=WAIT, term_grace=0.5, kill_grace=WAIT)
    assert result == ShutdownResult(0, "stdin_eof", False, result.elapsed)
    assert result.elapsed >= 0
    assert_reaped(proc.pid)


async def test_child_that_ignores_eof_dies_on_sigterm(spawn: Spawn) -> None:
    proc = await spawn("import time; print('ready', flush=True); time.sleep(60)")
    assert await line(proc) == "ready"
    result = await proc.shutdown(eof_grace=0.05, term_grace=WAIT, kill_grace=WAIT)
    assert (result.method, result.returncode, result.survived) == (
        "sigterm",
        -signal.SIGTERM,
        False,
    )
    assert_reaped(proc.pid)


async def test_child_that_ignores_sigterm_is_killed(spawn: Spawn) -> None:
    proc = await spawn(
        "import signal, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    assert await line(proc) == "ready"
    result = await proc.shutdown(eof_grace=0.05, term_grace=0.2, kill_grace=WAIT)
    assert (result.method, result.returncode, result.survived) == (
        "sigkill",
        -signal.SIGKILL,
        False,
    )
    assert_reaped(proc.pid)


WRAPPER_WITH_NATIVE_CHILD = (
    # A Node-style wrapper: spawns its native child in the same group, both ignore SIGTERM
    # (inherited) and stdin EOF.
    "import signal, subprocess, sys, time\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "native = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
    "print(native.pid, flush=True)\n"
    "time.sleep(60)\n"
)


async def test_shutdown_kills_the_adapters_own_children(spawn: Spawn) -> None:
    proc = await spawn(WRAPPER_WITH_NATIVE_CHILD)
    native = int(await line(proc))
    assert os.getpgid(native) == proc.pid
    assert alive(native)
    result = await proc.shutdown(eof_grace=0.05, term_grace=0.2, kill_grace=WAIT)
    assert (result.method, result.survived) == ("sigkill", False)
    assert not alive(native)
    assert not group_alive(proc.pid)
    assert_reaped(proc.pid)


async def test_wrapper_exiting_on_eof_does_not_end_the_shutdown(spawn: Spawn) -> None:
    # The wrapper exits on EOF but leaves its native child running: the group is not gone
    # until the native child is, so the ladder goes on to SIGTERM.
    proc = await spawn(
        "import subprocess, sys\n"
        "native = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'],"
        " stdin=subprocess.DEVNULL)\n"
        "print(native.pid, flush=True)\n"
        "sys.stdin.read()\n"
    )
    native = int(await line(proc))
    result = await proc.shutdown(eof_grace=0.3, term_grace=WAIT, kill_grace=WAIT)
    assert (result.method, result.returncode) == ("sigterm", 0)
    assert not alive(native)


async def test_wait_returns_while_a_grandchild_holds_the_pipes(spawn: Spawn) -> None:
    proc = await spawn(
        "import subprocess, sys\n"
        "native = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "print(native.pid, flush=True)\n"
        "sys.exit(5)\n"
    )
    native = int(await line(proc))
    assert await asyncio.wait_for(proc.wait(), WAIT) == 5
    assert alive(native)
    result = await proc.shutdown(**FAST)
    assert (result.method, result.returncode) == ("sigterm", 5)
    assert not alive(native)


async def test_shutdown_after_exit_reports_exited(spawn: Spawn) -> None:
    proc = await spawn("import sys; sys.exit(7)")
    assert await asyncio.wait_for(proc.wait(), WAIT) == 7
    result = await proc.shutdown(**FAST)
    assert (result.method, result.returncode, result.survived) == ("exited", 7, False)
    assert_reaped(proc.pid)


async def test_shutdown_is_idempotent_and_concurrent_safe(spawn: Spawn) -> None:
    proc = await spawn("import time; print('ready', flush=True); time.sleep(60)")
    assert await line(proc) == "ready"
    first, second = await asyncio.gather(proc.shutdown(**FAST), proc.shutdown(**FAST))
    assert first is second
    assert first.method == "sigterm"
    assert await proc.shutdown(eof_grace=0, term_grace=0, kill_grace=0) is first


async def test_cancelling_a_caller_does_not_abandon_the_shutdown(spawn: Spawn) -> None:
    proc = await spawn("import time; print('ready', flush=True); time.sleep(60)")
    assert await line(proc) == "ready"
    caller = asyncio.ensure_future(proc.shutdown(eof_grace=0.2, term_grace=WAIT, kill_grace=WAIT))
    await asyncio.sleep(0.05)
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    result = await asyncio.wait_for(proc.shutdown(), WAIT)
    assert result.method == "sigterm"
    assert_reaped(proc.pid)


async def test_group_alive_after_sigkill_is_reported_survived(
    spawn: Spawn, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A group that outlives SIGKILL (a process stuck in the kernel) cannot be made on demand;
    # dropping the SIGKILL leaves a real, live group for the ladder to find.
    real_send = process_module._send_signal
    sent: list[int] = []

    def drop_sigkill(pgid: int, signum: signal.Signals) -> None:
        sent.append(signum)
        if signum != signal.SIGKILL:
            real_send(pgid, signum)

    monkeypatch.setattr(process_module, "_send_signal", drop_sigkill)
    # The ladder alone: under the keeper the agent is also a descendant, which the strays pass
    # kills directly (SIGKILL is dropped only for the group).
    monkeypatch.setattr(process_module, "keeper_available", lambda: False)
    proc = await spawn(
        "import signal, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    assert await line(proc) == "ready"
    result = await proc.shutdown(eof_grace=0.05, term_grace=0.1, kill_grace=0.1)
    assert (result.method, result.survived, result.returncode) == ("survived", True, None)
    assert sent == [signal.SIGTERM, signal.SIGKILL]
    assert alive(proc.pid)
    os.killpg(proc.pid, signal.SIGKILL)
    assert await asyncio.wait_for(proc.wait(), WAIT) == -signal.SIGKILL


@pytest.mark.parametrize("grace", ["eof_grace", "term_grace", "kill_grace"])
async def test_negative_grace_is_a_usage_error(spawn: Spawn, grace: str) -> None:
    proc = await spawn("import sys; sys.stdin.read()")
    graces = {"eof_grace": 1.0, "term_grace": 1.0, "kill_grace": 1.0, grace: -1.0}
    with pytest.raises(UsageError):
        await proc.shutdown(**graces)


# --- zombies -------------------------------------------------------------------------------


async def test_zombie_members_count_as_gone(spawn: Spawn) -> None:
    # The child never reaps its short-lived grandchild, which stays a zombie in the group.
    proc = await spawn(
        "import subprocess, sys, time\n"
        "done = subprocess.Popen([sys.executable, '-c', 'pass'])\n"
        "print(done.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    zombie = int(await line(proc))
    for _ in range(int(WAIT / 0.01)):
        if not alive(zombie):
            break
        await asyncio.sleep(0.01)
    assert in_proc(zombie)  # still there, as a zombie
    assert not process_module._live_member(zombie, proc.pid)
    assert process_module._live_member(proc.pid, proc.pid)
    assert group_alive(proc.pid)


# --- spawn failures ------------------------------------------------------------------------


async def test_missing_executable(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-agent")
    with pytest.raises(AgentLaunchFailed) as caught:
        await AgentProcess.spawn([missing, "--acp"], env=ENV)
    assert caught.value.code == "AGENT_LAUNCH_FAILED"
    assert caught.value.fault == "caller"
    assert caught.value.errno == errno.ENOENT
    assert caught.value.executable == missing
    assert "install the agent" in str(caught.value)


async def test_file_without_execute_permission(tmp_path: Path) -> None:
    script = tmp_path / "agent"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o644)
    with pytest.raises(AgentLaunchFailed) as caught:
        await AgentProcess.spawn([str(script)], env=ENV)
    assert caught.value.errno == errno.EACCES


async def test_file_that_is_not_a_program(tmp_path: Path) -> None:
    blob = tmp_path / "agent"
    blob.write_bytes(b"\x00\x01\x02 not an executable format")
    blob.chmod(0o755)
    with pytest.raises(AgentLaunchFailed) as caught:
        await AgentProcess.spawn([str(blob)], env=ENV)
    assert caught.value.errno == errno.ENOEXEC


async def test_relative_executable_is_refused() -> None:
    with pytest.raises(AgentLaunchFailed) as caught:
        await AgentProcess.spawn(["python3", "-c", "pass"], env=ENV)
    assert caught.value.errno is None
    assert "absolute path" in str(caught.value)


async def test_missing_working_directory(tmp_path: Path) -> None:
    where = str(tmp_path / "gone")
    with pytest.raises(AgentLaunchFailed) as caught:
        await AgentProcess.spawn([PY, "-c", "pass"], env=ENV, cwd=where)
    assert caught.value.errno == errno.ENOENT
    assert "working directory" in str(caught.value)


@pytest.mark.parametrize(
    ("argv", "env"),
    [
        ([], ENV),
        ("/bin/agent --acp", ENV),
        ([PY, "nul\0byte"], ENV),
        ([PY], {"BAD=NAME": "x"}),
        ([PY], {"": "x"}),
        ([PY], {"NAME": "nul\0byte"}),
    ],
)
async def test_arguments_the_os_cannot_pass(argv: object, env: dict[str, str]) -> None:
    with pytest.raises(ConfigurationError):
        await AgentProcess.spawn(argv, env=env)  # type: ignore[arg-type]


# --- terminate_group -----------------------------------------------------------------------


async def _probe(code: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        PY,
        "-c",
        code,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        env=ENV,
        start_new_session=True,
    )


async def test_terminate_group_ends_a_probe() -> None:
    probe = await _probe("import time; print('ready', flush=True); time.sleep(60)")
    assert probe.stdout is not None
    await asyncio.wait_for(probe.stdout.readline(), WAIT)
    result = await terminate_group(probe.pid, term_grace=WAIT, kill_grace=WAIT, leader=probe)
    assert (result.method, result.returncode, result.survived) == (
        "sigterm",
        -signal.SIGTERM,
        False,
    )
    again = await terminate_group(probe.pid, term_grace=WAIT, kill_grace=WAIT, leader=probe)
    assert again.method == "exited"
    await probe.wait()


async def test_terminate_group_kills_a_stubborn_probe_and_its_children() -> None:
    probe = await _probe(WRAPPER_WITH_NATIVE_CHILD)
    assert probe.stdout is not None
    native = int(await asyncio.wait_for(probe.stdout.readline(), WAIT))
    result = await terminate_group(probe.pid, term_grace=0.2, kill_grace=WAIT, leader=probe)
    assert (result.method, result.returncode) == ("sigkill", -signal.SIGKILL)
    assert not alive(native)
    assert not alive(probe.pid)
    await probe.wait()


async def test_terminate_group_without_leader() -> None:
    probe = await _probe("import time; print('ready', flush=True); time.sleep(60)")
    assert probe.stdout is not None
    await asyncio.wait_for(probe.stdout.readline(), WAIT)
    result = await terminate_group(probe.pid, term_grace=WAIT, kill_grace=WAIT)
    assert (result.method, result.returncode) == ("sigterm", None)
    assert await asyncio.wait_for(probe.wait(), WAIT) == -signal.SIGTERM


@pytest.mark.parametrize("pgid", [0, 1, -4, "own"])
async def test_terminate_group_refuses_groups_that_are_not_a_childs(pgid: object) -> None:
    target = os.getpgrp() if pgid == "own" else pgid
    with pytest.raises(UsageError):
        await terminate_group(target, term_grace=0, kill_grace=0)  # type: ignore[arg-type]


# --- the stdout pipe -------------------------------------------------------------------------


@pytest.mark.skipif(not hasattr(__import__("fcntl"), "F_GETPIPE_SZ"), reason="Linux pipes only")
async def test_the_stdout_pipe_is_widened_and_a_large_burst_arrives_whole(spawn: Spawn) -> None:
    import fcntl

    from baton.runtime.processes.process import STDOUT_PIPE_BYTES

    # The agent writes a burst larger than Linux's default pipe (64 KiB) before Baton reads.
    burst = 3 * 64 * 1024
    proc = await spawn(f"import sys; sys.stdout.buffer.write(b'x' * {burst} + b'\\n')")
    pipe = proc._transport.get_pipe_transport(1)
    assert pipe is not None
    size = fcntl.fcntl(pipe.get_extra_info("pipe").fileno(), fcntl.F_GETPIPE_SZ)
    if int(Path("/proc/sys/fs/pipe-max-size").read_text()) >= STDOUT_PIPE_BYTES:
        assert size >= STDOUT_PIPE_BYTES  # (the kernel rounds up to a power of two pages)
    data = await asyncio.wait_for(proc.stdout.readexactly(burst + 1), WAIT)
    assert data == b"x" * burst + b"\n"
