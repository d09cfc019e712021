"""A run's or a session's trajectory for evaluation (docs/trajectories.md): ATIF as one JSON
document (``format=atif``, the default) or the normalized events one per line
(``format=acp-jsonl``, ``application/x-ndjson``), the views `baton export` prints.

Read from the store, so on a shared store every host's API exports every host's runs. Bounded
as the views are (``MAX_SESSION_TURNS`` turns, ``MAX_EXPORTED_EVENTS`` events per run).
"""

from __future__ import annotations

from typing import Final

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from baton.errors import ApiRequestInvalid, SessionNotFound
from baton.service.context import service_of
from baton.service.routes_runs import store_of
from baton.store import Store
from baton.views.run_ids import resolve_run
from baton.views.trajectory import (
    EXPORT_FORMATS,
    MAX_SESSION_TURNS,
    ExportTarget,
    acp_jsonl_lines,
    export_trajectory,
)

#: The media type of the ``acp-jsonl`` format.
NDJSON: Final = "application/x-ndjson"


def _answer(request: Request, store: Store, target: ExportTarget) -> Response:
    chosen = request.query_params.get("format") or "atif"
    if chosen not in EXPORT_FORMATS:
        raise ApiRequestInvalid(f"format must be one of {', '.join(EXPORT_FORMATS)}")
    if chosen == "atif":
        return JSONResponse(export_trajectory(store, target))
    return Response(b"".join(acp_jsonl_lines(store, target.runs)), media_type=NDJSON)


async def run_trajectory(request: Request) -> Response:
    """``GET /api/v1/runs/{run}/trajectory?format=atif|acp-jsonl``: one run's trajectory."""
    store = store_of(service_of(request))
    run = resolve_run(store, request.path_params["run"])
    return _answer(request, store, ExportTarget("run", run.id, (run,)))


async def session_trajectory(request: Request) -> Response:
    """``GET /api/v1/sessions/{name}/trajectory?format=atif|acp-jsonl``: a session's turns,
    oldest first, as one trajectory."""
    store = store_of(service_of(request))
    name = request.path_params["name"]
    if store.find_conversation(name) is None:
        raise SessionNotFound(f"no session {name!r}")
    runs = tuple(store.conversation_runs(name, limit=MAX_SESSION_TURNS))
    return _answer(request, store, ExportTarget("session", name, runs))


ROUTES: Final = [
    Route("/api/v1/runs/{run}/trajectory", run_trajectory, methods=["GET"]),
    Route("/api/v1/sessions/{name}/trajectory", session_trajectory, methods=["GET"]),
]
