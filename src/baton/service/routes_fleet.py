"""The fleet seen from the service: its workers (``GET /api/v1/workers``), the same rows as
`baton workers --json`. On the data directory's own SQLite store there are none: the list is
empty and ``shared`` false (the inspector shows its workers table only on a shared store)."""

from __future__ import annotations

from typing import Final

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from baton.service.context import service_of
from baton.service.routes_runs import store_of
from baton.views.workers import worker_rows


async def list_workers(request: Request) -> Response:
    """``GET /api/v1/workers``: the workers of the service's store, with their host,
    heartbeat (and its age), queues, concurrency and running turns."""
    service = service_of(request)
    return JSONResponse(
        {
            "workers": worker_rows(store_of(service)),
            "shared": service.runtime.store_location.shared,
        }
    )


ROUTES: Final = [Route("/api/v1/workers", list_workers, methods=["GET"])]
