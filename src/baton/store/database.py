"""Opening the run store's SQLite file, its pragmas and migrations, and what every table's
module shares: transactions, defensive redaction, bounds, publishing citations, and the
translation of SQLite's failures into stable storage codes.

Durability. ``synchronous=FULL`` in WAL mode: a committed write survives power loss. A write
that *publishes a record citing journal entries* (a prompt or response reference, an
interaction, an observation) is an ``async`` method that first awaits the journal flush
callback for those references, so a durable record never points at a journal entry a crash
could still lose. The other writes are plain methods.

Compare-and-set. State changes take ``expected=`` (one state or several) and raise
:class:`~baton.errors.StoreConflict`, writing nothing, when the row is in another state. Run
statuses change only along :data:`baton.store.run_status.RUN_STATUS_TRANSITIONS`.

No secrets. Callers pass already-redacted text; every free-text column still gets a defensive
:func:`~baton.redaction.redact_text` pass (and JSON columns ``redact_json``), with the
store's own secret values if it was given any. Diagnostic columns are truncated to
:data:`MAX_DIAGNOSTIC_CHARS`.

Read-only. A store opened with ``read_only=True`` (``baton runs``, ``show``, ``journal
verify``) opens the file through a ``mode=ro`` or ``immutable`` URI (see
:func:`_connect_read_only`): it creates nothing (no database, no WAL file, no migration) and
works on a read-only file system or directory.

Failures. A full disk, a read-only file system and a file that is not a SQLite database are
raised as :class:`~baton.errors.StorageFull`, :class:`~baton.errors.StorageReadOnly` and
:class:`~baton.errors.StoreCorrupt`, never as a raw ``sqlite3`` error.

Fencing (docs/fleet.md). The runs this process took or created are its *claims*: the run's
owner (this process) and its epoch when it took it (:attr:`StoreDatabase.claims`). Every
write this store makes for a claimed run carries that token and is refused, writing nothing,
with :class:`~baton.errors.RunClaimLost` when the run's owner or epoch changed (another
process settled or adopted it): a run's own columns in the same ``UPDATE ... WHERE owner = ?
AND epoch = ?``, its child rows (items, events, interactions, observations, workspace
snapshots) in the same transaction, under the run row's lock taken by the statement that
checks the token (:meth:`StoreDatabase._fence`). A status write by a process that is not the
run's owner (a settle, an adoption, a take) increments the epoch.

Threads. On SQLite a Store wraps one sqlite3 connection and belongs to the thread that opened
it (in Baton, the event loop's thread): sqlite3 refuses calls from another thread. Every call
is one short transaction (indexed lookups, a few rows), so it runs on the event loop
directly; ``busy_timeout`` bounds the wait when another process holds the write lock. On
PostgreSQL each thread has its own connection (:mod:`baton.store.postgres`) and the async
writes run on a worker thread (:meth:`StoreDatabase.offload`), so a slow round trip does
not hold up the event loop's other tasks (another lane's read loop).
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import time
from collections.abc import Awaitable, Callable, Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeVar
from urllib.parse import quote

import orjson

from baton.durable import files
from baton.durable.refs import JournalRef
from baton.durable.timestamps import format_timestamp
from baton.errors import (
    RecordNotFound,
    RunClaimLost,
    StorageError,
    StorageFull,
    StorageReadOnly,
    StoreBusy,
    StoreCorrupt,
    UsageError,
)
from baton.redaction import SecretValues, redact_json, redact_text
from baton.store.dialect import Dialect, json_field_sql
from baton.store.location import is_postgres_url
from baton.store.migrations import migrate, schema_version
from baton.store.owner import current_owner

#: Called with the journal references a record cites, before the record is written; must make
#: them durable (``baton.journal.Journal.flush_refs``).
FlushRefs = Callable[[Sequence[JournalRef]], Awaitable[None]]
Clock = Callable[[], datetime]


class StoreCursor(Protocol):
    """What the store reads from a statement's result (sqlite3's and psycopg's cursors)."""

    @property
    def rowcount(self) -> int:
        """Rows the statement changed."""
        ...

    def fetchone(self) -> Any:
        """The next row, or None."""
        ...

    def fetchall(self) -> list[Any]:
        """Every remaining row."""
        ...

    def __iter__(self) -> Iterator[Any]:
        """The remaining rows."""
        ...


class StoreConnection(Protocol):
    """What the store's modules use of a connection: a ``sqlite3.Connection``, or
    :class:`baton.store.postgres.PostgresConnection`, which speaks the same SQL."""

    def execute(self, sql: str, parameters: Any = ..., /) -> StoreCursor:
        """Run one statement."""
        ...

    def executemany(self, sql: str, parameters: Any, /) -> StoreCursor:
        """Run one statement once per row of parameters."""
        ...

    @property
    def in_transaction(self) -> bool:
        """True inside an open transaction."""
        ...

    def close(self) -> None:
        """Close the connection."""
        ...


#: How long a write waits for another process's write lock before failing (milliseconds).
BUSY_TIMEOUT_MS: Final = 5_000
#: How long opening a store waits, in all, for other processes creating or migrating it at the
#: same moment (16 ``baton run`` started at once on an empty data directory): switching a new
#: file to WAL needs it unlocked, and SQLite answers that "database is locked" at once, without
#: its busy timeout. After this, STORE_BUSY.
STORE_OPEN_WAIT_SECONDS: Final = 30.0
#: The first and the longest pause between two attempts to switch the store to WAL.
STORE_OPEN_FIRST_PAUSE_SECONDS: Final = 0.005
STORE_OPEN_MAX_PAUSE_SECONDS: Final = 0.2
#: Longest diagnostic, reason or stop-reason text kept; longer text is cut and marked. These are
#: for people reading a failure, not evidence (the journal holds the evidence).
MAX_DIAGNOSTIC_CHARS: Final = 8 * 1024
#: Longest prompt text stored. A longer prompt is refused: it is the run's record.
MAX_PROMPT_CHARS: Final = 4 * 1024 * 1024
#: Largest JSON value (item content, tool call, payload, native state) stored, in bytes.
MAX_JSON_BYTES: Final = 16 * 1024 * 1024
#: Longest name-like value (profile, lane, policy, kind, state of readiness).
MAX_NAME_CHARS: Final = 256
#: Longest id-like text chosen by someone else (a provider session id, an agent's request id,
#: an optionId): longer than a name (providers use UUIDs and paths), still bounded so one agent
#: cannot fill a row with an id.
MAX_ID_CHARS: Final = 4 * MAX_NAME_CHARS
#: Most rows one listing returns.
MAX_LIST_ROWS: Final = 10_000
#: Most ids one ``IN (...)`` lookup binds: under SQLite's oldest bound on host parameters
#: (999), so a listing's batched lookups work on every SQLite and on PostgreSQL alike.
MAX_IDS_PER_QUERY: Final = 500

#: Threads (each with its own connection) a PostgreSQL store runs its async writes on: bounds
#: the connections one process opens to the database (this many plus the event loop's own),
#: so a fleet of many workers stays under the server's ``max_connections``.
STORE_WRITE_THREADS: Final = 2
#: Rows one multi-row INSERT binds (:meth:`StoreDatabase._insert_rows`): at six columns,
#: under SQLite's oldest bound on host parameters (999).
MAX_ROWS_PER_INSERT: Final = 100
#: Most claims one store remembers (run id -> epoch): a claim is dropped when its holder
#: writes the run's end, so this bounds only a process that takes runs and never ends them.
MAX_CLAIMS_HELD: Final = 10_000

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

_TRUNCATED: Final = "…[truncated]"
_T = TypeVar("_T")

# SQLite's primary result codes (the low byte of an extended code) that name a storage
# condition rather than a bug: https://sqlite.org/rescode.html
_SQLITE_PERM: Final = 3
_SQLITE_BUSY: Final = 5
_SQLITE_LOCKED: Final = 6
_SQLITE_READONLY: Final = 8
_SQLITE_CORRUPT: Final = 11
_SQLITE_FULL: Final = 13
_SQLITE_CANTOPEN: Final = 14
_SQLITE_NOTADB: Final = 26
#: The mask that takes an extended result code to its primary code.
_PRIMARY_CODE_MASK: Final = 0xFF


def new_id(prefix: str) -> str:
    """A fresh random id such as ``run-3f9a0c1d2b4e5f60`` (also a valid server id)."""
    return f"{prefix}-{os.urandom(8).hex()}"


def utc_now() -> datetime:
    """The default clock: the current time in UTC."""
    return datetime.now(UTC)


def ref_text(ref: JournalRef | None) -> str | None:
    """A reference's stored JSON text (None stays None)."""
    return None if ref is None else orjson.dumps(ref.to_dict()).decode()


def ref_value(text: str | None) -> JournalRef | None:
    """The reference stored as ``text`` (None stays None)."""
    return None if text is None else JournalRef.from_dict(orjson.loads(text))


def expected_set(expected: str | Collection[str] | None) -> frozenset[str] | None:
    """The states ``expected`` names (one or several), or None for "any"."""
    if expected is None:
        return None
    if isinstance(expected, str):
        return frozenset({expected})
    return frozenset(expected)


def check_in(value: str, allowed: Collection[str], what: str) -> None:
    """Raise UsageError unless ``value`` is one of ``allowed``."""
    if value not in allowed:
        raise UsageError(f"{value!r} is not a {what} (one of {', '.join(sorted(allowed))})")


def check_name(value: str, what: str) -> str:
    """``value`` if it is a non-empty name of at most MAX_NAME_CHARS, else UsageError."""
    if not isinstance(value, str) or not value or len(value) > MAX_NAME_CHARS:
        raise UsageError(f"{what} must be 1-{MAX_NAME_CHARS} characters")
    return value


def classify_sqlite_error(exc: sqlite3.Error, path: Path) -> StorageError | None:
    """The stable storage error a SQLite failure on the store at ``path`` stands for, or None
    when it is none of a full disk, a read-only store or a corrupt file (a bug: re-raise)."""
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & _PRIMARY_CODE_MASK if isinstance(code, int) else None
    if primary == _SQLITE_FULL:
        return StorageFull(f"{path}: no space left for the run store ({exc})")
    if primary in (_SQLITE_READONLY, _SQLITE_PERM, _SQLITE_CANTOPEN):
        return StorageReadOnly(f"{path}: the run store cannot be written here ({exc})")
    if primary in (_SQLITE_NOTADB, _SQLITE_CORRUPT):
        return StoreCorrupt(f"{path}: is not a readable SQLite database ({exc})")
    return None


def _is_busy(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(code, int) and code & _PRIMARY_CODE_MASK in (_SQLITE_BUSY, _SQLITE_LOCKED)


def _switch_to_wal(conn: sqlite3.Connection, deadline: float) -> None:
    """``PRAGMA journal_mode = WAL``, retried with growing pauses while another opener holds
    the new file locked, until ``deadline`` (``time.monotonic()``); then the busy error."""
    pause = STORE_OPEN_FIRST_PAUSE_SECONDS
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL").fetchall()
            return
        except sqlite3.OperationalError as exc:
            if not _is_busy(exc) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, STORE_OPEN_MAX_PAUSE_SECONDS)


@contextmanager
def _busy_is_classified(path: Path) -> Iterator[None]:
    """A store left locked by other openers beyond the wait is STORE_BUSY, not a traceback."""
    try:
        yield
    except sqlite3.OperationalError as exc:
        if not _is_busy(exc):
            raise
        raise StoreBusy(
            f"{path}: the run store stayed locked by other processes opening it "
            f"(waited up to {STORE_OPEN_WAIT_SECONDS:g} s); try again"
        ) from exc


@contextmanager
def storage_errors(path: Path) -> Iterator[None]:
    """Raise SQLite and OS storage failures inside the block as stable storage errors."""
    try:
        yield
    except sqlite3.Error as exc:
        classified = classify_sqlite_error(exc, path)
        if classified is None:
            raise
        raise classified from exc
    except OSError as exc:
        storage = files.classify_os_error(exc, path)
        if storage is None:
            raise
        raise storage from exc


def _check_store_files(path: Path, *, create: bool) -> bool:
    """Check the store file and its WAL companions are private files we own (creating the
    store file when ``create``); return whether the store file exists."""
    directory = path.parent
    dir_fd = files.open_dir(directory)
    exists = True
    try:
        for suffix in ("", "-wal", "-shm"):
            name = path.name + suffix
            flags = os.O_RDWR | os.O_CREAT if create and suffix == "" else os.O_RDONLY
            try:
                fd = files.open_file(dir_fd, name, flags, display=directory / name)
            except FileNotFoundError:
                if suffix == "":
                    exists = False
                continue
            os.close(fd)
    finally:
        os.close(dir_fd)
    return exists


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """A connection that writes nothing, not even the WAL files.

    Without a ``-wal`` file no writer has the store open (a WAL database keeps it while any
    connection is open), and the file is read ``immutable`` (``mode=ro`` would create the
    ``-wal`` and ``-shm`` files). With one, a writer may be active: ``mode=ro`` reads its
    committed transactions through the existing files, falling back to ``immutable`` (the
    main file's snapshot) when the shared-memory index cannot be opened (a read-only
    directory or file system).
    """
    base = f"file:{quote(str(path))}?mode=ro"
    attempts = (
        [base, base + "&immutable=1"] if os.path.exists(f"{path}-wal") else [base + "&immutable=1"]
    )
    for index, uri in enumerate(attempts):
        conn: sqlite3.Connection | None = None
        try:
            conn = sqlite3.connect(uri, uri=True, isolation_level=None)
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            # Reads the header and the schema: a corrupt file fails here, not later.
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.OperationalError:
            if conn is not None:
                conn.close()
            if index == len(attempts) - 1:
                raise
            continue
        except BaseException:
            if conn is not None:
                conn.close()
            raise
        return conn
    raise AssertionError("unreachable")  # pragma: no cover


def id_chunks(ids: Iterable[str]) -> Iterator[list[str]]:
    """The distinct ``ids`` in lists of at most :data:`MAX_IDS_PER_QUERY`, for batched lookups."""
    distinct = list(dict.fromkeys(ids))
    for start in range(0, len(distinct), MAX_IDS_PER_QUERY):
        yield distinct[start : start + MAX_IDS_PER_QUERY]


class StoreDatabase:
    """The connection and the helpers every table's records use (see the module docstring).
    :class:`baton.store.Store` is this plus one mixin per table group."""

    def __init__(
        self,
        path: Path | str,
        *,
        flush: FlushRefs | None = None,
        secrets: SecretValues | None = None,
        clock: Clock = utc_now,
        read_only: bool = False,
    ) -> None:
        #: True when opened read-only: every write raises StorageReadOnly.
        self.read_only = read_only
        #: This process's identity, recorded on the servers and runs it creates.
        self.owner = current_owner()
        self._flush = flush
        self._secrets = secrets
        self._clock = clock
        #: The runs this store's process holds a claim on: run id -> epoch (module docstring).
        self.claims: dict[str, int] = {}
        #: Called (from whichever thread wrote) with the error when a write was refused
        #: because a claim was lost; the fleet's worker stops on it.
        self.claim_lost_listeners: list[Callable[[RunClaimLost], None]] = []
        self._writers: ThreadPoolExecutor | None = None
        self._conn: StoreConnection
        #: The backend's integrity error (a duplicate key, a foreign key): a caller's bug or a
        #: race a table module turns into its own error.
        self.integrity_errors: tuple[type[Exception], ...] = (sqlite3.IntegrityError,)
        if isinstance(path, str) and is_postgres_url(path):
            self._open_postgres(path)
            return
        path = Path(path).absolute()
        self.path: Path | None = path
        #: Where the store lives, for messages: the file, or the URL without its password.
        self.location = str(path)
        #: The SQL dialect of the backend (see :mod:`baton.store.dialect`).
        self.dialect: Dialect = "sqlite"
        with storage_errors(path):
            exists = _check_store_files(path, create=not read_only)
            if read_only:
                self._conn = _connect_read_only(path) if exists else _empty_store_in_memory()
                try:
                    self.schema_version = schema_version(self._conn)
                except BaseException:
                    self._conn.close()
                    raise
                return
            conn = sqlite3.connect(path, isolation_level=None, check_same_thread=True)
            self._conn = conn
            try:
                with _busy_is_classified(path):
                    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
                    _switch_to_wal(conn, time.monotonic() + STORE_OPEN_WAIT_SECONDS)
                    conn.execute("PRAGMA synchronous = FULL")
                    conn.execute("PRAGMA foreign_keys = ON")
                    self.schema_version = migrate(conn)
            except BaseException:
                conn.close()
                raise

    def _open_postgres(self, url: str) -> None:
        """Open a PostgreSQL store (:mod:`baton.store.postgres`). Read-only, a database
        Baton never migrated reads as an empty store, creating nothing (as on SQLite)."""
        # psycopg is imported only for this backend.
        from baton.store.postgres import (
            PostgresConnection,
            migrate_postgres,
            postgres_schema_version,
        )

        self.path = None
        self.dialect = "postgresql"
        pg = PostgresConnection(url, read_only=self.read_only)
        self.integrity_errors = (sqlite3.IntegrityError, *pg.integrity_errors)
        self.location = pg.display
        try:
            if self.read_only:
                self.schema_version = postgres_schema_version(pg)
                if self.schema_version == 0:
                    pg.close()
                    self.dialect = "sqlite"
                    self._conn = _empty_store_in_memory()
                    return
            else:
                self.schema_version = migrate_postgres(pg)
        except BaseException:
            pg.close()
            raise
        self._conn = pg

    def close(self) -> None:
        """Close the database connection (every thread's). Idempotent."""
        if self._writers is not None:
            # A write stuck on a dead connection must not hold the close up: the connections
            # are closed next, which ends it.
            self._writers.shutdown(wait=False, cancel_futures=True)
            self._writers = None
        self._conn.close()

    # --- helpers ---------------------------------------------------------------------------

    def _now(self) -> str:
        return format_timestamp(self._clock())

    @contextmanager
    def _tx(self, *keys: str) -> Iterator[StoreConnection]:
        """One write transaction. SQLite's write lock serializes every writer; on PostgreSQL
        writers run concurrently and each write locks what it reads-checks-writes (its run
        row: :meth:`_fence`, :attr:`_row_lock`), and ``keys`` name the records a write
        creates under a name someone else may be creating at once (a session name, an
        idempotency key): a transaction-scoped advisory lock per key, in sorted order."""
        if self.read_only:
            raise StorageReadOnly(f"{self.location}: the run store was opened read-only")
        conn = self._conn
        with storage_errors(self.path or Path(self.location)):
            conn.execute("BEGIN IMMEDIATE")
            try:
                if self.dialect == "postgresql":
                    for key in sorted(set(keys)):
                        conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", (key,))
                yield conn
            except BaseException:
                if conn.in_transaction:  # SQLITE_FULL, for one, has rolled it back already
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    @property
    def _row_lock(self) -> str:
        """The clause that locks the rows a read-check-write reads, until its transaction
        ends (PostgreSQL; SQLite's one write lock already holds them)."""
        return " FOR NO KEY UPDATE" if self.dialect == "postgresql" else ""

    def _fence(self, conn: StoreConnection, run_id: str) -> tuple[str, str | None, int]:
        """Lock run ``run_id``'s row for this transaction and check this process's claim on
        it, if it holds one; its ``(status, owner, epoch)``. RecordNotFound for no run;
        RunClaimLost (the listeners told) when the claim is no longer current."""
        row = conn.execute(
            f"SELECT status, owner, epoch FROM runs WHERE id = ?{self._row_lock}", (run_id,)
        ).fetchone()
        if row is None:
            raise RecordNotFound(f"no run {run_id!r}")
        status, owner, epoch = row[0], row[1], int(row[2])
        held = self.claims.get(run_id)
        if held is not None and (owner != self.owner or epoch != held):
            self._claim_lost(run_id, owner, epoch, status)
        return status, owner, epoch

    def _claim_where(self, run_id: str) -> tuple[str, tuple[Any, ...]]:
        """The condition a write to run ``run_id``'s own row adds when this process holds a
        claim on it (the token, checked in the same statement), and its parameters; nothing
        otherwise."""
        held = self.claims.get(run_id)
        if held is None:
            return "", ()
        return " AND owner = ? AND epoch = ?", (self.owner, held)

    def _claim_lost(self, run_id: str, owner: str | None, epoch: int, status: str) -> None:
        """Raise RunClaimLost for run ``run_id`` (now ``owner``/``epoch``), telling the
        listeners first."""
        # The stale claim stays: every later write of this run is refused the same way.
        held = self.claims.get(run_id)
        error = RunClaimLost(
            f"run {run_id} is no longer this process's: it is {status}, epoch {epoch} "
            f"(this process held epoch {held}); another process settled or took it over"
        )
        for listener in list(self.claim_lost_listeners):
            listener(error)
        raise error

    def _hold_claim(self, run_id: str, epoch: int) -> None:
        """Remember this process's claim on ``run_id`` (bounded by MAX_CLAIMS_HELD)."""
        if run_id not in self.claims and len(self.claims) >= MAX_CLAIMS_HELD:
            self.claims.pop(next(iter(self.claims)))
        self.claims[run_id] = epoch

    def hold_claim(self, run_id: str, epoch: int) -> None:
        """Hold the claim ``epoch`` on a run this process owns (a take whose commit was cut
        off and was read back): its later writes are fenced by it."""
        self._hold_claim(run_id, epoch)

    async def offload(self, action: Callable[[], _T]) -> _T:
        """Run the store call ``action``: on PostgreSQL on a worker thread (its own
        connection), so the event loop goes on meanwhile; on SQLite here (its connection
        belongs to this thread). Cancellation: on PostgreSQL the call runs to its end on its
        thread and its outcome is unknown to the cancelled caller (as for any cut-off
        write)."""
        if self.dialect != "postgresql":
            return action()
        if self._writers is None:
            # Imported here: only a PostgreSQL store needs it (the CLI's import budget).
            from concurrent.futures import ThreadPoolExecutor

            self._writers = ThreadPoolExecutor(
                max_workers=STORE_WRITE_THREADS, thread_name_prefix="baton-store"
            )
        return await asyncio.get_running_loop().run_in_executor(self._writers, action)

    def _insert_rows(self, conn: StoreConnection, head: str, rows: Sequence[Sequence[Any]]) -> None:
        """``head`` (``INSERT INTO t (a, b)``) with ``rows``, MAX_ROWS_PER_INSERT per
        statement: each batch one message to the server (no pipeline of statements a cut
        network could leave half-sent, holding the transaction's locks open) and one round
        trip."""
        for start in range(0, len(rows), MAX_ROWS_PER_INSERT):
            batch = rows[start : start + MAX_ROWS_PER_INSERT]
            marks = ", ".join("(" + ", ".join("?" for _ in row) + ")" for row in batch)
            conn.execute(f"{head} VALUES {marks}", [value for row in batch for value in row])

    def _rows_with_ids(self, table: str, columns: str, ids: Iterable[str]) -> Iterator[Any]:
        """Rows (``columns``) of ``table`` whose ``id`` is one of ``ids``, in no order: one
        query per :data:`MAX_IDS_PER_QUERY` distinct ids (a listing's batched lookups)."""
        for chunk in id_chunks(ids):
            marks = ", ".join("?" for _ in chunk)
            yield from self._conn.execute(
                f"SELECT {columns} FROM {table} WHERE id IN ({marks})", chunk
            )

    def _json_field(self, column: str, key: str, *, integer: bool = False) -> str:
        """SQL for one top-level field of a JSON column, in this store's dialect."""
        return json_field_sql(self.dialect, column, key, integer=integer)

    def _text(self, value: str | None, limit: int = MAX_DIAGNOSTIC_CHARS) -> str | None:
        if value is None:
            return None
        clean = redact_text(value, self._secrets)
        if len(clean) > limit:
            clean = clean[: limit - len(_TRUNCATED)] + _TRUNCATED
        return clean

    def _json(self, value: Any, what: str) -> str:
        return self._redacted_json(value, what)[1]

    def _redacted_json(self, value: Any, what: str) -> tuple[Any, str]:
        """``value`` redacted, and its JSON text (bounded by MAX_JSON_BYTES)."""
        redacted = redact_json(value, self._secrets)
        data = orjson.dumps(redacted)
        if len(data) > MAX_JSON_BYTES:
            raise UsageError(f"{what} is {len(data)} bytes of JSON; the bound is {MAX_JSON_BYTES}")
        return redacted, data.decode()

    async def _publish(self, refs: Sequence[JournalRef | None]) -> None:
        cited = [ref for ref in refs if ref is not None]
        if not cited:
            return
        if self._flush is None:
            raise UsageError("this record cites journal entries but the store has no journal flush")
        await self._flush(cited)


def _empty_store_in_memory() -> sqlite3.Connection:
    """An empty store at the current schema, in memory: what a read-only open of a data
    directory without a store file reads (no runs), creating nothing on disk."""
    conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=True)
    migrate(conn)
    return conn
