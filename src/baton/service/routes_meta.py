"""The service itself: its description, the login page and the OpenAPI document."""

from __future__ import annotations

from typing import Final

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from baton._version import __version__
from baton.service.context import service_of
from baton.service.guard import LOGIN_PAGE_ASSET
from baton.service.openapi import openapi_document
from baton.service.routes_inspector import asset_response
from baton.store.owner import current_host
from baton.views.contract import SCHEMA_VERSION


async def describe(request: Request) -> Response:
    """``GET /api/v1``: what this service is."""
    service = service_of(request)
    return JSONResponse(
        {
            "service": "baton",
            "version": __version__,
            "apiVersion": 1,
            "schemaVersion": SCHEMA_VERSION,
            "pid": service.pid,
            "startedAt": service.started_at,
            "dataDir": str(service.data_dir),
            # The run store: the data directory's, or a shared one (URL without password).
            "store": service.runtime.store_location.describe(),
            "sharedStore": service.runtime.store_location.shared,
            "host": current_host(),
            "policy": service.settings.policy,
            "stopping": service.launcher.stopping,
            "activeRuns": sorted(service.launcher.tasks),
        }
    )


async def login(_request: Request) -> Response:
    """``GET /login``: how to authenticate (public): the inspector's login page, which holds
    nothing and offers to exchange a pasted token for the session cookie."""
    return asset_response(LOGIN_PAGE_ASSET)


async def openapi(_request: Request) -> Response:
    """``GET /api/v1/openapi.json``: the OpenAPI 3.1 document of this API."""
    return JSONResponse(openapi_document())


ROUTES: Final = [
    Route("/api/v1", describe, methods=["GET"]),
    Route("/login", login, methods=["GET"]),
    Route("/api/v1/openapi.json", openapi, methods=["GET"]),
]
