"""A worker's graceful shutdown: SIGTERM (or Ctrl-C) stops taking jobs and gives the running
turns a bound to finish; a second signal, or the bound running out, interrupts them, and
each is settled (its run INTERRUPTED, the agent told ``session/cancel``, the store written)
before the process exits. No signal cuts a turn without settling it.

procrastinate's own handlers leave a second SIGTERM to the default action, which kills the
process mid-turn (its run then waits for a peer to declare the worker lost); Baton installs
its own instead (``install_signal_handlers=False`` on the engine's worker) and passes the
bound as the engine's ``shutdown_graceful_timeout``, whose expiry cancels the jobs the same
way.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Callable
from typing import Any, Final

LOG = logging.getLogger("baton.fleet")

#: The signals that stop a worker.
STOP_SIGNALS: Final = (signal.SIGTERM, signal.SIGINT)


class GracefulShutdown:
    """The stop signals of one worker process (see the module docstring). ``stop`` asks the
    engine to stop taking jobs (its graceful wait follows); the tasks in :attr:`turns` are
    cancelled by a second signal."""

    def __init__(self, stop: Callable[[], None], grace_seconds: float) -> None:
        self.stop = stop
        self.grace_seconds = grace_seconds
        #: The tasks running turns now (added and removed by the worker).
        self.turns: set[asyncio.Task[Any]] = set()
        #: How many stop signals arrived.
        self.signals = 0
        self._loop: asyncio.AbstractEventLoop | None = None

    def install(self) -> None:
        """Handle STOP_SIGNALS on the running loop (until :meth:`uninstall`)."""
        self._loop = asyncio.get_running_loop()
        for sig in STOP_SIGNALS:
            self._loop.add_signal_handler(sig, self.on_signal)

    def uninstall(self) -> None:
        """Give the signals back to their defaults."""
        if self._loop is None:
            return
        for sig in STOP_SIGNALS:
            self._loop.remove_signal_handler(sig)
        self._loop = None

    def on_signal(self) -> None:
        """One stop signal: the first stops taking jobs; the second interrupts the running
        turns (each is settled before the worker exits); later ones are only noted."""
        self.signals += 1
        if self.signals == 1:
            LOG.warning(
                "stopping: %d running turns have %gs to finish (a second signal interrupts "
                "them now; they are settled before the worker exits)",
                len(self.turns),
                self.grace_seconds,
            )
            self.stop()
        elif self.signals == 2:
            self.interrupt_turns()
        else:
            LOG.warning("already stopping: settling %d interrupted turns", len(self.turns))

    def interrupt_turns(self) -> None:
        """Cancel every running turn (the Runtime settles each)."""
        LOG.warning("interrupting %d running turns; settling them before exiting", len(self.turns))
        for task in list(self.turns):
            task.cancel()
