"""Recovery: the RECOVERY_REQUIRED runs, settling one as failed, attaching to look
(`baton recover`). Nothing here resubmits a prompt whose outcome is unknown."""

from __future__ import annotations

from typing import Any, Final

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from baton.errors import RunNotRecoverable
from baton.service.bodies import query_int
from baton.service.context import Service, service_of
from baton.service.limits import MAX_LIST_ROWS
from baton.service.routes_runs import DEFAULT_LIST_ROWS, store_of
from baton.views.contract import document
from baton.views.recovery import attach_request, note_recovery, recovery_view
from baton.views.run_ids import resolve_run
from baton.views.runs import run_row


def _view(service: Service, run_id: str) -> dict[str, Any]:
    return document(recovery_view(store_of(service), service.runtime.journal, run_id))


async def list_recovery(request: Request) -> Response:
    """``GET /api/v1/recovery?runId=ID``: runs whose outcome is ambiguous, newest first, each
    as `baton recover RUN --json` shows it (journal tail, session, streamed text); with
    ``runId``, that run (whatever its status)."""
    service = service_of(request)
    store = store_of(service)
    wanted = request.query_params.get("runId")
    if wanted is not None:
        return JSONResponse({"runs": [_view(service, resolve_run(store, wanted).id)]})
    limit = query_int(request, "limit", DEFAULT_LIST_ROWS, low=1, high=MAX_LIST_ROWS)
    records = store.list_runs(status="RECOVERY_REQUIRED", limit=limit)
    return JSONResponse({"runs": [_view(service, r.id) for r in records]})


def _recoverable(service: Service, text: str) -> str:
    record = resolve_run(store_of(service), text)
    if record.status != "RECOVERY_REQUIRED":
        raise RunNotRecoverable(
            f"run {record.id} is {record.status}, not RECOVERY_REQUIRED: nothing to recover"
        )
    return record.id


async def mark_failed(request: Request) -> Response:
    """``POST /api/v1/recovery/{run}/fail``: settle the run as FAILED (the user's decision,
    recorded as MARKED_FAILED_BY_USER); 409 unless it is RECOVERY_REQUIRED."""
    service = service_of(request)
    store = store_of(service)
    run_id = _recoverable(service, request.path_params["run"])
    await store.update_run_status(
        run_id,
        "FAILED",
        expected="RECOVERY_REQUIRED",
        error_code="MARKED_FAILED_BY_USER",
        diagnostic="the user settled the ambiguous run as failed (through the API)",
    )
    return JSONResponse(run_row(store, store.get_run(run_id)))


async def attach(request: Request) -> Response:
    """``POST /api/v1/recovery/{run}/attach``: attach to the run's provider session to look
    (resume, else load; no prompt is sent) as a new run of this service; 202 with its id. The
    original stays RECOVERY_REQUIRED until it is settled."""
    service = service_of(request)
    run_id = _recoverable(service, request.path_params["run"])
    known = recovery_view(store_of(service), service.runtime.journal, run_id)
    new_run = await service.launcher.start(attach_request(known))
    await note_recovery(store_of(service), run_id, new_run, "attach")
    return JSONResponse(
        {"runId": new_run, "of": run_id, "events": f"/api/v1/runs/{new_run}/events"},
        status_code=202,
    )


ROUTES: Final = [
    Route("/api/v1/recovery", list_recovery, methods=["GET"]),
    Route("/api/v1/recovery/{run}/fail", mark_failed, methods=["POST"]),
    Route("/api/v1/recovery/{run}/attach", attach, methods=["POST"]),
]
