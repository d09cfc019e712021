"""Baton: drive coding agents over the Agent Client Protocol, safely, headlessly and durably.

The public library surface, re-exported here (imported lazily, so ``import baton`` stays cheap
for the bundled agent and the wire layer)::

    from baton import Runtime, RunRequest, RunResult, RunEvent, TurnBudget
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from baton._version import __version__

if TYPE_CHECKING:
    from baton.errors import BatonError
    from baton.runtime.runtime import RunRequest, RunResult, Runtime
    from baton.runtime.turns.events import RunEvent
    from baton.wire.budget import TurnBudget

_EXPORTS = {
    "Runtime": "baton.runtime.runtime",
    "RunRequest": "baton.runtime.runtime",
    "RunResult": "baton.runtime.runtime",
    "RunEvent": "baton.runtime.turns.events",
    "TurnBudget": "baton.wire.budget",
    "BatonError": "baton.errors",
}

__all__ = [
    "BatonError",
    "RunEvent",
    "RunRequest",
    "RunResult",
    "Runtime",
    "TurnBudget",
    "__version__",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'baton' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
