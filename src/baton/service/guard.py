"""The ASGI middleware in front of every route: the checks every request passes, in order.

1. **Host** (DNS rebinding): the ``Host`` header must be the bound loopback name and port
   (``127.0.0.1:PORT`` or ``[::1]:PORT``, and ``localhost:PORT``); else 421
   API_HOST_REFUSED.
2. **Login-code exchange** (the Jupyter convention, with a code instead of the token): a
   ``GET`` whose query has ``token=`` is answered, when it holds a live login code
   (single-use, short-lived: :mod:`baton.service.tokens`), with a redirect to the same path
   without it and an HttpOnly, SameSite=Strict cookie of a new session; the code leaves the
   address bar and the history, and is used up. The API token itself is never accepted in a
   URL. The redirect is always a path of this service (:func:`local_location`): a request
   path such as ``//evil.test/`` or ``/\\evil.test`` never becomes an open redirect.
3. **Authentication**: ``Authorization: Bearer TOKEN`` or the cookie, compared in constant
   time; else 401 API_UNAUTHORIZED under ``/api/``, and 401 with the inspector's login page
   for a page (a browser without its token). Only :data:`PUBLIC_PATHS` (the login page) skip
   it.
4. **Origin** (cross-site requests): a state-changing request (anything but GET and HEAD)
   needs an ``Origin`` equal to the service's own, or no ``Origin`` with a bearer token; a
   cookie alone is never enough without a matching Origin. Else 403 API_ORIGIN_REFUSED. The
   login form (``POST /login``) is exempt: it grants nothing without the token or a live
   login code in its body (and a browser posts it with ``Origin: null``, the page being
   ``no-referrer``).
5. **Body size**: a declared ``Content-Length`` over :data:`~baton.service.limits.MAX_BODY_BYTES`
   is refused at once (413 API_BODY_TOO_LARGE); routes count streamed bodies too.

No CORS header is ever sent, so browsers keep every other site's script out. Every answer a
route gives carries the inspector's security headers (a strict Content-Security-Policy,
nosniff, no framing, no referrer).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any, Final
from urllib.parse import parse_qsl, quote, urlencode

import orjson

from baton.errors import (
    ApiBodyTooLarge,
    ApiHostRefused,
    ApiOriginRefused,
    ApiUnauthorized,
    BatonError,
)
from baton.inspector import SECURITY_HEADERS, load_asset
from baton.service.limits import MAX_BODY_BYTES
from baton.service.statuses import error_of
from baton.service.tokens import COOKIE_NAME, Credentials

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Paths served without a token: the login page (it says how to get in, and holds nothing),
#: and the stylesheet and icon it shows with (static package files, nothing of the user's).
PUBLIC_PATHS: Final = frozenset({"/login", "/inspector/inspector.css", "/inspector/favicon.svg"})
#: The inspector's file shown to a browser without a token (and at ``/login``).
LOGIN_PAGE_ASSET: Final = "login.html"
#: Methods that change nothing (the Origin rule applies to every other method).
SAFE_METHODS: Final = frozenset({"GET", "HEAD"})
#: Paths under this prefix are the API: an unauthenticated request there gets the JSON error,
#: anywhere else (the inspector's pages) the login page.
API_PREFIX: Final = "/api/"
#: The key of the ASGI scope where the guard notes how the request authenticated.
AUTH_SCOPE_KEY: Final = "baton.auth"
#: The header (lower case) carrying the launch key of the runtime file (the user's own CLI).
LAUNCH_KEY_HEADER: Final = "x-baton-launch-key"
#: The key of the ASGI scope where the guard notes that the request presented the launch key.
LAUNCH_SCOPE_KEY: Final = "baton.launch"
#: Characters a redirect's path keeps as they are; anything else (a backslash, a control
#: character, a space, non-ASCII) is percent-encoded, so a Location header holds one
#: unambiguous path of this service.
_PATH_SAFE: Final = "/-._~!$&'()*+,;=:@%"


def local_location(path: str, query: str = "") -> str:
    """A redirect target that can only be a path of this service: ``path`` percent-encoded
    (a backslash included, which browsers read as a slash) with its leading slashes
    collapsed to one, so ``//evil.test/`` becomes ``/evil.test/`` and never a scheme-relative
    URL; then ``?query`` when there is one."""
    encoded = quote(path, safe=_PATH_SAFE)
    location = "/" + encoded.lstrip("/")
    return location + (f"?{query}" if query else "")


def session_cookie(value: str) -> bytes:
    """The ``Set-Cookie`` value of a session: HttpOnly, SameSite=Strict, for every path."""
    return f"{COOKIE_NAME}={value}; HttpOnly; SameSite=Strict; Path=/".encode()


class HostRule:
    """The Host names the service answers to: its loopback address and ``localhost``, with
    the bound port (set once the socket is bound; port 0 picks one)."""

    def __init__(self, host: str, port: int) -> None:
        self.host = host
        self.port = port

    @property
    def names(self) -> frozenset[str]:
        """The accepted ``Host`` header values."""
        literal = f"[{self.host}]" if ":" in self.host else self.host
        return frozenset({f"{literal}:{self.port}", f"localhost:{self.port}"})

    @property
    def origins(self) -> frozenset[str]:
        """The accepted ``Origin`` values (the service's own pages)."""
        return frozenset(f"http://{name}" for name in self.names)


def _headers(scope: Scope) -> dict[str, str]:
    found: dict[str, str] = {}
    for raw_name, raw_value in scope.get("headers", []):
        name = raw_name.decode("latin-1").lower()
        if name in found:
            # A repeated Host, Authorization or Origin is ambiguous: keep a value no rule
            # accepts.
            found[name] = "\x00repeated"
            continue
        found[name] = raw_value.decode("latin-1")
    return found


async def send_error(
    send: Send, exc: BatonError, extra: tuple[tuple[bytes, bytes], ...] = ()
) -> None:
    """Answer with ``exc``'s status and JSON error body."""
    status, body = error_of(exc)
    data = orjson.dumps(body)
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(data)).encode()),
                (b"cache-control", b"no-store"),
                *extra,
            ],
        }
    )
    await send({"type": "http.response.body", "body": data})


async def send_login_page(send: Send) -> None:
    """Answer 401 with the inspector's login page (which holds nothing and says how to get
    in), with the page's security headers."""
    asset = load_asset(LOGIN_PAGE_ASSET)
    body = asset.body if asset is not None else b"a token is required"
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"text/html; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", b'Bearer realm="baton"'),
                *(
                    (k.lower().encode(), v.encode())
                    for k, v in SECURITY_HEADERS.items()
                    if k.lower() != "cache-control"
                ),
                (b"cache-control", b"no-store"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _with_security_headers(send: Send) -> Send:
    """``send`` adding the inspector's security headers (a strict CSP, nosniff, no framing,
    no referrer) to every answer that does not set them itself."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers", []))
            present = {name.lower() for name, _ in headers}
            for name, value in SECURITY_HEADERS.items():
                key = name.lower().encode("latin-1")
                if key not in present:
                    headers.append((key, value.encode("latin-1")))
            message = {**message, "headers": headers}
        await send(message)

    return sending


class Guard:
    """The ASGI middleware; see the module docstring for the rules and their order."""

    def __init__(self, app: ASGIApp, *, credentials: Credentials, hosts: HostRule) -> None:
        self.app = app
        self.credentials = credentials
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        if headers.get("host") not in self.hosts.names:
            await send_error(send, ApiHostRefused("the Host header is not this service's"))
            return
        method = scope["method"]
        query = scope.get("query_string", b"").decode("latin-1")
        pairs = parse_qsl(query, keep_blank_values=True)
        if method == "GET" and any(name == "token" for name, _ in pairs):
            await self._exchange(scope, send, pairs)
            return
        path = scope["path"]
        how = self._authenticated(headers)
        if how is None and path not in PUBLIC_PATHS:
            if method in SAFE_METHODS and not path.startswith(API_PREFIX):
                # A browser opening a page without its token: show it how to sign in.
                await send_login_page(send)
                return
            await send_error(
                send,
                ApiUnauthorized("a token is required: Authorization: Bearer TOKEN"),
                ((b"www-authenticate", b'Bearer realm="baton"'),),
            )
            return
        if method not in SAFE_METHODS and path not in PUBLIC_PATHS:
            # The login form is exempt: it changes nothing without the secret in its body,
            # and the page's no-referrer policy makes a browser send ``Origin: null`` there.
            origin = headers.get("origin")
            if origin is None and how != "bearer":
                await send_error(
                    send, ApiOriginRefused("a state-changing request needs a matching Origin")
                )
                return
            if origin is not None and origin not in self.hosts.origins:
                await send_error(send, ApiOriginRefused("the request's Origin is not this service"))
                return
        length = headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > MAX_BODY_BYTES):
            await send_error(
                send, ApiBodyTooLarge(f"request bodies are at most {MAX_BODY_BYTES} bytes")
            )
            return
        scope[AUTH_SCOPE_KEY] = how
        presented = headers.get(LAUNCH_KEY_HEADER)
        scope[LAUNCH_SCOPE_KEY] = (
            how == "bearer"
            and presented is not None
            and self.credentials.launch_key_matches(presented)
        )
        await self.app(scope, receive, _with_security_headers(send))

    def _authenticated(self, headers: dict[str, str]) -> str | None:
        authorization = headers.get("authorization")
        if authorization is not None:
            scheme, _, value = authorization.partition(" ")
            if scheme.lower() == "bearer" and self.credentials.token_matches(value.strip()):
                return "bearer"
            return None
        cookie_header = headers.get("cookie")
        if cookie_header:
            cookies: SimpleCookie = SimpleCookie()
            try:
                cookies.load(cookie_header)
            except Exception:  # http.cookies raises CookieError on a malformed header
                return None
            morsel = cookies.get(COOKIE_NAME)
            if morsel is not None and self.credentials.session_matches(morsel.value):
                return "cookie"
        return None

    async def _exchange(self, scope: Scope, send: Send, pairs: list[tuple[str, str]]) -> None:
        given = [value for name, value in pairs if name == "token"]
        if len(given) != 1 or not self.credentials.redeem_login_code(given[0]):
            await send_error(
                send,
                ApiUnauthorized(
                    "the login code in the URL is not live (each is good once, for a few "
                    "minutes): run `baton inspect` for a new one"
                ),
            )
            return
        rest = urlencode([(name, value) for name, value in pairs if name != "token"])
        location = local_location(scope["path"], rest)
        await send(
            {
                "type": "http.response.start",
                "status": 303,
                "headers": [
                    (b"location", location.encode("ascii")),
                    (b"set-cookie", session_cookie(self.credentials.new_session())),
                    (b"cache-control", b"no-store"),
                    (b"content-length", b"0"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": b""})
