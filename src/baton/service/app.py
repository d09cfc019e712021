"""The Starlette application: every route, behind the guard, with JSON errors.

Any error a route raises answers as ``{"error": {"code", "message", "fault"}}`` with the
status of :mod:`baton.service.statuses`; an unexpected exception is a 500 BATON_BUG whose
message names no internals (the traceback goes to the service's stderr, never to a client).
A client that hangs up mid-body is not an unexpected exception: one line at info level.
"""

from __future__ import annotations

import logging
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response

from baton.errors import (
    ApiMethodNotAllowed,
    ApiRouteNotFound,
    BatonError,
    InternalError,
)
from baton.service import (
    routes_batches,
    routes_elicitations,
    routes_fleet,
    routes_inspector,
    routes_journal,
    routes_login,
    routes_meta,
    routes_permissions,
    routes_readiness,
    routes_recovery,
    routes_runs,
    routes_sessions,
    routes_trajectories,
    routes_workspaces,
)
from baton.service.context import Service
from baton.service.guard import ASGIApp, Guard, HostRule
from baton.service.statuses import error_of
from baton.service.tokens import Credentials

_log = logging.getLogger("baton.service")


def _json_error(exc: BatonError) -> Response:
    status, body = error_of(exc)
    return JSONResponse(body, status_code=status, headers={"cache-control": "no-store"})


async def _baton_error(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, BatonError)
    return _json_error(exc)


async def _http_error(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 405:
        return _json_error(ApiMethodNotAllowed("this path does not take this method"))
    return _json_error(ApiRouteNotFound("no route of the API has this path"))


async def _client_gone(request: Request, _exc: Exception) -> Response:
    """The client hung up before its request's body arrived: not Baton's bug, so no
    BATON_BUG and no traceback; one line at info (the path bounded), and an answer nobody
    reads."""
    _log.info("a client hung up mid-request: %s %s", request.method, request.url.path[:200])
    return Response(status_code=400)


async def _unexpected(_request: Request, exc: Exception) -> Response:
    _log.error("unexpected error in a route", exc_info=exc)
    return _json_error(InternalError("the service failed unexpectedly; its log says why"))


def routes() -> list[Any]:
    """Every route of the API."""
    return [
        *routes_meta.ROUTES,
        *routes_login.ROUTES,
        *routes_readiness.ROUTES,
        *routes_runs.ROUTES,
        *routes_permissions.ROUTES,
        *routes_elicitations.ROUTES,
        *routes_recovery.ROUTES,
        *routes_journal.ROUTES,
        *routes_sessions.ROUTES,
        *routes_fleet.ROUTES,
        *routes_workspaces.ROUTES,
        *routes_batches.ROUTES,
        *routes_trajectories.ROUTES,
        *routes_inspector.ROUTES,
    ]


def build_app(service: Service, *, credentials: Credentials, hosts: HostRule) -> ASGIApp:
    """The guarded application of ``service``."""
    app = Starlette(
        routes=routes(),
        exception_handlers={
            BatonError: _baton_error,
            HTTPException: _http_error,
            ClientDisconnect: _client_gone,
            Exception: _unexpected,
        },
    )
    app.state.service = service
    app.state.credentials = credentials
    guarded: ASGIApp = Guard(app, credentials=credentials, hosts=hosts)
    return guarded
