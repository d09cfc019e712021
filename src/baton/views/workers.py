"""The fleet's workers as `baton workers --json` prints them and ``GET /api/v1/workers``
answers (docs/fleet.md)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from baton.store import ACTIVE_RUN_STATUSES, Store
from baton.views.contract import document, plain


def _age_seconds(stamp: str, now: datetime) -> float | None:
    try:
        then = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return round(max(0.0, (now - then).total_seconds()), 1)


def worker_rows(store: Store, now: datetime | None = None) -> list[dict[str, Any]]:
    """Each worker's record, the runs it is running now (``running``) and its heartbeat's age
    in seconds as this host's clock reads it (``heartbeatAgeSeconds``)."""
    moment = now or datetime.now(UTC)
    rows = []
    for worker in store.list_workers():
        running = (
            [r.id for r in store.list_runs(owner=worker.owner, status=ACTIVE_RUN_STATUSES)]
            if worker.state == "RUNNING"
            else []
        )
        rows.append(
            document(
                {
                    **plain(worker),
                    "running": running,
                    "heartbeat_age_seconds": _age_seconds(worker.heartbeat_at, moment),
                }
            )
        )
    return rows
