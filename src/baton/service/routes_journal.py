"""The journal: a run's or a server instance's redacted records, paged by sequence."""

from __future__ import annotations

from itertools import islice
from typing import Final

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from baton.errors import JournalOnOtherHost, RecordNotFound
from baton.service.bodies import query_int
from baton.service.context import service_of
from baton.service.limits import MAX_JOURNAL_PAGE
from baton.service.routes_runs import store_of
from baton.store.owner import current_host, owner_host
from baton.views.contract import SCHEMA_VERSION
from baton.views.run_ids import resolve_run

#: Records a page holds when the client names no limit.
DEFAULT_JOURNAL_PAGE: Final = 100


def _page(request: Request, server: str, run_id: str | None) -> Response:
    journal = service_of(request).runtime.journal
    assert journal is not None
    after = query_int(request, "after", 0, low=0, high=2**62)
    limit = query_int(request, "limit", DEFAULT_JOURNAL_PAGE, low=1, high=MAX_JOURNAL_PAGE)
    wanted = (r for r in journal.records(server) if r.sequence > after)
    page = list(islice(wanted, limit + 1))
    more = len(page) > limit
    page = page[:limit]
    return JSONResponse(
        {
            "serverInstanceId": server,
            "runId": run_id,
            "records": [{**r.to_dict(), "schemaVersion": SCHEMA_VERSION} for r in page],
            "next": page[-1].sequence if more and page else None,
        }
    )


async def run_journal(request: Request) -> Response:
    """``GET /api/v1/runs/{run}/journal?after=SEQ&limit=N``: the records of the run's server
    instance (as `baton journal show --json` prints them, already redacted) with a sequence
    above ``after``; ``next`` is the ``after`` of the following page, null at the end. A run
    another host ran (a shared store) has its journal on that host: JOURNAL_ON_OTHER_HOST
    names it, as `baton journal show` does."""
    service = service_of(request)
    run = resolve_run(store_of(service), request.path_params["run"])
    if run.server_instance_id is None:
        raise RecordNotFound(f"run {run.id} has not started on a server instance yet")
    journal = service.runtime.journal
    host = owner_host(run.owner)
    if (
        journal is not None
        and run.server_instance_id not in journal.servers()
        and host is not None
        and host != current_host()
    ):
        raise JournalOnOtherHost(
            f"run {run.id} ran on host {host}: its journal (server instance "
            f"{run.server_instance_id}) is in that host's data directory"
        )
    return _page(request, run.server_instance_id, run.id)


async def server_journal(request: Request) -> Response:
    """``GET /api/v1/servers/{server}/journal?after=SEQ&limit=N``: one server instance's
    records, paged the same way."""
    journal = service_of(request).runtime.journal
    assert journal is not None
    server = request.path_params["server"]
    if server not in journal.servers():
        raise RecordNotFound(f"no journal of server instance {server!r}")
    return _page(request, server, None)


ROUTES: Final = [
    Route("/api/v1/runs/{run}/journal", run_journal, methods=["GET"]),
    Route("/api/v1/servers/{server}/journal", server_journal, methods=["GET"]),
]
