"""How Baton starts an agent under its keeper (:mod:`baton.runtime.processes.keeper`) and
hears whether the agent was executed.

Linux only (:func:`keeper_available`): the keeper needs ``prctl`` and /proc. Elsewhere Baton
starts the agent directly, as before, and an agent may outlive a Baton process killed with
SIGKILL (docs/process.md, "When Baton dies").
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

#: The keeper script, run by path (it imports nothing of Baton).
KEEPER_SCRIPT: Final = Path(__file__).with_name("keeper.py")

#: Interpreter flags of the keeper: isolated (no PYTHON* variables, no user site, no script
#: directory on the path) and without ``site``, so it starts fast and loads nothing but stdlib.
KEEPER_PYTHON_FLAGS: Final = ("-I", "-S")

#: Seconds Baton waits for the keeper's report that the agent was executed (a fork and an exec;
#: far less on any machine). Protects a spawn from a keeper that hangs before it reports.
KEEPER_REPORT_SECONDS: Final = 30.0

#: Bytes of the report read at most (``ok`` or ``E<errno>``).
MAX_REPORT_BYTES: Final = 64


def keeper_available() -> bool:
    """True where agents are started under the keeper (Linux with /proc and the script)."""
    return (
        sys.platform.startswith("linux")
        and Path("/proc/self").exists()
        and (KEEPER_SCRIPT.is_file())
    )


def keeper_argv(
    baton_pid: int, report_fd: int, argv: Sequence[str], env: Mapping[str, str]
) -> list[str]:
    """The keeper's command line for the agent ``argv`` started with exactly ``env``."""
    return [
        sys.executable,
        *KEEPER_PYTHON_FLAGS,
        str(KEEPER_SCRIPT),
        str(baton_pid),
        str(report_fd),
        "1" if "LC_CTYPE" in env else "0",
        "--",
        *argv,
    ]


async def read_keeper_report(fd: int, bound: float) -> bytes:
    """The keeper's report on ``fd`` (read to its end, at most :data:`MAX_REPORT_BYTES`);
    empty when the keeper ended without one or ``bound`` seconds passed. Closes ``fd``.

    Cancellation: safe; ``fd`` is closed and nothing else is left behind."""
    loop = asyncio.get_running_loop()
    os.set_blocking(fd, False)
    done: asyncio.Future[None] = loop.create_future()
    received = bytearray()

    def readable() -> None:
        try:
            chunk = os.read(fd, MAX_REPORT_BYTES)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        received.extend(chunk)
        if (not chunk or len(received) >= MAX_REPORT_BYTES) and not done.done():
            done.set_result(None)

    loop.add_reader(fd, readable)
    try:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(done, bound)
    finally:
        loop.remove_reader(fd)
        os.close(fd)
    return bytes(received[:MAX_REPORT_BYTES])
