"""A batch as JSON (docs/batches.md), as `baton batch list|show --json` and the API's
``/api/v1/batches`` show it: its record, its cells' counts and reported cost, and (one batch)
its result rows."""

from __future__ import annotations

from typing import Any

from baton.batches.results import cell_row, cost_totals
from baton.store import Store
from baton.store.batches import BatchRecord, BatchRecords


def batch_view(store: Store, record: BatchRecord) -> dict[str, Any]:
    """One batch's summary: ``batchId``, ``name``, ``state``, ``stopReason``, ``specHash``,
    ``maxCost``, ``cells`` (how many), ``counts`` (by state), ``cost`` (reported, by
    currency), ``matrix`` (the task and agent ids, the repeats), the times."""
    cells = BatchRecords(store).batch_cells(record.id)
    counts: dict[str, int] = {}
    for cell in cells:
        counts[cell.state] = counts.get(cell.state, 0) + 1
    spec = record.spec
    return {
        "batchId": record.id,
        "name": record.name,
        "state": record.state,
        "stopReason": record.stop_reason,
        "specHash": record.spec_hash,
        "maxCost": record.max_cost,
        "cells": len(cells),
        "counts": counts,
        "cost": cost_totals(cells),
        "matrix": {
            "tasks": [task.get("id") for task in spec.get("tasks") or []],
            "agents": [agent.get("id") for agent in spec.get("agents") or []],
            "repeats": (spec.get("matrix") or {}).get("repeats", 1),
        },
        "createdAt": record.created_at,
        "updatedAt": record.updated_at,
    }


def batch_document(store: Store, record: BatchRecord) -> dict[str, Any]:
    """One batch with every cell's result row (docs/batches.md, "Results")."""
    return {
        **batch_view(store, record),
        "rows": [cell_row(cell) for cell in BatchRecords(store).batch_cells(record.id)],
    }
