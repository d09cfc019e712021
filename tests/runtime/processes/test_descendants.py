"""An agent's descendants through /proc, and their end at shutdown: a grandchild that calls
``setsid()`` (it leaves the agent's process group, so the group's ladder never reaches it) is
ended with the agent (issue 15, class 4)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest

from baton.runtime.processes.descendants import (
    MAX_DESCENDANTS,
    ProcessId,
    alive,
    become_subreaper,
    descendants,
    end_descendants,
)
from baton.runtime.processes.process import AgentProcess

PY = sys.executable
ENV = {"PYTHONDONTWRITEBYTECODE": "1"}
#: Generous bound on any single wait: a hang fails, a slow machine does not.
WAIT = 30.0

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and prctl")


def _fake_proc(tmp_path: Path, table: dict[int, tuple[int, int, str]]) -> Path:
    """A /proc with ``pid -> (ppid, starttime, state)`` stat lines (a name with a ``)`` in it,
    as real command names may have)."""
    proc = tmp_path / "proc"
    for pid, (ppid, start, state) in table.items():
        (proc / str(pid)).mkdir(parents=True)
        rest = ["0"] * 17
        fields = [state, str(ppid), *rest, str(start)]
        (proc / str(pid) / "stat").write_text(f"{pid} (odd) name) {' '.join(fields)} 0 0\n")
    (proc / "self").mkdir()
    return proc


def test_descendants_follow_the_parent_chain_parents_first(tmp_path: Path) -> None:
    proc = _fake_proc(
        tmp_path,
        {
            10: (1, 100, "S"),  # the agent
            11: (10, 101, "S"),  # its child
            12: (11, 102, "S"),  # a grandchild (a setsid daemon still has its parent)
            13: (12, 103, "Z"),  # a zombie great-grandchild: listed, not alive
            20: (1, 200, "S"),  # unrelated
        },
    )
    found = descendants(10, proc)
    assert found == [ProcessId(11, 101), ProcessId(12, 102), ProcessId(13, 103)]
    assert [alive(p, proc) for p in found] == [True, True, False]
    assert descendants(20, proc) == []
    # A reused pid (another start time) is not the process the snapshot saw.
    assert not alive(ProcessId(11, 999), proc)


def test_the_walk_is_bounded(tmp_path: Path) -> None:
    table = {10: (1, 1, "S")}
    table.update({100 + n: (10, 2, "S") for n in range(MAX_DESCENDANTS + 5)})
    proc = _fake_proc(tmp_path, table)
    assert len(descendants(10, proc)) == MAX_DESCENDANTS


def test_an_unreadable_proc_finds_nothing(tmp_path: Path) -> None:
    assert descendants(1, tmp_path / "missing") == []
    assert end_descendants([], tmp_path / "missing") == []


#: An agent whose child forks a grandchild that calls setsid() (a new session and process
#: group: the ladder over the agent's group never signals it), writes its pid, and sleeps.
_DAEMONIZING_AGENT = r"""
import os, sys, time
pid_file = sys.argv[1]
if os.fork() == 0:
    if os.fork() == 0:
        os.setsid()
        with open(pid_file + ".tmp", "w") as f:
            f.write(str(os.getpid()))
        os.rename(pid_file + ".tmp", pid_file)
        time.sleep(300)
        os._exit(0)
    time.sleep(300)
    os._exit(0)
sys.stdin.read()  # until stdin EOF
time.sleep(300)   # then ignore it: the ladder signals the group
"""


async def _read_pid(path: Path) -> int:
    async with asyncio.timeout(WAIT):
        while not path.exists():  # noqa: ASYNC110 - another process writes it
            await asyncio.sleep(0.02)
    return int(path.read_text())


@linux_only
async def test_a_grandchild_that_calls_setsid_ends_with_the_agent(tmp_path: Path) -> None:
    assert become_subreaper()
    pid_file = tmp_path / "daemon.pid"
    script = tmp_path / "agent.py"
    script.write_text(_DAEMONIZING_AGENT)
    agent = await AgentProcess.spawn([PY, str(script), str(pid_file)], env=ENV)
    daemon = await _read_pid(pid_file)
    assert os.getsid(daemon) == daemon != agent.pid  # out of the agent's session and group
    try:
        result = await asyncio.wait_for(
            agent.shutdown(eof_grace=0.05, term_grace=0.5, kill_grace=5.0), WAIT
        )
        assert not result.survived
        stat = Path(f"/proc/{daemon}/stat")
        # Gone, and reaped: Baton adopted it as subreaper, so no zombie is left behind.
        assert not stat.exists(), stat.read_text()
    finally:
        if Path(f"/proc/{daemon}").exists():
            os.kill(daemon, signal.SIGKILL)
