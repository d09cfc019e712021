"""The keeper (Linux): the agent's tree ends when the process that started it dies, and only
then (a thread of a living Baton ending is not its death)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from baton.runtime.processes.keeper_launch import keeper_argv, keeper_available

pytestmark = pytest.mark.skipif(not keeper_available(), reason="the keeper is Linux-only")

#: Bound of every wait below (not a speed claim).
WAIT = 20.0

SLEEPER = "import sys, time; print('up', flush=True); time.sleep(600)"


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"


def _wait_gone(pids: list[int]) -> list[int]:
    deadline = time.monotonic() + WAIT
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [p for p in pids if _alive(p)]


def _start(parent_pid: int, agent: list[str]) -> subprocess.Popen[bytes]:
    report_r, report_w = os.pipe()
    try:
        return subprocess.Popen(
            keeper_argv(parent_pid, report_w, agent, {}),
            stdout=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            pass_fds=(report_w,),
            start_new_session=True,
            env={},
        )
    finally:
        os.close(report_w)
        os.close(report_r)


def test_a_thread_of_the_owner_ending_leaves_the_agent_running() -> None:
    started: list[subprocess.Popen[bytes]] = []

    def spawn_and_wait_armed() -> None:
        keeper = _start(os.getpid(), [sys.executable, "-c", SLEEPER])
        started.append(keeper)
        # The agent runs, so the keeper armed its parent-death signal: this thread's end
        # now sends it (the kernel signals the death of the forking thread).
        assert keeper.stdout is not None and keeper.stdout.readline() == b"up\n"

    spawner = threading.Thread(target=spawn_and_wait_armed)
    spawner.start()
    spawner.join()
    [keeper] = started
    try:
        time.sleep(0.5)  # the signal of the spawning thread's end has been handled
        assert keeper.poll() is None
    finally:
        os.killpg(keeper.pid, signal.SIGKILL)
        keeper.wait()


def test_the_owner_dying_ends_the_agent_and_every_descendant(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    agent = (
        "import os, subprocess, sys, time\n"
        f"sleeper = [sys.executable, '-c', {SLEEPER!r}]\n"
        "inside = subprocess.Popen(sleeper, stdout=subprocess.DEVNULL)\n"
        "away = subprocess.Popen(sleeper, stdout=subprocess.DEVNULL, start_new_session=True)\n"
        f"open({str(pids)!r}, 'w').write(f'{{os.getpid()}} {{inside.pid}} {{away.pid}}')\n"
        "time.sleep(600)\n"
    )
    # A stand-in for Baton: starts the keeper, then waits to be killed.
    owner_code = (
        "import os, sys, subprocess, time\n"
        "from baton.runtime.processes.keeper_launch import keeper_argv\n"
        "r, w = os.pipe()\n"
        f"argv = keeper_argv(os.getpid(), w, [sys.executable, '-c', {agent!r}], {{}})\n"
        "k = subprocess.Popen(argv, pass_fds=(w,), start_new_session=True)\n"
        "print(k.pid, flush=True)\n"
        "time.sleep(600)\n"
    )
    owner = subprocess.Popen([sys.executable, "-c", owner_code], stdout=subprocess.PIPE)
    assert owner.stdout is not None
    keeper_pid = int(owner.stdout.readline())
    deadline = time.monotonic() + WAIT
    while not (pids.exists() and len(pids.read_text().split()) == 3):
        assert time.monotonic() < deadline, "the agent never started its children"
        time.sleep(0.05)
    tree = [keeper_pid, *(int(p) for p in pids.read_text().split())]
    assert all(_alive(p) for p in tree)
    owner.kill()
    owner.wait()
    left = _wait_gone(tree)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert left == []


def test_the_agent_gets_exactly_the_environment_given() -> None:
    report_r, report_w = os.pipe()
    env_path = "/usr/bin/env"
    done = subprocess.run(
        keeper_argv(os.getpid(), report_w, [env_path], {"ONLY": "this"}),
        capture_output=True,
        pass_fds=(report_w,),
        env={"ONLY": "this"},
        timeout=WAIT,
        check=True,
    )
    os.close(report_w)
    assert os.read(report_r, 64) == b"ok"
    os.close(report_r)
    assert done.stdout.decode().splitlines() == ["ONLY=this"]
