"""The run store: Baton's own records in one SQLite database (stdlib sqlite3, WAL mode).

Durability. ``synchronous=FULL`` in WAL mode: a committed write survives power loss. A write
that *publishes a record citing journal entries* (a prompt or response reference, an
interaction, an observation) is an ``async`` method that first awaits the journal flush
callback for those references, so a durable record never points at a journal entry a crash
could still lose. The other writes are plain methods.

Compare-and-set. State changes take ``expected=`` (one state or several) and raise
:class:`~baton.errors.StoreConflict`, writing nothing, when the row is in another state. Runs
in a final status (COMPLETED, FAILED, INTERRUPTED, LOST) never change.

No secrets. Callers pass already-redacted text; every free-text column still gets a defensive
:func:`~baton.redaction.redact_text` pass (and JSON columns ``redact_json``), with the
store's own secret values if it was given any. Diagnostic columns are truncated to
:data:`MAX_DIAGNOSTIC_CHARS`.

Threads. A Store wraps one sqlite3 connection and belongs to the thread that opened it (in
Baton, the event loop's thread): sqlite3 refuses calls from another thread. Every call is one
short transaction (indexed lookups, a few rows), so it runs on the event loop directly;
``busy_timeout`` bounds the wait when another process holds the write lock.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Awaitable, Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, cast

import orjson

from baton.durable import files
from baton.durable.refs import JournalRef, validate_server_id
from baton.durable.timestamps import format_timestamp
from baton.errors import RecordNotFound, StoreConflict, UsageError
from baton.redaction import SecretValues, redact_json, redact_text
from baton.store.datadir import STORE_FILENAME
from baton.store.migrations import migrate
from baton.store.models import (
    CHOSEN_BY,
    ENDED_RUN_STATUSES,
    FINAL_RUN_STATUSES,
    INTERACTION_STATES,
    LIVE_SERVER_STATES,
    OBSERVATION_KINDS,
    RUN_STATUSES,
    SERVER_STATES,
    SESSION_STATES,
    ChosenBy,
    Interaction,
    InteractionState,
    Item,
    NewItem,
    Observation,
    ObservationKind,
    OneOrMany,
    Readiness,
    Run,
    RunStatus,
    ServerInstance,
    ServerState,
    Session,
    SessionState,
)
from baton.store.owner import current_owner

#: Called with the journal references a record cites, before the record is written; must make
#: them durable (``baton.journal.Journal.flush_refs``).
FlushRefs = Callable[[Sequence[JournalRef]], Awaitable[None]]
Clock = Callable[[], datetime]

#: How long a write waits for another process's write lock before failing (milliseconds).
BUSY_TIMEOUT_MS: Final = 5_000
#: Longest diagnostic, reason or stop-reason text kept; longer text is cut and marked. These are
#: for people reading a failure, not evidence (the journal holds the evidence).
MAX_DIAGNOSTIC_CHARS: Final = 8 * 1024
#: Longest prompt text stored. A longer prompt is refused: it is the run's record.
MAX_PROMPT_CHARS: Final = 4 * 1024 * 1024
#: Largest JSON value (item content, tool call, payload, native state) stored, in bytes.
MAX_JSON_BYTES: Final = 16 * 1024 * 1024
#: Longest name-like value (profile, lane, policy, kind, state of readiness).
MAX_NAME_CHARS: Final = 256
#: Most rows one listing returns.
MAX_LIST_ROWS: Final = 10_000

_TRUNCATED: Final = "…[truncated]"
_SERVER_COLUMNS: Final = (
    "id, profile, lane, generation, pid, state, diagnostics, created_at, updated_at, ended_at, "
    "owner"
)
_SESSION_COLUMNS: Final = (
    "id, provider_session_id, server_instance_id, profile, cwd, state, native_state, "
    "created_at, updated_at"
)
_RUN_COLUMNS: Final = (
    "id, session_id, server_instance_id, status, stop_reason, prompt_text, error_code, "
    "diagnostic, skipped_frames, violations, recovery_reason, policy, unattended, prompt_ref, "
    "response_ref, created_at, started_at, ended_at, updated_at, owner"
)
_INTERACTION_COLUMNS: Final = (
    "id, run_id, request_id, tool_call, offered, state, choice, chosen_by, reason, "
    "request_ref, response_ref, created_at, resolved_at"
)
_OBSERVATION_COLUMNS: Final = "id, session_id, run_id, kind, payload, journal_ref, recorded_at"


def new_id(prefix: str) -> str:
    """A fresh random id such as ``run-3f9a0c1d2b4e5f60`` (also a valid server id)."""
    return f"{prefix}-{os.urandom(8).hex()}"


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _ref_text(ref: JournalRef | None) -> str | None:
    return None if ref is None else orjson.dumps(ref.to_dict()).decode()


def _ref_value(text: str | None) -> JournalRef | None:
    return None if text is None else JournalRef.from_dict(orjson.loads(text))


def _expected_set(expected: str | Collection[str] | None) -> frozenset[str] | None:
    """The states ``expected`` names (one or several), or None for "any"."""
    if expected is None:
        return None
    if isinstance(expected, str):
        return frozenset({expected})
    return frozenset(expected)


def _check_in(value: str, allowed: Collection[str], what: str) -> None:
    if value not in allowed:
        raise UsageError(f"{value!r} is not a {what} (one of {', '.join(sorted(allowed))})")


def _check_name(value: str, what: str) -> str:
    if not isinstance(value, str) or not value or len(value) > MAX_NAME_CHARS:
        raise UsageError(f"{what} must be 1-{MAX_NAME_CHARS} characters")
    return value


class Store:
    """Baton's run store. Open with :meth:`open` (a data directory) or the constructor (a path).

    ``flush`` is the journal flush callback (``Journal.flush_refs``): required for the async
    methods that cite journal references. ``secrets`` adds exact values to the defensive
    redaction of every text column.
    """

    def __init__(
        self,
        path: Path,
        *,
        flush: FlushRefs | None = None,
        secrets: SecretValues | None = None,
        clock: Clock = _utc_now,
    ) -> None:
        path = path.absolute()
        directory = path.parent
        dir_fd = files.open_dir(directory)
        try:
            for suffix in ("", "-wal", "-shm"):
                name = path.name + suffix
                flags = os.O_RDWR | (os.O_CREAT if suffix == "" else 0)
                try:
                    fd = files.open_file(dir_fd, name, flags, display=directory / name)
                except FileNotFoundError:
                    continue
                os.close(fd)
        finally:
            os.close(dir_fd)
        self.path = path
        #: This process's identity, recorded on the servers and runs it creates.
        self.owner = current_owner()
        self._flush = flush
        self._secrets = secrets
        self._clock = clock
        self._conn = sqlite3.connect(path, isolation_level=None, check_same_thread=True)
        try:
            self._conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute("PRAGMA synchronous = FULL")
            self._conn.execute("PRAGMA foreign_keys = ON")
            self.schema_version = migrate(self._conn)
        except BaseException:
            self._conn.close()
            raise

    @classmethod
    def open(
        cls,
        data_dir: Path,
        *,
        flush: FlushRefs | None = None,
        secrets: SecretValues | None = None,
        clock: Clock = _utc_now,
    ) -> Store:
        """The store of Baton's data directory (``<data_dir>/baton.sqlite3``)."""
        return cls(data_dir / STORE_FILENAME, flush=flush, secrets=secrets, clock=clock)

    def close(self) -> None:
        """Close the database connection. Idempotent."""
        self._conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # --- helpers ---------------------------------------------------------------------------

    def _now(self) -> str:
        return format_timestamp(self._clock())

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

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

    # --- server instances ------------------------------------------------------------------

    def create_server_instance(
        self,
        profile: str,
        lane: str,
        generation: int,
        *,
        pid: int | None = None,
        state: ServerState = "STARTING",
        server_id: str | None = None,
    ) -> ServerInstance:
        """Record a new server process (its id names its journal)."""
        server_id = validate_server_id(server_id or new_id("srv"))
        _check_in(state, SERVER_STATES, "server state")
        now = self._now()
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO server_instances (id, profile, lane, generation, pid, state, "
                "created_at, updated_at, owner) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    server_id,
                    _check_name(profile, "profile"),
                    _check_name(lane, "lane"),
                    generation,
                    pid,
                    state,
                    now,
                    now,
                    self.owner,
                ),
            )
        return self.get_server_instance(server_id)

    def get_server_instance(self, server_id: str) -> ServerInstance:
        """The server instance ``server_id``; RecordNotFound if there is none."""
        row = self._conn.execute(
            f"SELECT {_SERVER_COLUMNS} FROM server_instances WHERE id = ?", (server_id,)
        ).fetchone()
        if row is None:
            raise RecordNotFound(f"no server instance {server_id!r}")
        return _server(row)

    def find_server_instance(self, server_id: str) -> ServerInstance | None:
        """The server instance ``server_id``, or None."""
        row = self._conn.execute(
            f"SELECT {_SERVER_COLUMNS} FROM server_instances WHERE id = ?", (server_id,)
        ).fetchone()
        return None if row is None else _server(row)

    def list_server_instances(
        self, *, states: OneOrMany[ServerState] | None = None, profile: str | None = None
    ) -> list[ServerInstance]:
        """Server instances, oldest first, optionally only in ``states`` or of ``profile``."""
        sql = f"SELECT {_SERVER_COLUMNS} FROM server_instances WHERE 1 = 1"
        args: list[Any] = []
        wanted = _expected_set(states)
        if wanted is not None:
            sql += f" AND state IN ({', '.join('?' for _ in wanted)})"
            args.extend(sorted(wanted))
        if profile is not None:
            sql += " AND profile = ?"
            args.append(profile)
        sql += f" ORDER BY created_at, id LIMIT {MAX_LIST_ROWS}"
        return [_server(row) for row in self._conn.execute(sql, args)]

    def update_server_state(
        self,
        server_id: str,
        state: ServerState,
        *,
        expected: OneOrMany[ServerState] | None = None,
        pid: int | None = None,
        diagnostics: str | None = None,
    ) -> ServerInstance:
        """Move a server to ``state`` (compare-and-set on ``expected``); ``pid`` and
        ``diagnostics`` are set when given. EXITED, FAILED and LOST set ``ended_at``."""
        _check_in(state, SERVER_STATES, "server state")
        allowed = _expected_set(expected)
        now = self._now()
        with self._tx() as conn:
            row = conn.execute(
                "SELECT state FROM server_instances WHERE id = ?", (server_id,)
            ).fetchone()
            if row is None:
                raise RecordNotFound(f"no server instance {server_id!r}")
            if allowed is not None and row[0] not in allowed:
                raise StoreConflict(
                    f"server instance {server_id} is {row[0]}, not {' or '.join(sorted(allowed))}"
                )
            ended = now if state in ("EXITED", "FAILED", "LOST") else None
            conn.execute(
                "UPDATE server_instances SET state = ?, updated_at = ?, "
                "pid = COALESCE(?, pid), diagnostics = COALESCE(?, diagnostics), "
                "ended_at = COALESCE(ended_at, ?) WHERE id = ?",
                (state, now, pid, self._text(diagnostics), ended, server_id),
            )
        return self.get_server_instance(server_id)

    def mark_live_servers_lost(
        self,
        diagnostics: str,
        *,
        exclude: Collection[str] = (),
        owner_alive: Callable[[str | None], bool] | None = None,
    ) -> list[str]:
        """Cold start: every server recorded as possibly alive (STARTING..STOPPING) becomes
        LOST with ``diagnostics``, except the ids in ``exclude`` and, when ``owner_alive`` is
        given, those whose owning Baton process it says is still alive. Returns the ids."""
        now = self._now()
        live = sorted(LIVE_SERVER_STATES)
        with self._tx() as conn:
            ids = [
                row[0]
                for row in conn.execute(
                    f"SELECT id, owner FROM server_instances WHERE state IN "
                    f"({', '.join('?' for _ in live)}) ORDER BY created_at, id",
                    live,
                )
                if row[0] not in exclude and (owner_alive is None or not owner_alive(row[1]))
            ]
            conn.executemany(
                "UPDATE server_instances SET state = 'LOST', diagnostics = ?, updated_at = ?, "
                "ended_at = COALESCE(ended_at, ?) WHERE id = ?",
                [(self._text(diagnostics), now, now, server_id) for server_id in ids],
            )
        return ids

    # --- sessions --------------------------------------------------------------------------

    def create_session(
        self,
        profile: str,
        cwd: str,
        *,
        server_instance_id: str | None = None,
        provider_session_id: str | None = None,
        state: SessionState = "CREATING",
        native_state: Any = None,
        session_id: str | None = None,
    ) -> Session:
        """Record a session (before or after session/new answered)."""
        _check_in(state, SESSION_STATES, "session state")
        session_id = session_id or new_id("ses")
        now = self._now()
        with self._tx() as conn:
            conn.execute(
                f"INSERT INTO sessions ({_SESSION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    session_id,
                    self._text(provider_session_id, MAX_NAME_CHARS * 4),
                    server_instance_id,
                    _check_name(profile, "profile"),
                    cwd,
                    state,
                    self._json({} if native_state is None else native_state, "native state"),
                    now,
                    now,
                ),
            )
        return self.get_session(session_id)

    def get_session(self, session_id: str) -> Session:
        """The session ``session_id``; RecordNotFound if there is none."""
        row = self._conn.execute(
            f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        if row is None:
            raise RecordNotFound(f"no session {session_id!r}")
        return _session(row)

    def find_session(self, session_id: str) -> Session | None:
        """The session ``session_id``, or None."""
        row = self._conn.execute(
            f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        return None if row is None else _session(row)

    def find_session_by_provider_id(self, profile: str, provider_session_id: str) -> Session | None:
        """The newest session of ``profile`` with that provider session id, or None."""
        row = self._conn.execute(
            f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE profile = ? AND "
            "provider_session_id = ? ORDER BY created_at DESC LIMIT 1",
            (profile, provider_session_id),
        ).fetchone()
        return None if row is None else _session(row)

    def list_sessions(
        self, *, profile: str | None = None, state: SessionState | None = None
    ) -> list[Session]:
        """Sessions, oldest first, optionally filtered."""
        sql = f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE 1 = 1"
        args: list[Any] = []
        if profile is not None:
            sql += " AND profile = ?"
            args.append(profile)
        if state is not None:
            sql += " AND state = ?"
            args.append(state)
        sql += f" ORDER BY created_at, id LIMIT {MAX_LIST_ROWS}"
        return [_session(row) for row in self._conn.execute(sql, args)]

    def update_session(
        self,
        session_id: str,
        *,
        state: SessionState | None = None,
        expected: OneOrMany[SessionState] | None = None,
        provider_session_id: str | None = None,
        server_instance_id: str | None = None,
        native_state: Any = None,
    ) -> Session:
        """Change a session's fields (those given); compare-and-set on ``expected`` state."""
        if state is not None:
            _check_in(state, SESSION_STATES, "session state")
        allowed = _expected_set(expected)
        with self._tx() as conn:
            row = conn.execute("SELECT state FROM sessions WHERE id = ?", (session_id,)).fetchone()
            if row is None:
                raise RecordNotFound(f"no session {session_id!r}")
            if allowed is not None and row[0] not in allowed:
                raise StoreConflict(
                    f"session {session_id} is {row[0]}, not {' or '.join(sorted(allowed))}"
                )
            conn.execute(
                "UPDATE sessions SET state = COALESCE(?, state), "
                "provider_session_id = COALESCE(?, provider_session_id), "
                "server_instance_id = COALESCE(?, server_instance_id), "
                "native_state = COALESCE(?, native_state), updated_at = ? WHERE id = ?",
                (
                    state,
                    self._text(provider_session_id, MAX_NAME_CHARS * 4),
                    server_instance_id,
                    None if native_state is None else self._json(native_state, "native state"),
                    self._now(),
                    session_id,
                ),
            )
        return self.get_session(session_id)

    # --- runs ------------------------------------------------------------------------------

    def create_run(
        self,
        prompt_text: str,
        *,
        session_id: str | None = None,
        server_instance_id: str | None = None,
        policy: str = "ask",
        unattended: bool = False,
        status: RunStatus = "QUEUED",
        run_id: str | None = None,
    ) -> Run:
        """Record a new run. ``prompt_text`` must already be redacted (it is checked again)."""
        _check_in(status, RUN_STATUSES, "run status")
        if len(prompt_text) > MAX_PROMPT_CHARS:
            raise UsageError(
                f"the prompt is {len(prompt_text)} characters; the bound is {MAX_PROMPT_CHARS}"
            )
        run_id = run_id or new_id("run")
        now = self._now()
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO runs (id, session_id, server_instance_id, status, prompt_text, "
                "policy, unattended, created_at, updated_at, owner) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    run_id,
                    session_id,
                    server_instance_id,
                    status,
                    self._text(prompt_text, MAX_PROMPT_CHARS),
                    _check_name(policy, "policy"),
                    int(unattended),
                    now,
                    now,
                    self.owner,
                ),
            )
        return self.get_run(run_id)

    def get_run(self, run_id: str) -> Run:
        """The run ``run_id``; RecordNotFound if there is none."""
        run = self.find_run(run_id)
        if run is None:
            raise RecordNotFound(f"no run {run_id!r}")
        return run

    def find_run(self, run_id: str) -> Run | None:
        """The run ``run_id``, or None."""
        row = self._conn.execute(
            f"SELECT {_RUN_COLUMNS} FROM runs WHERE id = ?", (run_id,)
        ).fetchone()
        return None if row is None else _run(row)

    def list_runs(
        self,
        *,
        status: OneOrMany[RunStatus] | None = None,
        session_id: str | None = None,
        limit: int = MAX_LIST_ROWS,
    ) -> list[Run]:
        """Runs, newest first, optionally only in ``status`` (one or several) or of a session."""
        sql = f"SELECT {_RUN_COLUMNS} FROM runs WHERE 1 = 1"
        args: list[Any] = []
        statuses = _expected_set(status)
        if statuses is not None:
            sql += f" AND status IN ({', '.join('?' for _ in statuses)})"
            args.extend(sorted(statuses))
        if session_id is not None:
            sql += " AND session_id = ?"
            args.append(session_id)
        sql += " ORDER BY created_at DESC, id DESC LIMIT ?"
        args.append(max(0, min(limit, MAX_LIST_ROWS)))
        return [_run(row) for row in self._conn.execute(sql, args)]

    def runs_for_server(
        self, server_instance_id: str, *, status: OneOrMany[RunStatus] | None = None
    ) -> list[Run]:
        """Runs on one server instance, oldest first (e.g. the active ones to fence on loss)."""
        sql = f"SELECT {_RUN_COLUMNS} FROM runs WHERE server_instance_id = ?"
        args: list[Any] = [server_instance_id]
        statuses = _expected_set(status)
        if statuses is not None:
            sql += f" AND status IN ({', '.join('?' for _ in statuses)})"
            args.extend(sorted(statuses))
        sql += f" ORDER BY created_at, id LIMIT {MAX_LIST_ROWS}"
        return [_run(row) for row in self._conn.execute(sql, args)]

    async def update_run_status(
        self,
        run_id: str,
        status: RunStatus,
        *,
        expected: OneOrMany[RunStatus] | None = None,
        stop_reason: str | None = None,
        error_code: str | None = None,
        diagnostic: str | None = None,
        recovery_reason: str | None = None,
        server_instance_id: str | None = None,
        skipped_frames: int | None = None,
        violations: int | None = None,
        response_ref: JournalRef | None = None,
    ) -> Run:
        """Move a run to ``status``, compare-and-set on ``expected``; other fields are set when
        given. ``response_ref`` (the prompt's answer) is flushed from the journal first.

        Raises StoreConflict when the run is not in ``expected`` or is already final.
        STARTING and later set ``started_at``; the ended statuses set ``ended_at``.
        """
        _check_in(status, RUN_STATUSES, "run status")
        allowed = _expected_set(expected)
        await self._publish([response_ref])
        now = self._now()
        with self._tx() as conn:
            row = conn.execute("SELECT status FROM runs WHERE id = ?", (run_id,)).fetchone()
            if row is None:
                raise RecordNotFound(f"no run {run_id!r}")
            current = row[0]
            if current in FINAL_RUN_STATUSES:
                raise StoreConflict(f"run {run_id} is already {current}; it cannot become {status}")
            if allowed is not None and current not in allowed:
                raise StoreConflict(
                    f"run {run_id} is {current}, not {' or '.join(sorted(allowed))}"
                )
            started = now if status not in ("QUEUED",) else None
            ended = now if status in ENDED_RUN_STATUSES else None
            conn.execute(
                "UPDATE runs SET status = ?, updated_at = ?, "
                "stop_reason = COALESCE(?, stop_reason), error_code = COALESCE(?, error_code), "
                "diagnostic = COALESCE(?, diagnostic), "
                "recovery_reason = COALESCE(?, recovery_reason), "
                "server_instance_id = COALESCE(?, server_instance_id), "
                "skipped_frames = COALESCE(?, skipped_frames), "
                "violations = COALESCE(?, violations), "
                "response_ref = COALESCE(?, response_ref), "
                "started_at = COALESCE(started_at, ?), ended_at = COALESCE(ended_at, ?) "
                "WHERE id = ?",
                (
                    status,
                    now,
                    self._text(stop_reason, MAX_NAME_CHARS),
                    self._text(error_code, MAX_NAME_CHARS),
                    self._text(diagnostic),
                    self._text(recovery_reason),
                    server_instance_id,
                    skipped_frames,
                    violations,
                    _ref_text(response_ref),
                    started,
                    ended,
                    run_id,
                ),
            )
        return self.get_run(run_id)

    def set_run_session(
        self, run_id: str, *, session_id: str, server_instance_id: str | None = None
    ) -> Run:
        """Attach a run to its session (and server instance, when given) once they are known."""
        with self._tx() as conn:
            updated = conn.execute(
                "UPDATE runs SET session_id = ?, "
                "server_instance_id = COALESCE(?, server_instance_id), updated_at = ? "
                "WHERE id = ?",
                (session_id, server_instance_id, self._now(), run_id),
            ).rowcount
        if updated == 0:
            raise RecordNotFound(f"no run {run_id!r}")
        return self.get_run(run_id)

    async def set_run_prompt_ref(self, run_id: str, prompt_ref: JournalRef) -> Run:
        """Record the journal reference of the run's session/prompt request (flushed first)."""
        await self._publish([prompt_ref])
        with self._tx() as conn:
            updated = conn.execute(
                "UPDATE runs SET prompt_ref = ?, updated_at = ? WHERE id = ?",
                (_ref_text(prompt_ref), self._now(), run_id),
            ).rowcount
        if updated == 0:
            raise RecordNotFound(f"no run {run_id!r}")
        return self.get_run(run_id)

    # --- items -----------------------------------------------------------------------------

    def append_items(self, run_id: str, items: Sequence[NewItem]) -> list[Item]:
        """Append items to a run, numbered after its last one, in one transaction."""
        now = self._now()
        rows = []
        contents = []  # the redacted values, returned as they were stored (not parsed back)
        with self._tx() as conn:
            if conn.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone() is None:
                raise RecordNotFound(f"no run {run_id!r}")
            last = conn.execute(
                "SELECT COALESCE(MAX(seq), 0) FROM items WHERE run_id = ?", (run_id,)
            ).fetchone()[0]
            for offset, item in enumerate(items, start=1):
                if item.coalesced_events < 1:
                    raise UsageError("an item coalesces at least one event")
                content, text = self._redacted_json(item.content, "item content")
                contents.append(content)
                rows.append(
                    (
                        run_id,
                        last + offset,
                        _check_name(item.kind, "item kind"),
                        text,
                        item.coalesced_events,
                        now,
                    )
                )
            conn.executemany(
                "INSERT INTO items (run_id, seq, kind, content, coalesced_events, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                rows,
            )
        return [
            Item(run_id, seq, kind, content, events, created)
            for (run_id, seq, kind, _, events, created), content in zip(rows, contents, strict=True)
        ]

    def list_items(self, run_id: str) -> list[Item]:
        """A run's items in order."""
        return [
            Item(row[0], row[1], row[2], orjson.loads(row[3]), row[4], row[5])
            for row in self._conn.execute(
                "SELECT run_id, seq, kind, content, coalesced_events, created_at FROM items "
                "WHERE run_id = ? ORDER BY seq",
                (run_id,),
            )
        ]

    # --- interactions ----------------------------------------------------------------------

    async def record_interaction(
        self,
        run_id: str,
        request_id: int | str | None,
        tool_call: Any,
        offered_options: Any,
        *,
        request_ref: JournalRef | None,
        interaction_id: str | None = None,
    ) -> Interaction:
        """Record a pending permission request (its journal record flushed first)."""
        await self._publish([request_ref])
        interaction_id = interaction_id or new_id("int")
        if isinstance(request_id, str):
            request_id = self._text(request_id, MAX_NAME_CHARS * 4)
        request_text = orjson.dumps(request_id).decode()
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO interactions (id, run_id, request_id, tool_call, offered, state, "
                "request_ref, created_at) VALUES (?, ?, ?, ?, ?, 'PENDING', ?, ?)",
                (
                    interaction_id,
                    run_id,
                    request_text,
                    self._json(tool_call, "tool call"),
                    self._json(offered_options, "offered options"),
                    _ref_text(request_ref),
                    self._now(),
                ),
            )
        return self.get_interaction(interaction_id)

    async def resolve_interaction(
        self,
        interaction_id: str,
        state: InteractionState,
        *,
        choice: str | None = None,
        chosen_by: ChosenBy | None = None,
        reason: str | None = None,
        response_ref: JournalRef | None = None,
        expected: OneOrMany[InteractionState] = "PENDING",
    ) -> Interaction:
        """Record the decision on a permission request (compare-and-set, PENDING by default).
        ``response_ref`` (the answer sent to the agent) is flushed from the journal first."""
        _check_in(state, INTERACTION_STATES, "interaction state")
        if chosen_by is not None:
            _check_in(chosen_by, CHOSEN_BY, "chooser")
        allowed = _expected_set(expected)
        await self._publish([response_ref])
        with self._tx() as conn:
            row = conn.execute(
                "SELECT state FROM interactions WHERE id = ?", (interaction_id,)
            ).fetchone()
            if row is None:
                raise RecordNotFound(f"no interaction {interaction_id!r}")
            if allowed is not None and row[0] not in allowed:
                raise StoreConflict(
                    f"interaction {interaction_id} is {row[0]}, not {' or '.join(sorted(allowed))}"
                )
            conn.execute(
                "UPDATE interactions SET state = ?, choice = ?, chosen_by = ?, reason = ?, "
                "response_ref = COALESCE(?, response_ref), resolved_at = ? WHERE id = ?",
                (
                    state,
                    self._text(choice, MAX_NAME_CHARS * 4),
                    chosen_by,
                    self._text(reason),
                    _ref_text(response_ref),
                    None if state == "PENDING" else self._now(),
                    interaction_id,
                ),
            )
        return self.get_interaction(interaction_id)

    def abort_pending_interactions(self, run_ids: Collection[str], reason: str) -> int:
        """Server loss: every PENDING interaction of ``run_ids`` becomes ABORTED with
        ``reason``. Returns how many."""
        if not run_ids:
            return 0
        ids = sorted(run_ids)
        with self._tx() as conn:
            return conn.execute(
                "UPDATE interactions SET state = 'ABORTED', reason = ?, resolved_at = ? "
                f"WHERE state = 'PENDING' AND run_id IN ({', '.join('?' for _ in ids)})",
                (self._text(reason), self._now(), *ids),
            ).rowcount

    def get_interaction(self, interaction_id: str) -> Interaction:
        """The interaction ``interaction_id``; RecordNotFound if there is none."""
        row = self._conn.execute(
            f"SELECT {_INTERACTION_COLUMNS} FROM interactions WHERE id = ?", (interaction_id,)
        ).fetchone()
        if row is None:
            raise RecordNotFound(f"no interaction {interaction_id!r}")
        return _interaction(row)

    def list_interactions(
        self, run_id: str, *, state: InteractionState | None = None
    ) -> list[Interaction]:
        """A run's interactions, oldest first."""
        sql = f"SELECT {_INTERACTION_COLUMNS} FROM interactions WHERE run_id = ?"
        args: list[Any] = [run_id]
        if state is not None:
            sql += " AND state = ?"
            args.append(state)
        sql += f" ORDER BY created_at, id LIMIT {MAX_LIST_ROWS}"
        return [_interaction(row) for row in self._conn.execute(sql, args)]

    # --- observations ----------------------------------------------------------------------

    async def record_observation(
        self,
        kind: ObservationKind,
        payload: Any,
        *,
        session_id: str | None = None,
        run_id: str | None = None,
        journal_ref: JournalRef | None = None,
    ) -> Observation:
        """Record what the provider reported (PROVIDER_REPORTED, citing the journal record it
        came from, flushed first) or what Baton resolved (BATON_RESOLUTION)."""
        _check_in(kind, OBSERVATION_KINDS, "observation kind")
        if session_id is None and run_id is None:
            raise UsageError("an observation belongs to a session or a run")
        await self._publish([journal_ref])
        with self._tx() as conn:
            cursor = conn.execute(
                "INSERT INTO observations (session_id, run_id, kind, payload, journal_ref, "
                "recorded_at) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    session_id,
                    run_id,
                    kind,
                    self._json(payload, "observation payload"),
                    _ref_text(journal_ref),
                    self._now(),
                ),
            )
            observation_id = cursor.lastrowid
        row = self._conn.execute(
            f"SELECT {_OBSERVATION_COLUMNS} FROM observations WHERE id = ?", (observation_id,)
        ).fetchone()
        return _observation(row)

    def list_observations(
        self,
        *,
        session_id: str | None = None,
        run_id: str | None = None,
        kind: ObservationKind | None = None,
    ) -> list[Observation]:
        """Observations, oldest first, filtered by session, run and kind."""
        sql = f"SELECT {_OBSERVATION_COLUMNS} FROM observations WHERE 1 = 1"
        args: list[Any] = []
        for column, value in (("session_id", session_id), ("run_id", run_id), ("kind", kind)):
            if value is not None:
                sql += f" AND {column} = ?"
                args.append(value)
        sql += f" ORDER BY id LIMIT {MAX_LIST_ROWS}"
        return [_observation(row) for row in self._conn.execute(sql, args)]

    # --- readiness -------------------------------------------------------------------------

    def record_readiness(self, profile: str, state: str, result: Any) -> Readiness:
        """Replace the readiness result of ``profile``."""
        now = self._now()
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO readiness (profile, state, result, checked_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (profile) DO UPDATE SET state = excluded.state, "
                "result = excluded.result, checked_at = excluded.checked_at",
                (
                    _check_name(profile, "profile"),
                    _check_name(state, "readiness state"),
                    self._json(result, "readiness result"),
                    now,
                ),
            )
        readiness = self.get_readiness(profile)
        assert readiness is not None
        return readiness

    def get_readiness(self, profile: str) -> Readiness | None:
        """The latest readiness result of ``profile``, or None."""
        row = self._conn.execute(
            "SELECT profile, state, result, checked_at FROM readiness WHERE profile = ?",
            (profile,),
        ).fetchone()
        return None if row is None else Readiness(row[0], row[1], orjson.loads(row[2]), row[3])

    def list_readiness(self) -> list[Readiness]:
        """Every profile's latest readiness result, by profile."""
        return [
            Readiness(row[0], row[1], orjson.loads(row[2]), row[3])
            for row in self._conn.execute(
                "SELECT profile, state, result, checked_at FROM readiness ORDER BY profile"
            )
        ]

    # --- evidence --------------------------------------------------------------------------

    def cited_refs(self, run_id: str | None = None) -> list[tuple[str, JournalRef]]:
        """Every journal reference the store cites (or, with ``run_id``, those of one run and
        its interactions and observations), each with a label naming the citing record. For
        ``baton journal verify``."""
        where_run = "" if run_id is None else " AND id = ?"
        where_child = "" if run_id is None else " AND run_id = ?"
        args: tuple[str, ...] = () if run_id is None else (run_id,)
        queries = (
            (
                "run {} prompt",
                f"SELECT id, prompt_ref FROM runs WHERE prompt_ref IS NOT NULL{where_run}",
            ),
            (
                "run {} response",
                f"SELECT id, response_ref FROM runs WHERE response_ref IS NOT NULL{where_run}",
            ),
            (
                "interaction {} request",
                "SELECT id, request_ref FROM interactions WHERE request_ref IS NOT NULL"
                + where_child,
            ),
            (
                "interaction {} response",
                "SELECT id, response_ref FROM interactions WHERE response_ref IS NOT NULL"
                + where_child,
            ),
            (
                "observation {}",
                "SELECT id, journal_ref FROM observations WHERE journal_ref IS NOT NULL"
                + where_child,
            ),
        )
        cited = []
        for label, sql in queries:
            for row in self._conn.execute(sql, args).fetchall():
                ref = _ref_value(row[1])
                if ref is not None:
                    cited.append((label.format(row[0]), ref))
        return cited


# --- row mapping ---------------------------------------------------------------------------


def _server(row: Sequence[Any]) -> ServerInstance:
    return ServerInstance(
        row[0],
        row[1],
        row[2],
        row[3],
        row[4],
        cast(ServerState, row[5]),
        row[6],
        row[7],
        row[8],
        row[9],
        row[10],
    )


def _session(row: Sequence[Any]) -> Session:
    return Session(
        row[0],
        row[1],
        row[2],
        row[3],
        row[4],
        cast(SessionState, row[5]),
        orjson.loads(row[6]),
        row[7],
        row[8],
    )


def _run(row: Sequence[Any]) -> Run:
    return Run(
        id=row[0],
        session_id=row[1],
        server_instance_id=row[2],
        status=cast(RunStatus, row[3]),
        stop_reason=row[4],
        prompt_text=row[5],
        error_code=row[6],
        diagnostic=row[7],
        skipped_frames=row[8],
        violations=row[9],
        recovery_reason=row[10],
        policy=row[11],
        unattended=bool(row[12]),
        prompt_ref=_ref_value(row[13]),
        response_ref=_ref_value(row[14]),
        created_at=row[15],
        started_at=row[16],
        ended_at=row[17],
        updated_at=row[18],
        owner=row[19],
    )


def _interaction(row: Sequence[Any]) -> Interaction:
    return Interaction(
        id=row[0],
        run_id=row[1],
        request_id=orjson.loads(row[2]),
        tool_call=orjson.loads(row[3]),
        offered_options=orjson.loads(row[4]),
        state=cast(InteractionState, row[5]),
        choice=row[6],
        chosen_by=cast("ChosenBy | None", row[7]),
        reason=row[8],
        request_ref=_ref_value(row[9]),
        response_ref=_ref_value(row[10]),
        created_at=row[11],
        resolved_at=row[12],
    )


def _observation(row: Sequence[Any]) -> Observation:
    return Observation(
        row[0],
        row[1],
        row[2],
        cast(ObservationKind, row[3]),
        orjson.loads(row[4]),
        _ref_value(row[5]),
        row[6],
    )
