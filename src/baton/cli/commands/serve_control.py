"""`baton serve --status` and `baton serve --stop`: the data directory's running service, seen
and stopped from another process.

``--status`` prints whether a service runs (its pid and URL, from the owner-only runtime file
whose lock it holds) and exits 0 when one does, 1 when none does. ``--stop`` sends it SIGTERM,
its own graceful stop (running turns get ``--shutdown-grace``, then are interrupted; nothing is
replayed), and waits until it released the data directory, at most
:data:`STOP_WAIT_SECONDS`. Nothing is created while looking.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from typing import Final

from baton.cli import exit_codes
from baton.cli.json_output import write_json
from baton.errors import ServiceUnreachable
from baton.service.runtime_file import find_service, lock_is_held
from baton.views.contract import document

#: Seconds ``--stop`` waits for the service to release its data directory: its shutdown
#: grace (10 s by default) plus the agents' shutdown ladder, with room for a loaded machine.
STOP_WAIT_SECONDS: Final = 60.0
#: Seconds between two looks while waiting.
STOP_POLL_SECONDS: Final = 0.1


def status(data_dir: Path, *, as_json: bool) -> int:
    """Print the service's state; 0 when one runs, 1 when none does."""
    info = find_service(data_dir) if data_dir.is_dir() else None
    if as_json:
        write_json(
            sys.stdout,
            document(
                {
                    "running": info is not None,
                    "pid": info.pid if info else None,
                    "url": info.url if info else None,
                    "dataDir": str(data_dir),
                }
            ),
        )
    elif info is None:
        print(f"no service runs on {data_dir}")
    else:
        print(f"running: pid {info.pid}, {info.url} (data directory {data_dir})")
    return exit_codes.OK if info is not None else exit_codes.TURN_FAILED


def stop(data_dir: Path, *, as_json: bool) -> int:
    """Stop the service (SIGTERM), wait for it to let go; 0 once it did (or none ran)."""
    info = find_service(data_dir) if data_dir.is_dir() else None
    if info is None:
        if as_json:
            write_json(sys.stdout, document({"stopped": False, "running": False}))
        else:
            print(f"no service runs on {data_dir}")
        return exit_codes.OK
    try:
        os.kill(info.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass  # it ended between the look and the signal
    except PermissionError as exc:
        raise ServiceUnreachable(f"cannot signal the service (pid {info.pid}): {exc}") from exc
    deadline = time.monotonic() + STOP_WAIT_SECONDS
    while lock_is_held(data_dir):
        if time.monotonic() > deadline:
            raise ServiceUnreachable(
                f"the service (pid {info.pid}) did not stop within {STOP_WAIT_SECONDS:g}s; "
                "it may still be finishing its turns"
            )
        time.sleep(STOP_POLL_SECONDS)
    if as_json:
        write_json(sys.stdout, document({"stopped": True, "pid": info.pid}))
    else:
        print(f"stopped the service (pid {info.pid})")
    return exit_codes.OK
