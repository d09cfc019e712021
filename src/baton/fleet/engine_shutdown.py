"""A worker's graceful shutdown: SIGTERM (or Ctrl-C) stops taking jobs and gives the running
turns a bound to finish; a second signal, or the bound running out, interrupts them the clean
way (``session/cancel``: each run ends INTERRUPTED, or RECOVERY_REQUIRED when the agent does
not answer the cancel in time), and the worker exits once every one is settled. A third
signal abandons what is still waiting (recorded RECOVERY_REQUIRED, ``CALLER_CANCELLED``, its
writes shielded). No signal cuts a turn without settling it.

procrastinate's own handlers leave a second SIGTERM to the default action, which kills the
process mid-turn (its run then waits for a peer to declare the worker lost); Baton installs
its own instead (``install_signal_handlers=False`` on the engine's worker), and passes the
engine a ``shutdown_graceful_timeout`` of the bound plus SETTLE_MARGIN_SECONDS as a backstop:
past it the engine cancels the jobs, which abandons their turns as the third signal does.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Callable
from typing import Any, Final, Protocol

from baton.runtime.turns.turn import INTERRUPT_COMPLETION_TIMEOUT_SECONDS

LOG = logging.getLogger("baton.fleet")

#: The signals that stop a worker.
STOP_SIGNALS: Final = (signal.SIGTERM, signal.SIGINT)
#: The reason recorded on a turn a stopping worker interrupts.
INTERRUPT_REASON: Final = "worker stopping"
#: Seconds past the bound before the engine cancels the jobs still running: the interrupt's
#: own deadline (the agent's answer to session/cancel) and the writes that settle the run.
SETTLE_MARGIN_SECONDS: Final = INTERRUPT_COMPLETION_TIMEOUT_SECONDS + 15.0


class Interruptible(Protocol):
    """A running turn's handle (:class:`baton.runtime.run.Run`)."""

    def interrupt_nowait(self, reason: str = "user") -> bool:
        """Ask the turn to stop (session/cancel)."""
        ...


def engine_timeout(grace_seconds: float) -> float:
    """The engine's ``shutdown_graceful_timeout`` for a bound of ``grace_seconds``."""
    return grace_seconds + SETTLE_MARGIN_SECONDS


class GracefulShutdown:
    """The stop signals of one worker process (see the module docstring). ``stop`` asks the
    engine to stop taking jobs (its graceful wait follows). The worker adds each running
    turn's handle to :attr:`runs` and each job's task to :attr:`tasks`."""

    def __init__(self, stop: Callable[[], None], grace_seconds: float) -> None:
        self.stop = stop
        self.grace_seconds = grace_seconds
        #: The handles of the turns running now.
        self.runs: set[Interruptible] = set()
        #: The tasks running jobs now.
        self.tasks: set[asyncio.Task[Any]] = set()
        #: How many stop signals arrived.
        self.signals = 0
        #: Set once the running turns are interrupted: a turn starting later is at once.
        self.interrupting = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None

    def install(self) -> None:
        """Handle STOP_SIGNALS on the running loop (until :meth:`uninstall`)."""
        self._loop = asyncio.get_running_loop()
        for sig in STOP_SIGNALS:
            self._loop.add_signal_handler(sig, self.on_signal)

    def uninstall(self) -> None:
        """Give the signals back to their defaults and drop the bound's timer."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._loop is None:
            return
        for sig in STOP_SIGNALS:
            self._loop.remove_signal_handler(sig)
        self._loop = None

    def on_signal(self) -> None:
        """One stop signal (see the module docstring)."""
        self.signals += 1
        if self.signals == 1:
            LOG.warning(
                "stopping: %d running turns have %gs to finish (a second signal interrupts "
                "them now; each is settled before the worker exits)",
                len(self.runs),
                self.grace_seconds,
            )
            self.stop()
            if self._loop is not None:
                self._timer = self._loop.call_later(self.grace_seconds, self.interrupt_turns)
        elif self.signals == 2:
            self.interrupt_turns()
        else:
            self.abandon_turns()

    def interrupt_turns(self) -> None:
        """Interrupt every running turn (session/cancel; the Runtime settles each)."""
        self.interrupting = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self.runs:
            return
        LOG.warning("interrupting %d running turns; settling them before exiting", len(self.runs))
        for run in list(self.runs):
            run.interrupt_nowait(INTERRUPT_REASON)

    def abandon_turns(self) -> None:
        """Stop waiting for the agents (each run recorded RECOVERY_REQUIRED)."""
        LOG.warning("abandoning %d running turns (recorded RECOVERY_REQUIRED)", len(self.tasks))
        for task in list(self.tasks):
            task.cancel()
