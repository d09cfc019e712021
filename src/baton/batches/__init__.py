"""Batches (issue 32, docs/batches.md): many tasks across many agents, each cell in its own
workspace, durable and resumable. :class:`Batch` is the library's handle; the spec format is
:mod:`baton.batches.spec`; results and exports :mod:`baton.batches.results`.

The names load on first use (``baton.batches.spec`` alone does not import the runtime)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from baton._lazy import lazy_exports

if TYPE_CHECKING:
    from baton.batches.batch import Batch
    from baton.batches.runner import BatchSummary, CellEnd, Progress
    from baton.batches.spec import BatchSpec, load_spec

_EXPORTS = {
    "Batch": "baton.batches.batch",
    "BatchSummary": "baton.batches.runner",
    "CellEnd": "baton.batches.runner",
    "Progress": "baton.batches.runner",
    "BatchSpec": "baton.batches.spec",
    "load_spec": "baton.batches.spec",
}

__all__ = ["Batch", "BatchSpec", "BatchSummary", "CellEnd", "Progress", "load_spec"]

__getattr__: Any = lazy_exports(__name__, _EXPORTS)
