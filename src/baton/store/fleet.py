"""What the queue keeps in the shared store (issue 22): submissions, workers, pinned sessions
and the events of queued runs. Mixed into :class:`baton.store.Store`; docs/fleet.md.

A submission is a QUEUED run plus how to run it: created in one transaction with its run, so
a run id printed by ``baton submit`` always has its request, and an idempotency key names at
most one run (a second submission with the key gets the first one's run, whatever it became).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

import orjson

from baton.errors import RecordNotFound, StoreConflict, UsageError
from baton.store.database import (
    MAX_ID_CHARS,
    MAX_LIST_ROWS,
    MAX_PROMPT_CHARS,
    StoreDatabase,
    check_name,
    new_id,
)

#: Most events one read of a run's events returns (a waiting submitter reads again).
MAX_EVENTS_PER_READ: Final = 1_000

FleetWorkerState = Literal["RUNNING", "STOPPED", "LOST"]


@dataclass(frozen=True, slots=True)
class Submission:
    """A queued run's submission: where it was queued and what to run."""

    run_id: str
    queue: str
    idempotency_key: str | None
    session_name: str | None
    request: dict[str, Any]
    job_id: int | None
    worker: str | None
    submitted_at: str
    taken_at: str | None


@dataclass(frozen=True, slots=True)
class FleetWorkerRecord:
    """A worker as the store knows it: its host, queues, concurrency and last heartbeat."""

    name: str
    host: str
    owner: str
    queues: list[str]
    concurrency: int
    state: FleetWorkerState
    started_at: str
    heartbeat_at: str
    stopped_at: str | None


@dataclass(frozen=True, slots=True)
class PinnedSession:
    """A named session and the worker (host) that holds it: its turns run there only."""

    name: str
    worker: str
    queue: str
    provider_session_id: str | None
    created_at: str
    updated_at: str


_SUBMISSION_COLUMNS: Final = (
    "run_id, queue, idempotency_key, session_name, request, job_id, worker, submitted_at, taken_at"
)
_WORKER_COLUMNS: Final = (
    "name, host, owner, queues, concurrency, state, started_at, heartbeat_at, stopped_at"
)
_SESSION_COLUMNS: Final = "name, worker, queue, provider_session_id, created_at, updated_at"


class FleetRecords(StoreDatabase):
    """Submissions, workers, pinned sessions and run events. Mixed into :class:`baton.store.Store`."""

    # --- submissions -----------------------------------------------------------------------

    def create_submission(
        self,
        prompt_text: str,
        *,
        queue: str,
        request: Mapping[str, Any],
        policy: str = "ask",
        unattended: bool = False,
        idempotency_key: str | None = None,
        session_name: str | None = None,
    ) -> tuple[Submission, bool]:
        """A QUEUED run and its submission, in one transaction; ``(submission, created)``.
        With an ``idempotency_key`` already used, nothing is written and the first
        submission is returned with ``created`` False."""
        if len(prompt_text) > MAX_PROMPT_CHARS:
            raise UsageError(
                f"the prompt is {len(prompt_text)} characters; the bound is {MAX_PROMPT_CHARS}"
            )
        check_name(queue, "queue")
        if idempotency_key is not None:
            check_name(idempotency_key, "idempotency key")
        if session_name is not None:
            check_name(session_name, "session name")
        run_id = new_id("run")
        now = self._now()
        keys = () if idempotency_key is None else (f"idempotency:{idempotency_key}",)
        with self._tx(*keys) as conn:
            if idempotency_key is not None:
                row = conn.execute(
                    "SELECT run_id FROM fleet_submissions WHERE idempotency_key = ?",
                    (idempotency_key,),
                ).fetchone()
                if row is not None:
                    return self.get_submission(row[0]), False
            conn.execute(
                "INSERT INTO runs (id, status, prompt_text, policy, unattended, created_at, "
                "updated_at, owner) VALUES (?, 'QUEUED', ?, ?, ?, ?, ?, ?)",
                (
                    run_id,
                    self._text(prompt_text, MAX_PROMPT_CHARS),
                    check_name(policy, "policy"),
                    int(unattended),
                    now,
                    now,
                    self.owner,
                ),
            )
            conn.execute(
                "INSERT INTO fleet_submissions (run_id, queue, idempotency_key, session_name, "
                "request, submitted_at) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    run_id,
                    queue,
                    idempotency_key,
                    session_name,
                    self._json(dict(request), "submitted request"),
                    now,
                ),
            )
        return self.get_submission(run_id), True

    def get_submission(self, run_id: str) -> Submission:
        """The submission of queued run ``run_id``; RecordNotFound if it was not queued."""
        submission = self.find_submission(run_id)
        if submission is None:
            raise RecordNotFound(f"run {run_id!r} was not submitted to a queue")
        return submission

    def find_submission(self, run_id: str) -> Submission | None:
        """The submission of ``run_id``, or None."""
        row = self._conn.execute(
            f"SELECT {_SUBMISSION_COLUMNS} FROM fleet_submissions WHERE run_id = ?", (run_id,)
        ).fetchone()
        return None if row is None else _submission(row)

    def set_submission_job(self, run_id: str, job_id: int) -> None:
        """Record the job engine's id of the submission's job."""
        with self._tx() as conn:
            conn.execute(
                "UPDATE fleet_submissions SET job_id = ? WHERE run_id = ?", (job_id, run_id)
            )

    def take_submission(self, run_id: str, worker: str) -> Submission:
        """The worker ``worker`` takes the submission (once: StoreConflict if another did;
        taking it again as the same worker is a no-op, for a write whose commit was cut off)."""
        now = self._now()
        with self._tx() as conn:
            row = conn.execute(
                f"SELECT worker FROM fleet_submissions WHERE run_id = ?{self._row_lock}",
                (run_id,),
            ).fetchone()
            if row is None:
                raise RecordNotFound(f"run {run_id!r} was not submitted to a queue")
            if row[0] == worker:
                return self.get_submission(run_id)
            if row[0] is not None:
                raise StoreConflict(f"run {run_id} was already taken by worker {row[0]}")
            conn.execute(
                "UPDATE fleet_submissions SET worker = ?, taken_at = ? WHERE run_id = ?",
                (check_name(worker, "worker"), now, run_id),
            )
        return self.get_submission(run_id)

    def submissions_taken_by(self, worker: str) -> list[Submission]:
        """Submissions a worker took, oldest first."""
        return [
            _submission(row)
            for row in self._conn.execute(
                f"SELECT {_SUBMISSION_COLUMNS} FROM fleet_submissions WHERE worker = ? "
                f"ORDER BY submitted_at, run_id LIMIT {MAX_LIST_ROWS}",
                (worker,),
            )
        ]

    # --- workers ---------------------------------------------------------------------------

    def register_worker(
        self, name: str, *, host: str, queues: Sequence[str], concurrency: int
    ) -> FleetWorkerRecord:
        """Record a worker starting (a restarted worker of the same name takes its row)."""
        now = self._now()
        with self._tx() as conn:
            conn.execute("DELETE FROM fleet_workers WHERE name = ?", (check_name(name, "worker"),))
            conn.execute(
                f"INSERT INTO fleet_workers ({_WORKER_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, 'RUNNING', ?, ?, NULL)",
                (
                    name,
                    check_name(host, "host"),
                    self.owner,
                    orjson.dumps(list(queues)).decode(),
                    concurrency,
                    now,
                    now,
                ),
            )
        return self.get_worker(name)

    def worker_heartbeat(self, name: str) -> None:
        """The worker is alive now. StoreConflict when it was declared LOST meanwhile (its
        turns were settled: it must stop taking work)."""
        with self._tx() as conn:
            changed = conn.execute(
                "UPDATE fleet_workers SET heartbeat_at = ? WHERE name = ? AND state = 'RUNNING'",
                (self._now(), name),
            ).rowcount
            if changed != 1:
                row = conn.execute(
                    "SELECT state FROM fleet_workers WHERE name = ?", (name,)
                ).fetchone()
                raise StoreConflict(f"worker {name} is {row[0] if row else 'unknown'}")

    def end_worker(
        self, name: str, state: FleetWorkerState, *, expected: FleetWorkerState = "RUNNING"
    ) -> bool:
        """Move a worker from ``expected`` to STOPPED or LOST; False when it was not there."""
        now = self._now()
        with self._tx() as conn:
            changed = conn.execute(
                "UPDATE fleet_workers SET state = ?, stopped_at = ? WHERE name = ? AND state = ?",
                (state, now, name, expected),
            ).rowcount
        return changed == 1

    def get_worker(self, name: str) -> FleetWorkerRecord:
        """The worker ``name``; RecordNotFound if there is none."""
        row = self._conn.execute(
            f"SELECT {_WORKER_COLUMNS} FROM fleet_workers WHERE name = ?", (name,)
        ).fetchone()
        if row is None:
            raise RecordNotFound(f"no worker {name!r}")
        return _worker(row)

    def list_workers(self) -> list[FleetWorkerRecord]:
        """Every worker, by name."""
        return [
            _worker(row)
            for row in self._conn.execute(
                f"SELECT {_WORKER_COLUMNS} FROM fleet_workers ORDER BY name LIMIT {MAX_LIST_ROWS}"
            )
        ]

    # --- pinned sessions -------------------------------------------------------------------

    def pin_session(self, name: str, *, worker: str, queue: str) -> PinnedSession:
        """Pin session ``name`` to ``worker`` unless it is pinned already; the pin that holds."""
        now = self._now()
        with self._tx(f"fleet_session:{name}") as conn:
            row = conn.execute("SELECT 1 FROM fleet_sessions WHERE name = ?", (name,)).fetchone()
            if row is None:
                conn.execute(
                    f"INSERT INTO fleet_sessions ({_SESSION_COLUMNS}) VALUES (?, ?, ?, NULL, ?, ?)",
                    (check_name(name, "session name"), worker, queue, now, now),
                )
        return self.get_pinned_session(name)

    def find_pinned_session(self, name: str) -> PinnedSession | None:
        """The pin of session ``name``, or None."""
        row = self._conn.execute(
            f"SELECT {_SESSION_COLUMNS} FROM fleet_sessions WHERE name = ?", (name,)
        ).fetchone()
        return None if row is None else _pinned(row)

    def get_pinned_session(self, name: str) -> PinnedSession:
        """The pin of session ``name``; RecordNotFound if there is none."""
        pinned = self.find_pinned_session(name)
        if pinned is None:
            raise RecordNotFound(f"no session {name!r} in the fleet")
        return pinned

    def set_pinned_provider_session(self, name: str, provider_session_id: str) -> None:
        """The provider's session id of a pinned session (what its next turn attaches)."""
        with self._tx() as conn:
            conn.execute(
                "UPDATE fleet_sessions SET provider_session_id = ?, updated_at = ? WHERE name = ?",
                (self._text(provider_session_id, MAX_ID_CHARS), self._now(), name),
            )

    def list_pinned_sessions(self) -> list[PinnedSession]:
        """Every pinned session, by name."""
        return [
            _pinned(row)
            for row in self._conn.execute(
                f"SELECT {_SESSION_COLUMNS} FROM fleet_sessions ORDER BY name LIMIT {MAX_LIST_ROWS}"
            )
        ]

    # --- events of queued runs -------------------------------------------------------------

    def append_run_events(self, run_id: str, events: Sequence[Mapping[str, Any]]) -> None:
        """Append a run's events (already redacted by the runtime; checked again)."""
        if not events:
            return
        with self._tx() as conn:
            self._fence(conn, run_id)  # the run's row, locked; this process's claim checked
            last = conn.execute(
                "SELECT MAX(seq) FROM run_events WHERE run_id = ?", (run_id,)
            ).fetchone()
            start = 0 if last is None or last[0] is None else int(last[0]) + 1
            self._insert_rows(
                conn,
                "INSERT INTO run_events (run_id, seq, event)",
                [
                    (run_id, start + index, self._json(dict(event), "run event"))
                    for index, event in enumerate(events)
                ],
            )

    def run_events(self, run_id: str, *, after: int = -1) -> list[tuple[int, dict[str, Any]]]:
        """A run's events after sequence ``after``, in order (at most MAX_EVENTS_PER_READ)."""
        return [
            (int(row[0]), orjson.loads(row[1]))
            for row in self._conn.execute(
                "SELECT seq, event FROM run_events WHERE run_id = ? AND seq > ? "
                f"ORDER BY seq LIMIT {MAX_EVENTS_PER_READ}",
                (run_id, after),
            )
        ]


def _submission(row: Sequence[Any]) -> Submission:
    return Submission(
        run_id=row[0],
        queue=row[1],
        idempotency_key=row[2],
        session_name=row[3],
        request=orjson.loads(row[4]),
        job_id=row[5],
        worker=row[6],
        submitted_at=row[7],
        taken_at=row[8],
    )


def _worker(row: Sequence[Any]) -> FleetWorkerRecord:
    return FleetWorkerRecord(
        name=row[0],
        host=row[1],
        owner=row[2],
        queues=list(orjson.loads(row[3])),
        concurrency=int(row[4]),
        state=row[5],
        started_at=row[6],
        heartbeat_at=row[7],
        stopped_at=row[8],
    )


def _pinned(row: Sequence[Any]) -> PinnedSession:
    return PinnedSession(*row)
