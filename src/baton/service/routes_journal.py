"""The journal: a run's or a server instance's redacted records, paged by sequence."""

from __future__ import annotations

from itertools import islice
from typing import Final

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from baton.cli.json_output import SCHEMA_VERSION
from baton.cli.store_access import RunNotFound, resolve_run
from baton.errors import RecordNotFound
from baton.service.bodies import query_int
from baton.service.context import service_of
from baton.service.limits import MAX_JOURNAL_PAGE
from baton.service.routes_runs import store_of

#: Records a page holds when the client names no limit.
DEFAULT_JOURNAL_PAGE: Final = 100


async def journal_page(request: Request) -> Response:
    """``GET /api/v1/journal/{target}?after=SEQ&limit=N``: the records (as `baton journal
    show --json` prints them, already redacted) with a sequence above ``after``; ``next`` is
    the ``after`` of the following page, null at the end."""
    service = service_of(request)
    store = store_of(service)
    journal = service.runtime.journal
    assert journal is not None
    target = request.path_params["target"]
    try:
        run = resolve_run(store, target)
    except RunNotFound:
        run = None
    if run is not None:
        if run.server_instance_id is None:
            raise RecordNotFound(f"run {run.id} has not started on a server instance yet")
        server = run.server_instance_id
    elif target in journal.servers():
        server = target
    else:
        raise RecordNotFound(f"no run or server instance {target!r}")
    after = query_int(request, "after", 0, low=0, high=2**62)
    limit = query_int(request, "limit", DEFAULT_JOURNAL_PAGE, low=1, high=MAX_JOURNAL_PAGE)
    wanted = (r for r in journal.records(server) if r.sequence > after)
    page = list(islice(wanted, limit + 1))
    more = len(page) > limit
    page = page[:limit]
    return JSONResponse(
        {
            "serverInstanceId": server,
            "runId": run.id if run is not None else None,
            "records": [{**r.to_dict(), "schemaVersion": SCHEMA_VERSION} for r in page],
            "next": page[-1].sequence if more and page else None,
        }
    )


ROUTES: Final = [Route("/api/v1/journal/{target}", journal_page, methods=["GET"])]
