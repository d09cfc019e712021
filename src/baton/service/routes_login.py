"""Signing a browser in: login codes for the inspector's URL, and the login page's form.

``POST /api/v1/login-codes`` (authenticated, like every API call) answers a fresh login code
and the path that redeems it (``/?token=CODE``): what ``baton inspect`` opens. ``POST /login``
is the login page's form (public, and exempt from the guard's Origin rule: it grants
nothing without the secret, and browsers post it with ``Origin: null``): a pasted API token or login code in the body
(``application/x-www-form-urlencoded``, never in the URL) answers a redirect to ``/`` with a
new session's cookie.
"""

from __future__ import annotations

from typing import Final
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from baton.service.bodies import bounded_body
from baton.service.guard import LOGIN_PAGE_ASSET, session_cookie
from baton.service.routes_inspector import asset_response
from baton.service.tokens import LOGIN_CODE_SECONDS, Credentials

#: The form field of the login page.
TOKEN_FIELD: Final = "token"


def credentials_of(request: Request) -> Credentials:
    """The service's credentials (set by ``build_app``)."""
    credentials: Credentials = request.app.state.credentials
    return credentials


async def login_codes(request: Request) -> Response:
    """``POST /api/v1/login-codes``: ``{code, path, expiresInSeconds}``; the code is good
    once, within ``expiresInSeconds``."""
    code = credentials_of(request).issue_login_code()
    return JSONResponse(
        {"code": code, "path": f"/?token={code}", "expiresInSeconds": LOGIN_CODE_SECONDS},
        status_code=201,
        headers={"cache-control": "no-store"},
    )


async def login_form(request: Request) -> Response:
    """``POST /login``: the API token or a live login code from the form; a redirect to ``/``
    with a new session cookie, else the login page again (401)."""
    pairs = parse_qsl((await bounded_body(request)).decode("utf-8", "replace"))
    given = [value.strip() for name, value in pairs if name == TOKEN_FIELD]
    credentials = credentials_of(request)
    if len(given) != 1 or not (
        credentials.token_matches(given[0]) or credentials.redeem_login_code(given[0])
    ):
        return asset_response(LOGIN_PAGE_ASSET, status=401)
    return Response(
        status_code=303,
        headers={
            "location": "/",
            "set-cookie": session_cookie(credentials.new_session()).decode("ascii"),
            "cache-control": "no-store",
        },
    )


ROUTES: Final = [
    Route("/api/v1/login-codes", login_codes, methods=["POST"]),
    Route("/login", login_form, methods=["POST"]),
]
