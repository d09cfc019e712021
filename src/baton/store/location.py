"""Which run store Baton uses: the SQLite file in the data directory (the default), or a
shared PostgreSQL database named by a URL.

Resolution, first match wins: the ``--store URL`` flag, the ``BATON_STORE`` variable, the
config file's ``[store] url`` (passed in by the caller, which owns the config file), else the
data directory's ``baton.sqlite3``. An empty value counts as unset. Only ``postgresql://``
(or ``postgres://``) URLs are accepted; anything else is STORE_URL_INVALID, so a typo never
silently falls back to a local store.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal
from urllib.parse import unquote, urlsplit, urlunsplit

from baton.errors import StoreUrlInvalid

#: The variable naming the store's URL (after the ``--store`` flag, before the config file).
STORE_ENV: Final = "BATON_STORE"
#: Longest store URL accepted (a URL with options is a few hundred characters).
MAX_STORE_URL_CHARS: Final = 4096
#: Most characters of a parser's reason (and of a wrong scheme) a STORE_URL_INVALID message
#: quotes: the message is one line, whatever the URL holds.
MAX_REASON_SHOWN_CHARS: Final = 120
MAX_SCHEME_SHOWN_CHARS: Final = 32

StoreSource = Literal["flag", "env", "config", "data-dir"]


def is_postgres_url(text: str) -> bool:
    """True when ``text`` names a PostgreSQL store (``postgresql://`` or ``postgres://``)."""
    return text.startswith(("postgresql://", "postgres://"))


def display_url(url: str) -> str:
    """``url`` without its password, for messages and listings."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{host}"))


@dataclass(frozen=True, slots=True)
class StoreLocation:
    """The chosen store: ``url`` for PostgreSQL, None for the data directory's SQLite file."""

    url: str | None
    source: StoreSource

    @property
    def shared(self) -> bool:
        """True for a PostgreSQL store (shared by hosts)."""
        return self.url is not None

    def describe(self) -> str:
        """The store for a message: the URL without its password, or "the data directory"."""
        return display_url(self.url) if self.url is not None else "the data directory"


def resolve_store(
    flag: str | None = None,
    environ: Mapping[str, str] | None = None,
    config_url: str | None = None,
) -> StoreLocation:
    """The store to open (see the module docstring for the order)."""
    env: Mapping[str, str] = {} if environ is None else environ
    for value, source in ((flag, "flag"), (env.get(STORE_ENV), "env"), (config_url, "config")):
        if value:
            return StoreLocation(check_store_url(value, source), source)  # type: ignore[arg-type]
    return StoreLocation(None, "data-dir")


def check_store_url(value: str, source: str = "flag") -> str:
    """``value`` if it is a bounded PostgreSQL URL, else StoreUrlInvalid (echoing no
    password)."""
    origin = {"flag": "--store", "env": STORE_ENV, "config": "the config file's [store] url"}
    where = origin.get(source, source)
    if len(value) > MAX_STORE_URL_CHARS:
        raise StoreUrlInvalid(f"{where}: the URL is longer than {MAX_STORE_URL_CHARS} characters")
    if not is_postgres_url(value):
        shown = (
            value.split("://", 1)[0][:MAX_SCHEME_SHOWN_CHARS] + "://…"
            if "://" in value
            else "a path"
        )
        raise StoreUrlInvalid(
            f"{where}: {shown} is not a store URL; only postgresql://USER@HOST/DB is accepted "
            "(leave it unset for the data directory's SQLite store)"
        )
    reason = _malformed(value)
    if reason is not None:
        raise StoreUrlInvalid(
            f"{where}: the PostgreSQL URL is malformed ({_scrubbed(reason, value)}); the form "
            "is postgresql://USER@HOST[:PORT]/DB[?PARAM=VALUE...] (a password after USER:)"
        )
    return value


def _malformed(value: str) -> str | None:
    """Why ``value`` cannot be parsed as a PostgreSQL URL (by ``urllib`` and, when installed,
    by libpq's own parser through psycopg), or None when it can. A raw space or control
    character is refused here whatever libpq accepts (older libpq builds, such as the one in
    psycopg-binary 3.2.1, take ``u:pw x@ho st``; a URI never holds one unencoded)."""
    if any(char.isspace() or ord(char) < 0x20 or ord(char) == 0x7F for char in value):
        return "a space or control character (percent-encode it)"
    try:
        parts = urlsplit(value)
        _ = (parts.hostname, parts.port, parts.username, parts.password)
    except ValueError as exc:
        return str(exc)
    try:
        from psycopg import Error as PsycopgError
        from psycopg.conninfo import conninfo_to_dict
    except ImportError:  # the postgres extra is not installed: the open reports it
        return None
    try:
        conninfo_to_dict(value)
    except PsycopgError as exc:
        return str(exc)
    return None


def _scrubbed(reason: str, url: str) -> str:
    """``reason`` bounded, with anything that may be the URL's password masked."""
    netloc = url.split("://", 1)[-1].split("/", 1)[0]
    userinfo = netloc.rsplit("@", 1)[0] if "@" in netloc else ""
    password = userinfo.partition(":")[2]
    text = reason.strip().splitlines()[0] if reason.strip() else "unparseable"
    for secret in {password, unquote(password)} - {""}:
        text = text.replace(secret, "***")
    if len(text) > MAX_REASON_SHOWN_CHARS:
        text = text[:MAX_REASON_SHOWN_CHARS] + "…"
    return text
