"""The run store on PostgreSQL (psycopg 3): the connection the store's modules talk to, its
migrations, and the translation of PostgreSQL's failures into stable storage codes.

Selected by a ``postgresql://`` URL (see :mod:`baton.store.location`); the SQLite store stays
the default and never imports psycopg. :class:`PostgresConnection` offers what the store's
modules use of a ``sqlite3.Connection`` (``execute``, ``executemany``, ``in_transaction``,
``close``), rendering each statement through :mod:`baton.store.dialect`.

Compare-and-set without a global lock. Writers run concurrently; a write that reads a row's
state, checks it and writes locks that row first (``SELECT ... FOR NO KEY UPDATE``: a run's
row for every write of that run, :meth:`baton.store.database.StoreDatabase._fence`), and the
status write checks the status and the claim's token again in its own ``UPDATE ... WHERE``.
A record created under a name someone may be creating at once (a session name, an
idempotency key) takes a transaction-scoped advisory lock on that name. Only migrations hold
one lock for the whole store (:data:`MIGRATION_LOCK_KEY`). Reads need no lock (each sees
committed data).

Connection loss. A failure to reach the server (a restart, a network cut) is
:class:`~baton.errors.StoreUnavailable`; the next call reconnects. A write whose COMMIT was
cut off has an unknown outcome: callers that cannot tell treat it as ambiguous, never retry it
blindly (the turn's output append does exactly that).

Threads. Each thread that calls the store has its own psycopg connection (opened on its
first call), so the store's async writes can run on worker threads
(:meth:`baton.store.database.StoreDatabase.offload`) while the event loop's thread goes on
reading; each connection keeps its own transaction and its own reconnect window.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Final, TypeVar

from baton.errors import (
    StorageError,
    StorageFull,
    StorageReadOnly,
    StoreSchemaTooNew,
    StoreUnavailable,
    UsageError,
)
from baton.store.dialect import postgres_ddl, postgres_query
from baton.store.location import display_url, is_postgres_url
from baton.store.migrations import MIGRATIONS, Migration

try:
    import psycopg
    from psycopg import errors as pg_errors
    from psycopg.pq import TransactionStatus
except ImportError:  # pragma: no cover - exercised only without the fleet extra
    psycopg = None  # type: ignore[assignment]

_T = TypeVar("_T")

#: The advisory lock a migration holds (the ASCII of "baton-st"): two processes opening a
#: store together migrate it once. Ordinary writes never take it (module docstring).
MIGRATION_LOCK_KEY: Final = 0x6261746F6E2D7374
#: How long connecting may take before it fails as STORE_UNAVAILABLE (seconds).
CONNECT_TIMEOUT_SECONDS: Final = 10
#: How long one statement may wait for a lock or run before the server cancels it
#: (milliseconds), like SQLite's busy timeout: a stuck writer elsewhere fails this call
#: instead of hanging the event loop.
STATEMENT_TIMEOUT_MS: Final = 30_000
#: How long the server keeps a transaction open while its client sends nothing (milliseconds):
#: a client cut off from the server (a network partition, a paused process) in the middle of
#: a write transaction would otherwise hold the rows it locked (a run's row) until the cut
#: heals, and no other worker could settle that run meanwhile. A live client sends its next
#: statement within milliseconds.
IDLE_IN_TRANSACTION_TIMEOUT_MS: Final = 10_000
#: How long a call outside a transaction keeps trying to reconnect to a server that went away
#: (a restart, a failover) before it fails as STORE_UNAVAILABLE (seconds), and the pause
#: between two tries. Only a read or the start of a write is retried this way: nothing of it
#: can have taken effect. The wait blocks the caller's thread (the store is synchronous), so
#: the window is one per outage, not one per call: once a connection has been down for the
#: window, each call tries to connect once and fails at once, and an event loop that makes
#: many calls is held up for one window, not one window per call (callers that must outlast
#: a longer outage wait without blocking: :mod:`baton.store.outage`).
RECONNECT_WINDOW_SECONDS: Final = 5.0
RECONNECT_PAUSE_SECONDS: Final = 0.5
#: How long one attempt to reconnect may take (seconds; libpq's smallest), shorter than a
#: first connection's: a server shutting down can leave a connection attempt unanswered, and
#: the attempt blocks the caller's event loop. A loop blocked that way also stalls its own
#: asynchronous connections halfway through their handshake, which a shutting-down server
#: waits for (up to its authentication_timeout): long blocking attempts made one restart last
#: 50 s instead of one.
RECONNECT_CONNECT_TIMEOUT_SECONDS: Final = 2
#: Once the outage's window is over, the least time between the end of one attempt to
#: reconnect and the start of the next (seconds); calls in between fail at once. Bounds the
#: share of the event loop an outage takes from a process that calls the store often.
RECONNECT_SPACING_SECONDS: Final = 2.0
#: The table holding the schema version (SQLite keeps it in ``PRAGMA user_version``).
VERSION_TABLE: Final = "baton_schema_version"

_MISSING_DRIVER = (
    "a postgresql:// store needs psycopg 3: install Baton with its fleet extra "
    "(pip install 'baton-acp[fleet]')"
)


class PostgresConnection:
    """One psycopg connection in autocommit mode, speaking the store's SQLite-dialect SQL."""

    def __init__(self, url: str, *, read_only: bool = False) -> None:
        if psycopg is None:  # pragma: no cover - exercised only without the fleet extra
            raise UsageError(_MISSING_DRIVER)
        if not is_postgres_url(url):
            raise UsageError(f"{display_url(url)} is not a postgresql:// URL")
        self.url = url
        self.display = display_url(url)
        self.read_only = read_only
        self._local = _ThreadState()
        self._all: list[psycopg.Connection[Any]] = []
        self._all_lock = threading.Lock()
        self._closed = False
        self._set_conn(self._connect(CONNECT_TIMEOUT_SECONDS))
        #: psycopg's integrity error, raised as it is (see StoreDatabase.integrity_errors).
        self.integrity_errors: tuple[type[Exception], ...] = (psycopg.IntegrityError,)

    # This thread's connection and its state (module docstring, "Threads").
    @property
    def _tx_open(self) -> bool:
        return self._local.tx_open

    @_tx_open.setter
    def _tx_open(self, value: bool) -> None:
        self._local.tx_open = value

    @property
    def _down_since(self) -> float | None:
        return self._local.down_since

    @_down_since.setter
    def _down_since(self, value: float | None) -> None:
        self._local.down_since = value

    @property
    def _tried_at(self) -> float | None:
        return self._local.tried_at

    @_tried_at.setter
    def _tried_at(self, value: float | None) -> None:
        self._local.tried_at = value

    @property
    def _conn(self) -> psycopg.Connection[Any]:
        conn = self._local.conn
        if conn is None:
            if self._closed:
                raise StoreUnavailable(f"{self.display}: the store was closed")
            conn = self._connect(CONNECT_TIMEOUT_SECONDS)
            self._set_conn(conn)
        return conn

    @_conn.setter
    def _conn(self, conn: psycopg.Connection[Any]) -> None:
        self._set_conn(conn)

    def _set_conn(self, conn: psycopg.Connection[Any]) -> None:
        old = self._local.conn
        self._local.conn = conn
        with self._all_lock:
            if old is not None and old in self._all:
                self._all.remove(old)
            self._all.append(conn)

    def _connect(self, timeout: int) -> psycopg.Connection[Any]:
        options = (
            f"-c statement_timeout={STATEMENT_TIMEOUT_MS} "
            f"-c idle_in_transaction_session_timeout={IDLE_IN_TRANSACTION_TIMEOUT_MS}"
        )
        if self.read_only:
            options += " -c default_transaction_read_only=on"
        with self.errors():
            return psycopg.connect(
                self.url,
                autocommit=True,
                connect_timeout=timeout,
                options=options,
            )

    @contextmanager
    def errors(self) -> Iterator[None]:
        """Raise psycopg's failures inside the block as stable storage errors (integrity and
        programming errors are bugs and stay as they are)."""
        try:
            yield
        except psycopg.Error as exc:
            classified = classify_postgres_error(exc, self.display)
            if classified is None:
                raise
            raise classified from exc

    def _live(self) -> psycopg.Connection[Any]:
        if self._conn.closed or self._conn.broken:
            if self._tx_open:
                raise StoreUnavailable(
                    f"{self.display}: the connection was lost inside a transaction"
                )
            now = time.monotonic()
            if (
                self._down_since is not None
                and now - self._down_since >= RECONNECT_WINDOW_SECONDS
                and self._tried_at is not None
                and now - self._tried_at < RECONNECT_SPACING_SECONDS
            ):
                raise StoreUnavailable(
                    f"{self.display}: the database cannot be reached (reconnecting)"
                )
            try:
                self._conn = self._connect(RECONNECT_CONNECT_TIMEOUT_SECONDS)
            finally:
                self._tried_at = time.monotonic()
        return self._conn

    def _retrying(self, action: Callable[[psycopg.Connection[Any]], _T]) -> _T:
        """Run ``action`` on a live connection outside a transaction; when the server went
        away (the action failed before anything could take effect), reconnect and run it
        again, within the outage's RECONNECT_WINDOW_SECONDS (see its comment)."""
        while True:
            try:
                with self.errors():
                    result = action(self._live())
            except StoreUnavailable:
                if self._tx_open or not (self._conn.closed or self._conn.broken):
                    raise  # cut inside a transaction, or the server answered (a timeout)
                now = time.monotonic()
                if self._down_since is None:
                    self._down_since = now
                if now - self._down_since >= RECONNECT_WINDOW_SECONDS:
                    raise
                time.sleep(RECONNECT_PAUSE_SECONDS)
                continue
            self._down_since = None
            return result

    @property
    def in_transaction(self) -> bool:
        """True inside an open transaction on a connection that still works (a connection
        lost inside one ends it: the server rolled it back)."""
        conn = self._conn
        if conn.closed or conn.broken:
            self._tx_open = False
            return False
        return conn.info.transaction_status != TransactionStatus.IDLE

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> psycopg.Cursor[Any]:
        """Run one statement (SQLite dialect, ``?`` placeholders); the cursor holds its rows."""
        if sql in ("BEGIN", "BEGIN IMMEDIATE"):
            self.begin_write()
            return self._conn.cursor()
        query, params = postgres_query(sql), tuple(parameters)
        if not self._tx_open:
            return self._retrying(lambda conn: conn.execute(query, params, prepare=False))
        with self.errors():
            try:
                return self._live().execute(query, params, prepare=False)
            finally:
                if sql in ("COMMIT", "ROLLBACK"):
                    self._tx_open = False

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]], /) -> psycopg.Cursor[Any]:
        """Run one statement once per row of parameters."""
        with self.errors():
            cursor = self._live().cursor()
            cursor.executemany(postgres_query(sql), [tuple(row) for row in rows])
            return cursor

    def begin_write(self) -> None:
        """Open a write transaction on this thread's connection (no store-wide lock: see the
        module docstring): the counterpart of SQLite's ``BEGIN IMMEDIATE``."""
        self._retrying(_begin)
        self._tx_open = True

    def lock_store(self) -> None:
        """Inside a write transaction, hold :data:`MIGRATION_LOCK_KEY` until it ends."""
        with self.errors():
            self._live().execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK_KEY,))

    def rollback(self) -> None:
        """Roll an open transaction back (nothing to do when the connection is gone)."""
        self._tx_open = False
        if self.in_transaction:
            with self.errors():
                self._conn.execute("ROLLBACK")

    def close(self) -> None:
        """Close every thread's connection. Idempotent."""
        self._tx_open = False
        self._closed = True
        with self._all_lock:
            conns, self._all = self._all, []
        for conn in conns:
            conn.close()


class _ThreadState(threading.local):
    """One thread's connection and its transaction and reconnect state."""

    def __init__(self) -> None:
        self.conn: psycopg.Connection[Any] | None = None
        self.tx_open = False
        #: When this connection was first found unreachable in the current outage (monotonic
        #: seconds), or None while it works: the start of the one reconnect window.
        self.down_since: float | None = None
        #: When the last attempt to reconnect ended (monotonic seconds), or None.
        self.tried_at: float | None = None


def _begin(conn: psycopg.Connection[Any]) -> psycopg.Connection[Any]:
    conn.execute("BEGIN")
    return conn


def classify_postgres_error(exc: Exception, where: str) -> StorageError | None:
    """The stable storage error a psycopg failure stands for, or None for a bug."""
    if isinstance(exc, pg_errors.DiskFull | pg_errors.OutOfMemory):
        return StorageFull(f"{where}: the database server has no space left ({exc})")
    if isinstance(exc, pg_errors.ReadOnlySqlTransaction | pg_errors.InsufficientPrivilege):
        return StorageReadOnly(f"{where}: the run store cannot be written here ({exc})")
    if isinstance(exc, pg_errors.IdleInTransactionSessionTimeout):
        # The server ended a transaction this client left open (a paused process, a cut
        # network: IDLE_IN_TRANSACTION_TIMEOUT_MS) and closed the connection: rolled back.
        return StoreUnavailable(f"{where}: the database ended an idle transaction ({exc})")
    if isinstance(exc, pg_errors.QueryCanceled | pg_errors.LockNotAvailable):
        return StoreUnavailable(f"{where}: the database did not answer in time ({exc})")
    if isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError):
        return StoreUnavailable(f"{where}: the database cannot be reached ({exc})")
    return None


def postgres_schema_version(conn: PostgresConnection) -> int:
    """The schema version of the database (0 when Baton never migrated it)."""
    row = conn.execute("SELECT to_regclass(?) IS NOT NULL", (VERSION_TABLE,)).fetchone()
    if row is None or not row[0]:
        return 0
    version = conn.execute(f"SELECT version FROM {VERSION_TABLE}").fetchone()
    return 0 if version is None else int(version[0])


def migrate_postgres(conn: PostgresConnection, migrations: Sequence[Migration] = MIGRATIONS) -> int:
    """Bring the database up to ``len(migrations)`` (the SQLite migrations, rendered by
    :func:`baton.store.dialect.postgres_ddl`); return the version. Each migration runs with
    its version bump in one transaction holding the write lock, so two workers starting
    together migrate once. Raises StoreSchemaTooNew, touching nothing, on a newer database."""
    latest = len(migrations)
    rendered = [[postgres_ddl(statement) for statement in step] for step in migrations]
    while True:
        current = postgres_schema_version(conn)
        if current > latest:
            raise StoreSchemaTooNew(
                f"the run store is at schema version {current}; this Baton knows up to {latest}"
            )
        if current == latest:
            return current
        conn.begin_write()
        try:
            conn.lock_store()
            conn.execute(f"CREATE TABLE IF NOT EXISTS {VERSION_TABLE} (version BIGINT NOT NULL)")
            # Another process may have migrated while this one waited for the lock.
            if postgres_schema_version(conn) == current:
                for statement in rendered[current]:
                    conn.execute(statement)
                conn.execute(f"DELETE FROM {VERSION_TABLE}")
                conn.execute(f"INSERT INTO {VERSION_TABLE} (version) VALUES (?)", (current + 1,))
            conn.execute("COMMIT")
        except BaseException:
            conn.rollback()
            raise
