"""The inspector's static files as package data, and the headers they are served with.

The files live in ``baton/inspector/static/`` and travel in the wheel as package data
(pyproject.toml). A name is served only if it is one of those files: :func:`load_asset` never
joins a caller's string onto a directory, so ``..``, absolute paths, encoded separators and
anything not shipped simply do not exist. Every response carries :data:`SECURITY_HEADERS`, whose
Content-Security-Policy allows scripts, styles and connections to the page's own origin only
(no inline script, no ``eval``, no CDN) and turns on Trusted Types, so an HTML sink such as
``innerHTML`` throws instead of parsing agent text.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Final

#: The document the service answers ``/`` (and every page of the single-page router) with.
ENTRY_PAGE: Final = "index.html"

#: Content types by file suffix; a shipped file with another suffix is never served.
CONTENT_TYPES: Final[dict[str, str]] = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
}

#: What a served name may look like: lower-case path segments and a known suffix. Names come
#: from URLs; this is checked before the table lookup so a hostile name costs one regex.
ASSET_NAME: Final = re.compile(r"[a-z0-9_-]+(?:/[a-z0-9_-]+)*\.[a-z]+")

#: The URL path the service serves the files under (``/inspector/js/main.js``); the entry page
#: itself is answered at ``/``.
ASSET_PREFIX: Final = "/inspector/"

#: A page's reference to a shipped file: ``href``/``src`` attributes under ASSET_PREFIX.
_PAGE_REFERENCE: Final = re.compile(r'(?:href|src)="/inspector/([^"]+)"')

#: A module's relative import: ``from "./x.js"``, ``import "./x.js"``, ``import("../x.js")``.
_MODULE_REFERENCE: Final = re.compile(r'(?:\bfrom|\bimport)\s*\(?\s*"(\.{1,2}/[^"]+)"')

#: Bounds the length of a name looked up, so a hostile URL costs nothing before the lookup.
MAX_ASSET_NAME_CHARS: Final = 128

#: The one policy of every inspector response. ``'self'`` everywhere it is needed and
#: ``'none'`` elsewhere: no inline script or style, no eval, no plugin, no frame, no foreign
#: connection. ``require-trusted-types-for 'script'`` makes every HTML-string sink throw (the
#: page builds its DOM with ``textContent`` only; docs/inspector.md, "Untrusted text").
CONTENT_SECURITY_POLICY: Final = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self'",
        "connect-src 'self'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
        "require-trusted-types-for 'script'",
        "trusted-types 'none'",
    )
)

#: Headers of every inspector response, the page's files and its API calls alike.
SECURITY_HEADERS: Final[dict[str, str]] = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    # The files change with the installed version; the page is small enough to revalidate.
    "Cache-Control": "no-cache",
}


@dataclass(frozen=True, slots=True)
class InspectorAsset:
    """One static file of the page: its name under ``static/``, its bytes and content type."""

    name: str
    body: bytes
    content_type: str


def _static_root() -> Traversable:
    return resources.files(__package__ or "baton.inspector").joinpath("static")


def _walk(node: Traversable, prefix: str) -> list[tuple[str, Traversable]]:
    found: list[tuple[str, Traversable]] = []
    for child in node.iterdir():
        name = f"{prefix}{child.name}"
        if child.is_dir():
            found.extend(_walk(child, f"{name}/"))
        elif child.is_file():
            found.append((name, child))
    return found


@cache
def _table() -> dict[str, InspectorAsset]:
    """Every servable file, read once: the page is a few dozen kilobytes."""
    table: dict[str, InspectorAsset] = {}
    for name, node in _walk(_static_root(), ""):
        suffix = name[name.rfind(".") :] if "." in name else ""
        content_type = CONTENT_TYPES.get(suffix)
        if content_type is None or ASSET_NAME.fullmatch(name) is None:
            continue
        table[name] = InspectorAsset(name, node.read_bytes(), content_type)
    return table


def asset_names() -> tuple[str, ...]:
    """The names of every servable file, sorted (``index.html``, ``js/app.js``, ...)."""
    return tuple(sorted(_table()))


def load_asset(name: str) -> InspectorAsset | None:
    """The shipped file called ``name`` (relative to ``static/``, no leading slash), or None
    when there is no such file. Never touches the file system for a name it was not built
    with, whatever the name holds."""
    if len(name) > MAX_ASSET_NAME_CHARS or ASSET_NAME.fullmatch(name) is None:
        return None
    return _table().get(name)


def references(asset: InspectorAsset) -> list[str]:
    """The shipped names ``asset`` refers to: the files a page links, the modules a module
    imports (relative specifiers resolved against the module's own directory)."""
    text = asset.body.decode("utf-8")
    if asset.name.endswith(".html"):
        return _PAGE_REFERENCE.findall(text)
    if asset.name.endswith(".js"):
        base = posixpath.dirname(asset.name)
        return [
            posixpath.normpath(posixpath.join(base, spec))
            for spec in _MODULE_REFERENCE.findall(text)
        ]
    return []


def missing_references() -> list[str]:
    """Every reference, from the entry page down through every module it loads, to a file
    that is not shipped (``"js/main.js -> js/gone.js"``); empty when the page is whole. The
    wheel smoke test runs this against the installed wheel."""
    missing: list[str] = []
    seen: set[str] = set()
    pending = [ENTRY_PAGE]
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        asset = load_asset(name)
        if asset is None:
            missing.append(name)
            continue
        for target in references(asset):
            if load_asset(target) is None:
                missing.append(f"{name} -> {target}")
            else:
                pending.append(target)
    return missing
