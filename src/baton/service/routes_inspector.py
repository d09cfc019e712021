"""The inspector's page: ``/`` and its files under ``/inspector/``, behind the same guard as
the API (docs/inspector.md).

The page is the package data of :mod:`baton.inspector`; every response carries its security
headers (a strict Content-Security-Policy among them). The page talks to the service through
the ``/api/v1`` routes only: nothing here reaches the runtime.
"""

from __future__ import annotations

from typing import Final

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from baton.errors import ApiRouteNotFound
from baton.inspector import ASSET_PREFIX, ENTRY_PAGE, SECURITY_HEADERS, load_asset

#: The page shown to a browser that has no token yet (also ``GET /login``).
LOGIN_ASSET: Final = "login.html"


def asset_response(name: str, status: int = 200) -> Response:
    """The shipped file ``name`` with the security headers; ApiRouteNotFound if there is none."""
    asset = load_asset(name)
    if asset is None:
        raise ApiRouteNotFound("the inspector has no such file")
    return Response(
        asset.body, status_code=status, media_type=asset.content_type, headers=SECURITY_HEADERS
    )


async def entry_page(_request: Request) -> Response:
    """``GET /``: the inspector's single page (its router reads the URL's fragment)."""
    return asset_response(ENTRY_PAGE)


async def page_file(request: Request) -> Response:
    """``GET /inspector/{name}``: one of the page's files (HTML, CSS, JavaScript, icon)."""
    return asset_response(request.path_params["name"])


ROUTES: Final = [
    Route("/", entry_page, methods=["GET"]),
    Route(ASSET_PREFIX + "{name:path}", page_file, methods=["GET"]),
]
