"""Warm sessions by default (issue 30, item 2): the first `baton run --session` or `baton
session new` on a data directory with no running service starts one in the background.

The service is this user's `baton serve` on the data directory (loopback, its own token),
started detached with an idle bound (``[service] idle_stop``, else
:data:`~baton.service.runtime_file.DEFAULT_IDLE_STOP_SECONDS`): it stops by itself once nothing is
queued, running or waiting for an answer for that long, so agents stay warm between a
person's turns without a service left behind for good. Its output goes to ``serve.log`` in the
data directory. ``--no-server``, ``[service] autostart = false`` or ``BATON_AUTOSTART=0``
turn this off; a service that cannot start is said on one line and the turn runs in this
process, as before.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Final

from baton.cli.service_link import ServiceClient, service_for
from baton.runtime.agents.config_file import UserConfig
from baton.service.runtime_file import DEFAULT_IDLE_STOP_SECONDS, RuntimeInfo, find_service

#: The variable that turns the background start off (``0``, ``false``, ``no``, ``off``).
AUTOSTART_ENV: Final = "BATON_AUTOSTART"
_OFF_WORDS: Final = frozenset({"0", "false", "no", "off"})
#: Seconds a CLI waits for the service it started to publish its runtime file: the service's
#: imports and the store's opening on a loaded machine; past it the turn runs in this process.
SERVICE_START_WAIT_SECONDS: Final = 30.0
#: Seconds between two looks for the runtime file.
START_POLL_SECONDS: Final = 0.05
#: The log of a service started in the background, in the data directory.
LOG_FILENAME: Final = "serve.log"


def autostart_enabled(config: UserConfig, environ: Mapping[str, str]) -> bool:
    """Whether a named session's turn may start the data directory's service."""
    if environ.get(AUTOSTART_ENV, "").strip().lower() in _OFF_WORDS:
        return False
    return config.service_autostart is not False


def service_or_start(
    flag: str | None,
    *,
    no_server: bool,
    config: UserConfig,
    note: IO[str],
    environ: Mapping[str, str] | None = None,
) -> ServiceClient | None:
    """The running service's client; else, when allowed, one started in the background now;
    else None (the caller works in this process)."""
    client = service_for(flag, no_server=no_server)
    env = os.environ if environ is None else environ
    if client is not None or no_server or not autostart_enabled(config, env):
        return client
    from baton.store import prepare_data_dir, resolve_data_dir

    data_dir = prepare_data_dir(resolve_data_dir(flag)).path
    idle = config.service_idle_stop
    bound = DEFAULT_IDLE_STOP_SECONDS if idle is None else idle
    started = _start(data_dir, bound, config.path, env)
    if started is None:
        info = find_service(data_dir)  # another CLI's start won the lock: use that one
        if info is None:
            note.write(
                f"baton: could not start a service in the background (see "
                f"{data_dir / LOG_FILENAME}); running this turn here\n"
            )
            return None
        return ServiceClient(info)
    info = started
    stops = "when stopped" if bound == "off" else f"after {bound:g}s idle"
    note.write(
        f"baton: started a service for this data directory in the background (pid {info.pid}, "
        f"{info.url}; it stops by itself {stops}, `baton serve --stop` stops it now; "
        "--no-server or [service] autostart = false turns this off)\n"
    )
    return ServiceClient(info)


def _start(
    data_dir: Path, bound: float | str, config_path: Path | None, env: Mapping[str, str]
) -> RuntimeInfo | None:
    argv = [sys.executable, "-m", "baton.cli.main", "serve", "--data-dir", str(data_dir)]
    if bound != "off":
        argv += ["--idle-stop", f"{bound:g}" if isinstance(bound, float) else str(bound)]
    if config_path is not None:
        argv += ["--config", str(config_path)]
    fd = os.open(data_dir / LOG_FILENAME, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=fd,
            stderr=fd,
            cwd=str(data_dir),
            env=dict(env),
            start_new_session=True,  # not this terminal's: Ctrl-C here does not stop it
        )
    except OSError:
        return None
    finally:
        os.close(fd)
    deadline = time.monotonic() + SERVICE_START_WAIT_SECONDS
    while time.monotonic() < deadline:
        info = find_service(data_dir)
        if info is not None and info.pid == process.pid:
            return info
        if process.poll() is not None:
            return None
        time.sleep(START_POLL_SECONDS)
    return None
