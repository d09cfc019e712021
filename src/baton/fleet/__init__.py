"""Many hosts (issue 22, docs/fleet.md): queued turns on a shared PostgreSQL store, through an
existing job engine (procrastinate). :func:`submit` queues a turn; :class:`FleetWorker` runs
them; :mod:`baton.fleet.recovery` settles the turns of a worker that stopped heartbeating.

The names below load on first use: importing ``baton.fleet.limits`` alone needs neither
procrastinate nor psycopg (the ``fleet`` extra)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names' real types for mypy; at run time they load on first use
    from baton.fleet.queued import QueuedRun, TurnSubmission, submit
    from baton.fleet.worker import FleetWorker, WorkerSettings

_EXPORTS = {
    "submit": "baton.fleet.queued",
    "QueuedRun": "baton.fleet.queued",
    "TurnSubmission": "baton.fleet.queued",
    "FleetWorker": "baton.fleet.worker",
    "WorkerSettings": "baton.fleet.worker",
}

__all__ = ["FleetWorker", "QueuedRun", "TurnSubmission", "WorkerSettings", "submit"]


def __getattr__(name: str) -> Any:
    """Load ``submit``, ``QueuedRun``, ``TurnSubmission``, ``FleetWorker``, ``WorkerSettings``
    from their modules on first use."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'baton.fleet' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
