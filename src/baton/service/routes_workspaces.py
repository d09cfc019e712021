"""Workspaces and the changes runs made in them (docs/workspaces.md): the workspaces, a
run's recorded comparison (the file list paged, without diffs), one file's diff, and the
patch in git's format.

Read from the store, so on a shared store every host's API serves every host's changes.
Every answer is bounded: a page holds at most :data:`MAX_CHANGE_ROWS` files; one file's
diff was bounded when recorded (``MAX_DIFF_BYTES_PER_FILE``); the patch is at most the
recorded comparison (``MAX_DIFF_BYTES_PER_TURN``).
"""

from __future__ import annotations

from typing import Any, Final

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from baton.errors import ApiRequestInvalid, RecordNotFound
from baton.runtime.workspaces.lifecycle import get_workspace
from baton.runtime.workspaces.recorded import Side, recorded_patch, run_changes
from baton.service.bodies import query_int
from baton.service.context import service_of
from baton.service.limits import MAX_LIST_ROWS
from baton.service.routes_runs import store_of
from baton.views.run_ids import resolve_run

#: Files one page of a run's changes lists at most (the default page is this size too).
MAX_CHANGE_ROWS: Final = 500


def _side(request: Request) -> Side:
    side = request.query_params.get("side") or "turn"
    if side not in ("turn", "base"):
        raise ApiRequestInvalid("side must be turn or base")
    return side  # type: ignore[return-value]


async def list_workspaces(request: Request) -> Response:
    """``GET /api/v1/workspaces?all=1&limit=N``: workspaces, newest first."""
    store = store_of(service_of(request))
    limit = query_int(request, "limit", MAX_LIST_ROWS, low=1, high=MAX_LIST_ROWS)
    everything = request.query_params.get("all") in ("1", "true")
    rows = [r.to_json() for r in store.list_workspaces(include_removed=everything)]
    return JSONResponse({"workspaces": rows[:limit]})


async def show_workspace(request: Request) -> Response:
    """``GET /api/v1/workspaces/{name}``: one workspace's record and its runs."""
    store = store_of(service_of(request))
    record = get_workspace(store, request.path_params["name"])
    runs = [run.run_id for run in store.workspace_runs(record.name)]
    return JSONResponse({**record.to_json(), "runs": runs})


def _recorded(request: Request) -> Any:
    store = store_of(service_of(request))
    run = resolve_run(store, request.path_params["run"])
    changes = run_changes(store, run.id)
    if changes is None:
        raise RecordNotFound(f"run {run.id} has no recorded workspace changes")
    return changes


async def run_changes_page(request: Request) -> Response:
    """``GET /api/v1/runs/{run}/changes?side=turn|base&offset=N&limit=N``: the run's last
    comparison: counts, markers and a page of its files without their diffs."""
    changes = _recorded(request)
    side = _side(request)
    offset = query_int(request, "offset", 0, low=0, high=10**9)
    limit = query_int(request, "limit", MAX_CHANGE_ROWS, low=1, high=MAX_CHANGE_ROWS)
    content = changes.content
    comparison = content.get(side) or {}
    files = comparison.get("files") or []
    page = [{k: v for k, v in f.items() if k != "diff"} for f in files[offset : offset + limit]]
    return JSONResponse(
        {
            "runId": changes.run_id,
            "workspace": content.get("workspace"),
            "side": side,
            "counts": comparison.get("counts"),
            "truncated": sorted({*content.get("truncated", ()), *comparison.get("truncated", ())}),
            "provisional": bool(content.get("provisional")),
            "atRecover": bool(content.get("atRecover")),
            "total": len(files),
            "offset": offset,
            "files": page,
            "nextOffset": offset + limit if offset + limit < len(files) else None,
        }
    )


async def run_file_diff(request: Request) -> Response:
    """``GET /api/v1/runs/{run}/changes/file?path=P&side=turn|base``: one changed file's
    recorded diff (redacted, bounded when recorded; ``diffTruncated`` says it was cut)."""
    changes = _recorded(request)
    path = request.query_params.get("path")
    if not path:
        raise ApiRequestInvalid("path names the changed file")
    comparison = changes.content.get(_side(request)) or {}
    for entry in comparison.get("files") or ():
        if entry.get("path") == path:
            return JSONResponse({"runId": changes.run_id, **entry})
    raise RecordNotFound(f"run {changes.run_id} changed no file {path!r}")


async def run_patch(request: Request) -> Response:
    """``GET /api/v1/runs/{run}/diff?side=turn|base&partial=1``: the patch in git's format
    (``text/x-diff``); 409 WORKSPACE_DIFF_INCOMPLETE when a bound cut it, unless partial."""
    changes = _recorded(request)
    partial = request.query_params.get("partial") in ("1", "true")
    text = recorded_patch(changes, _side(request), partial=partial)
    return Response(text, media_type="text/x-diff; charset=utf-8")


ROUTES: Final = [
    Route("/api/v1/workspaces", list_workspaces, methods=["GET"]),
    Route("/api/v1/workspaces/{name}", show_workspace, methods=["GET"]),
    Route("/api/v1/runs/{run}/changes", run_changes_page, methods=["GET"]),
    Route("/api/v1/runs/{run}/changes/file", run_file_diff, methods=["GET"]),
    Route("/api/v1/runs/{run}/diff", run_patch, methods=["GET"]),
]
