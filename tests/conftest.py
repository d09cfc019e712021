"""What several test packages share: the run store on either backend.

The store's tests run on SQLite always and on PostgreSQL when ``BATON_TEST_POSTGRES_URL``
names a server (an admin URL: `make test-fleet` starts a throwaway cluster and sets it; see
scripts/pg_cluster.sh). Without it the PostgreSQL parameter is skipped with that reason, so
`make test` needs no database server.

It also puts ``tests/`` on ``sys.path`` (the suite imports modules with
``--import-mode=importlib``, which adds nothing there) so any test can ``import acp_schemas``,
the pinned ACP schemas.

And it validates every outbound message of every in-process
:class:`~baton.connection.Connection` of the suite (Baton's requests, notifications and answers
to the agent) against both pinned stable schemas, and ``systemPrompt`` against the unstable one;
a test fails at teardown when one does not validate. Methods the schemas do not define
(extensions, legacy ``session/set_model``, a connection test's made-up methods) are not
checked. A test that sends off-schema frames on purpose opts out with
``@pytest.mark.off_schema_outbound``.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import jsonschema
import pytest
from hypothesis import settings as hypothesis_settings

from baton.connection.core import Connection
from baton.store import Store

# A session's turn in the suite never starts a `baton serve` in the background (issue 30,
# item 2): every subprocess that inherits this environment works in its own process unless
# its test turns the start on (BATON_AUTOSTART=1) or starts a service itself.
os.environ["BATON_AUTOSTART"] = "0"

_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from acp_schemas import validate_in, validate_stable  # noqa: E402

# Hypothesis's per-example deadline (200 ms by default) is a timing assertion: on a loaded
# machine (the suite runs on two workers beside other work) a first run of an example can
# outlast it and fail as "Flaky". The suite keeps hypothesis's checks but not its clock.
hypothesis_settings.register_profile("baton", deadline=None)
hypothesis_settings.load_profile("baton")

#: The variable naming a PostgreSQL server the tests may create databases on.
POSTGRES_ENV = "BATON_TEST_POSTGRES_URL"
POSTGRES_SKIP = (
    f"no PostgreSQL server for the tests: {POSTGRES_ENV} is unset "
    "(`make test-fleet` starts a throwaway cluster and runs these)"
)


def postgres_admin_url() -> str | None:
    """The admin URL of the test server, or None."""
    return os.environ.get(POSTGRES_ENV) or None


def database_url(admin_url: str, name: str) -> str:
    """``admin_url`` pointing at database ``name``."""
    return urlunsplit(urlsplit(admin_url)._replace(path=f"/{name}"))


def create_database(admin_url: str) -> tuple[str, str]:
    """A new, empty database on the test server: (name, URL)."""
    import psycopg

    name = f"baton_test_{os.urandom(6).hex()}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return name, database_url(admin_url, name)


def drop_database(admin_url: str, name: str) -> None:
    """Drop a database ``create_database`` made (closing its remaining connections)."""
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session", autouse=True)
def _private_cache_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A cache directory of the suite's own (XDG_CACHE_HOME) for everything the tests start
    with their environment: the bundled scripted agent keeps its sessions there by default,
    never in the user's cache."""
    saved = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("cache"))
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("XDG_CACHE_HOME", None)
        else:
            os.environ["XDG_CACHE_HOME"] = saved


@pytest.fixture
def postgres_database() -> Iterator[str]:
    """The URL of a fresh PostgreSQL database, dropped afterwards (skips without a server)."""
    admin = postgres_admin_url()
    if admin is None:
        pytest.skip(POSTGRES_SKIP)
    name, url = create_database(admin)
    try:
        yield url
    finally:
        drop_database(admin, name)


@pytest.fixture(scope="session")
def _shared_postgres_database() -> Iterator[str | None]:
    admin = postgres_admin_url()
    if admin is None:
        yield None
        return
    name, url = create_database(admin)
    try:
        yield url
    finally:
        drop_database(admin, name)


@dataclass
class StoreTarget:
    """Where a test's store lives: a data directory's SQLite file or a PostgreSQL database
    (emptied before the test). ``open`` takes :meth:`Store.open`'s keyword arguments."""

    backend: str
    data: Path
    url: str | None = None
    opened: list[Store] = field(default_factory=list)

    def open(self, **kwargs: Any) -> Store:
        """A new store on this target."""
        store = (
            Store.open(self.data, **kwargs)
            if self.url is None
            else Store(self.url, **kwargs)  # the URL selects the PostgreSQL backend
        )
        self.opened.append(store)
        return store

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        """Rows of ``sql`` read over a connection of its own (what another process sees)."""
        if self.url is None:
            conn = sqlite3.connect(self.data / "baton.sqlite3")
            try:
                return conn.execute(sql).fetchall()
            finally:
                conn.close()
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as pg:
            return pg.execute(sql).fetchall()  # type: ignore[arg-type]

    def integrity_errors(self) -> tuple[type[Exception], ...]:
        """The driver's integrity error (a foreign key, a duplicate id): a caller's bug,
        raised as the driver raises it on both backends."""
        if self.url is None:
            return (sqlite3.IntegrityError,)
        import psycopg

        return (psycopg.IntegrityError,)


def _empty_postgres(url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        tables = [
            row[0]
            for row in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' "
                "AND tablename <> 'baton_schema_version'"
            )
        ]
        if tables:
            conn.execute(f"TRUNCATE {', '.join(tables)} RESTART IDENTITY CASCADE")  # type: ignore[arg-type]


@pytest.fixture(params=["sqlite", "postgresql"])
def store_target(
    request: pytest.FixtureRequest, tmp_path: Path, _shared_postgres_database: str | None
) -> Iterator[StoreTarget]:
    """The store's backends, each test once per backend (PostgreSQL skipped without one)."""
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    url: str | None = None
    if request.param == "postgresql":
        if _shared_postgres_database is None:
            pytest.skip(POSTGRES_SKIP)
        url = _shared_postgres_database
        Store(url).close()  # migrated once
        _empty_postgres(url)
    target = StoreTarget(request.param, data, url)
    try:
        yield target
    finally:
        for store in target.opened:
            store.close()


# --- every outbound message validated against the pinned schemas (issue 20) -----------------

#: The definition each client-to-agent method's params must satisfy.
REQUEST_PARAMS: dict[str, str] = {
    "initialize": "InitializeRequest",
    "authenticate": "AuthenticateRequest",
    "logout": "LogoutRequest",
    "session/new": "NewSessionRequest",
    "session/load": "LoadSessionRequest",
    "session/resume": "ResumeSessionRequest",
    "session/list": "ListSessionsRequest",
    "session/close": "CloseSessionRequest",
    "session/delete": "DeleteSessionRequest",
    "session/set_mode": "SetSessionModeRequest",
    "session/set_config_option": "SetSessionConfigOptionRequest",
    "session/prompt": "PromptRequest",
}
NOTIFICATION_PARAMS: dict[str, str] = {
    "session/cancel": "CancelNotification",
    "$/cancel_request": "CancelRequestNotification",
}
#: The definition of Baton's answer to each agent-to-client request it serves.
ANSWER_RESULTS: dict[str, str] = {
    "session/request_permission": "RequestPermissionResponse",
    "elicitation/create": "CreateElicitationResponse",
}
_SERVE_PREFIX = "baton-serve-"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "off_schema_outbound: the test sends off-schema frames to the agent on purpose"
    )


def _answered_method(connection: Connection[Any], request_id: object) -> str | None:
    task = getattr(connection, "_serving", {}).get(request_id)
    name = task.get_name() if task is not None else ""
    return name[len(_SERVE_PREFIX) :] if name.startswith(_SERVE_PREFIX) else None


def _check(connection: Connection[Any], message: dict[str, Any]) -> None:
    method = message.get("method")
    params = message.get("params")
    if isinstance(method, str):
        table = REQUEST_PARAMS if "id" in message else NOTIFICATION_PARAMS
        definition = table.get(method)
        if definition is None:
            return
        validate_stable(definition, params)
        validate_stable("ClientRequest" if "id" in message else "ClientNotification", message)
        if isinstance(params, dict) and "systemPrompt" in params:
            validate_in("unstable", definition, params)
        return
    if "result" in message:
        answered = _answered_method(connection, message.get("id"))
        definition = ANSWER_RESULTS.get(answered or "")
        if definition is not None:
            validate_stable(definition, message["result"])
    elif "error" in message:
        validate_stable("ClientResponse", message)


@pytest.fixture(autouse=True)
def outbound_schema_check(request: pytest.FixtureRequest) -> Iterator[list[str]]:
    """Validate every outbound message (see the module docstring); fail at teardown."""
    if request.node.get_closest_marker("off_schema_outbound") is not None:
        yield []
        return
    errors: list[str] = []
    original = Connection._write

    async def checked(self: Connection[Any], message: dict[str, Any], data: bytes) -> Any:
        try:
            _check(self, message)
        except jsonschema.ValidationError as exc:
            errors.append(f"{message.get('method') or 'answer'}: {exc.message}")
        return await original(self, message, data)

    Connection._write = checked  # type: ignore[method-assign]
    try:
        yield errors
    finally:
        Connection._write = original  # type: ignore[method-assign]
    assert not errors, errors
