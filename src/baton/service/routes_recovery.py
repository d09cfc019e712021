"""Recovery: the RECOVERY_REQUIRED runs, and settling one as failed (`baton recover`)."""

from __future__ import annotations

from typing import Final

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from baton.cli.commands.recover import RunNotRecoverable
from baton.cli.store_access import resolve_run
from baton.service.bodies import query_int
from baton.service.context import service_of
from baton.service.limits import MAX_LIST_ROWS
from baton.service.routes_runs import DEFAULT_LIST_ROWS, run_row, store_of


async def list_recovery(request: Request) -> Response:
    """``GET /api/v1/recovery``: runs whose outcome is ambiguous, newest first."""
    store = store_of(service_of(request))
    limit = query_int(request, "limit", DEFAULT_LIST_ROWS, low=1, high=MAX_LIST_ROWS)
    records = store.list_runs(status="RECOVERY_REQUIRED", limit=limit)
    return JSONResponse({"runs": [run_row(store, r) for r in records]})


async def mark_failed(request: Request) -> Response:
    """``POST /api/v1/recovery/{run}/mark-failed``: settle the run as FAILED (the user's
    decision, recorded as MARKED_FAILED_BY_USER); 409 unless it is RECOVERY_REQUIRED."""
    store = store_of(service_of(request))
    record = resolve_run(store, request.path_params["run"])
    if record.status != "RECOVERY_REQUIRED":
        raise RunNotRecoverable(
            f"run {record.id} is {record.status}, not RECOVERY_REQUIRED: nothing to recover"
        )
    await store.update_run_status(
        record.id,
        "FAILED",
        expected="RECOVERY_REQUIRED",
        error_code="MARKED_FAILED_BY_USER",
        diagnostic="the user settled the ambiguous run as failed (through the API)",
    )
    return JSONResponse(run_row(store, store.get_run(record.id)))


ROUTES: Final = [
    Route("/api/v1/recovery", list_recovery, methods=["GET"]),
    Route("/api/v1/recovery/{run}/mark-failed", mark_failed, methods=["POST"]),
]
