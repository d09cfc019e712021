"""Batches (docs/batches.md) read from the store: the list, and one batch with its result rows
(the inspector's Batches page). Read-only: a batch is run, resumed and cancelled with
`baton batch`. On a shared store every host's batches are served."""

from __future__ import annotations

from typing import Final

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from baton.service.bodies import query_int
from baton.service.context import service_of
from baton.service.limits import MAX_LIST_ROWS
from baton.service.routes_runs import store_of
from baton.store.batches import BatchRecords
from baton.views.batches import batch_document, batch_view


async def list_batches(request: Request) -> Response:
    """``GET /api/v1/batches?limit=N``: batches, newest first, each with its counts."""
    store = store_of(service_of(request))
    limit = query_int(request, "limit", MAX_LIST_ROWS, low=1, high=MAX_LIST_ROWS)
    rows = [batch_view(store, record) for record in BatchRecords(store).list_batches(limit=limit)]
    return JSONResponse({"batches": rows})


async def show_batch(request: Request) -> Response:
    """``GET /api/v1/batches/{batch}``: one batch (id or unique prefix) and its rows."""
    store = store_of(service_of(request))
    record = BatchRecords(store).get_batch(request.path_params["batch"])
    return JSONResponse(batch_document(store, record))


ROUTES: Final = [
    Route("/api/v1/batches", list_batches, methods=["GET"]),
    Route("/api/v1/batches/{batch}", show_batch, methods=["GET"]),
]
