"""The ``runs`` table: one prompt turn each, its status (through the transition table of
:mod:`baton.store.run_status`), outcome and journal references."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, cast

from baton.durable.refs import JournalRef
from baton.errors import RecordNotFound, StoreConflict, UsageError
from baton.store.database import (
    MAX_LIST_ROWS,
    MAX_NAME_CHARS,
    MAX_PROMPT_CHARS,
    StoreDatabase,
    check_in,
    check_name,
    expected_set,
    new_id,
    ref_text,
    ref_value,
)
from baton.store.models import (
    ENDED_RUN_STATUSES,
    RUN_STATUSES,
    OneOrMany,
    Run,
    RunStatus,
)
from baton.store.run_status import check_initial_status, check_run_transition

RUN_COLUMNS: Final = (
    "id, session_id, server_instance_id, status, stop_reason, prompt_text, error_code, "
    "diagnostic, skipped_frames, violations, recovery_reason, policy, unattended, prompt_ref, "
    "response_ref, created_at, started_at, ended_at, updated_at, owner, pending_questions, epoch"
)


class RunRecords(StoreDatabase):
    """Runs: create, read, list, status transitions, session and prompt reference. Mixed into :class:`baton.store.Store`."""

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
        check_in(status, RUN_STATUSES, "run status")
        check_initial_status(status)
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
                    check_name(policy, "policy"),
                    int(unattended),
                    now,
                    now,
                    self.owner,
                ),
            )
        if status != "QUEUED":
            self._hold_claim(run_id, 0)  # this process runs it: its writes carry the claim
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
            f"SELECT {RUN_COLUMNS} FROM runs WHERE id = ?", (run_id,)
        ).fetchone()
        return None if row is None else _run(row)

    def list_runs(
        self,
        *,
        status: OneOrMany[RunStatus] | None = None,
        session_id: str | None = None,
        owner: str | None = None,
        agent: str | None = None,
        cwd: str | None = None,
        id_prefixes: Sequence[str] = (),
        limit: int = MAX_LIST_ROWS,
    ) -> list[Run]:
        """Runs, newest first, optionally only in ``status`` (one or several), of a session,
        owned by one Baton process (``owner``), of an agent profile (``agent``: the profile of
        the run's server instance, else of its session, as listings show it) or in a working
        directory (``cwd``: its session's), or whose id starts with one of ``id_prefixes``.
        Every filter and the limit are applied in SQL."""
        sql = f"SELECT {RUN_COLUMNS} FROM runs WHERE 1 = 1"
        args: list[Any] = []
        statuses = expected_set(status)
        if statuses is not None:
            sql += f" AND status IN ({', '.join('?' for _ in statuses)})"
            args.extend(sorted(statuses))
        if session_id is not None:
            sql += " AND session_id = ?"
            args.append(session_id)
        if owner is not None:
            sql += " AND owner = ?"
            args.append(owner)
        if agent is not None:
            sql += (
                " AND COALESCE((SELECT profile FROM server_instances WHERE id = "
                "runs.server_instance_id), (SELECT profile FROM sessions WHERE id = "
                "runs.session_id)) = ?"
            )
            args.append(agent)
        if cwd is not None:
            sql += " AND (SELECT cwd FROM sessions WHERE id = runs.session_id) = ?"
            args.append(cwd)
        if id_prefixes:
            # length() of the parameter, not a Python int: PostgreSQL's substr takes integer,
            # and a driver may send an int as bigint.
            sql += f" AND ({' OR '.join('substr(id, 1, length(?)) = ?' for _ in id_prefixes)})"
            for prefix in id_prefixes:
                args.extend((prefix, prefix))
        sql += " ORDER BY created_at DESC, id DESC LIMIT ?"
        args.append(max(0, min(limit, MAX_LIST_ROWS)))
        return [_run(row) for row in self._conn.execute(sql, args)]

    def runs_for_server(
        self, server_instance_id: str, *, status: OneOrMany[RunStatus] | None = None
    ) -> list[Run]:
        """Runs on one server instance, oldest first (e.g. the active ones to fence on loss)."""
        sql = f"SELECT {RUN_COLUMNS} FROM runs WHERE server_instance_id = ?"
        args: list[Any] = [server_instance_id]
        statuses = expected_set(status)
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
        owner: str | None = None,
    ) -> Run:
        """Move a run to ``status``, compare-and-set on ``expected``; other fields are set when
        given (``owner``: the Baton process taking a queued run over). ``response_ref`` (the prompt's answer) is flushed from the journal first.

        Raises StoreConflict when the run is not in ``expected``, and its subclass
        RunStatusTransitionInvalid when :data:`~baton.store.run_status.RUN_STATUS_TRANSITIONS`
        has no edge from the run's status to ``status`` (a final status has none).
        STARTING and later set ``started_at``; the ended statuses set ``ended_at``.
        """
        check_in(status, RUN_STATUSES, "run status")
        allowed = expected_set(expected)
        await self._publish([response_ref])
        return await self.offload(
            lambda: self._write_run_status(
                run_id,
                status,
                allowed,
                stop_reason=stop_reason,
                error_code=error_code,
                diagnostic=diagnostic,
                recovery_reason=recovery_reason,
                server_instance_id=server_instance_id,
                skipped_frames=skipped_frames,
                violations=violations,
                response_ref=response_ref,
                owner=owner,
            )
        )

    def _write_run_status(
        self,
        run_id: str,
        status: RunStatus,
        allowed: frozenset[str] | None,
        *,
        stop_reason: str | None,
        error_code: str | None,
        diagnostic: str | None,
        recovery_reason: str | None,
        server_instance_id: str | None,
        skipped_frames: int | None,
        violations: int | None,
        response_ref: JournalRef | None,
        owner: str | None,
    ) -> Run:
        """The status write of :meth:`update_run_status`, in one transaction holding the
        run's row (fenced by this process's claim, if it holds one: module docstring of
        :mod:`baton.store.database`)."""
        now = self._now()
        with self._tx() as conn:
            row = conn.execute(
                f"SELECT status, pending_questions, owner, epoch FROM runs WHERE id = ?"
                f"{self._row_lock}",
                (run_id,),
            ).fetchone()
            if row is None:
                raise RecordNotFound(f"no run {run_id!r}")
            current, waiting, current_owner, epoch = row[0], int(row[1] or 0), row[2], int(row[3])
            held = self.claims.get(run_id)
            if held is not None and (current_owner != self.owner or epoch != held):
                self._claim_lost(run_id, current_owner, epoch, current)
            check_run_transition(run_id, current, status)
            if status == "RUNNING" and current in ("STARTING", "QUEUED") and waiting > 0:
                # A question opened before RUNNING was written (the agent asked at once, while
                # the prompt's own record was being written): the run goes on to wait, along
                # the table's RUNNING -> AWAITING_APPROVAL edge, in this one write.
                check_run_transition(run_id, status, "AWAITING_APPROVAL")
                status = "AWAITING_APPROVAL"
            if allowed is not None and current not in allowed:
                raise StoreConflict(
                    f"run {run_id} is {current}, not {' or '.join(sorted(allowed))}"
                )
            # A write by another process than the run's owner (a settle, an adoption, a take)
            # moves the claim on: the owner's later writes carry a stale epoch and are refused.
            new_epoch = epoch if held is not None or current_owner == self.owner else epoch + 1
            # A cancelled run never started: it gets an end and no start.
            started = now if status not in ("QUEUED", "CANCELLED") else None
            ended = now if status in ENDED_RUN_STATUSES else None
            changed = conn.execute(
                "UPDATE runs SET status = ?, updated_at = ?, "
                "stop_reason = COALESCE(?, stop_reason), error_code = COALESCE(?, error_code), "
                "diagnostic = COALESCE(?, diagnostic), "
                "recovery_reason = COALESCE(?, recovery_reason), "
                "server_instance_id = COALESCE(?, server_instance_id), "
                "skipped_frames = COALESCE(?, skipped_frames), "
                "violations = COALESCE(?, violations), "
                "response_ref = COALESCE(?, response_ref), owner = COALESCE(?, owner), "
                "started_at = COALESCE(started_at, ?), ended_at = COALESCE(ended_at, ?), "
                "pending_questions = CASE WHEN ? THEN 0 ELSE pending_questions END, "
                "epoch = ? "
                # Compare-and-set in the statement itself: the status read above and the
                # token (owner, epoch) it was checked against.
                "WHERE id = ? AND status = ? AND epoch = ? AND COALESCE(owner, '') = ?",
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
                    ref_text(response_ref),
                    owner,
                    started,
                    ended,
                    # An ended run has no question open (each was withdrawn with its turn).
                    ended is not None,
                    new_epoch,
                    run_id,
                    current,
                    epoch,
                    current_owner or "",
                ),
            ).rowcount
            if changed != 1:
                if held is not None:
                    self._claim_lost(run_id, current_owner, epoch, current)
                raise StoreConflict(f"run {run_id} changed while it was being written")
        if owner == self.owner and status not in ENDED_RUN_STATUSES:
            self._hold_claim(run_id, new_epoch)
        elif held is not None and status in ENDED_RUN_STATUSES:
            self.claims.pop(run_id, None)
        return self.get_run(run_id)

    def set_pending_questions(self, run_id: str, count: int) -> Run:
        """Record that ``count`` questions of the run wait for a person, and move the run
        through the run-status table with it: RUNNING becomes AWAITING_APPROVAL when the
        first opens, AWAITING_APPROVAL becomes RUNNING when the last closes. In any other
        status (STARTING, INTERRUPTING, an outcome) only the count is written; an ended run
        keeps zero. One transaction; no-op for an unknown run id is refused (RecordNotFound)."""
        if count < 0:
            raise ValueError("a count of questions is never negative")
        with self._tx() as conn:
            current, _owner, _epoch = self._fence(conn, run_id)
            status = current
            if count > 0 and current == "RUNNING":
                status = "AWAITING_APPROVAL"
            elif count == 0 and current == "AWAITING_APPROVAL":
                status = "RUNNING"
            if status != current:
                check_run_transition(run_id, current, status)
            if current in ENDED_RUN_STATUSES:
                count = 0
            conn.execute(
                "UPDATE runs SET status = ?, pending_questions = ?, updated_at = ? WHERE id = ?",
                (status, count, self._now(), run_id),
            )
        return self.get_run(run_id)

    def set_run_session(
        self, run_id: str, *, session_id: str, server_instance_id: str | None = None
    ) -> Run:
        """Attach a run to its session (and server instance, when given) once they are known
        (fenced by this process's claim)."""
        fence, token = self._claim_where(run_id)
        with self._tx() as conn:
            updated = conn.execute(
                "UPDATE runs SET session_id = ?, "
                "server_instance_id = COALESCE(?, server_instance_id), updated_at = ? "
                f"WHERE id = ?{fence}",
                (session_id, server_instance_id, self._now(), run_id, *token),
            ).rowcount
            if updated == 0:
                self._fence(conn, run_id)  # the reason: no run, or the claim was lost
        return self.get_run(run_id)

    async def set_run_prompt_ref(self, run_id: str, prompt_ref: JournalRef) -> Run:
        """Record the journal reference of the run's session/prompt request (flushed first)."""
        await self._publish([prompt_ref])

        def write() -> Run:
            fence, token = self._claim_where(run_id)
            with self._tx() as conn:
                updated = conn.execute(
                    f"UPDATE runs SET prompt_ref = ?, updated_at = ? WHERE id = ?{fence}",
                    (ref_text(prompt_ref), self._now(), run_id, *token),
                ).rowcount
                if updated == 0:
                    self._fence(conn, run_id)  # the reason: no run, or the claim was lost
            return self.get_run(run_id)

        return await self.offload(write)


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
        prompt_ref=ref_value(row[13]),
        response_ref=ref_value(row[14]),
        created_at=row[15],
        started_at=row[16],
        ended_at=row[17],
        updated_at=row[18],
        owner=row[19],
        pending_questions=int(row[20] or 0),
        epoch=int(row[21] or 0),
    )
