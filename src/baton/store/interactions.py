"""The ``interactions`` and ``observations`` tables: permission requests with their decisions,
and evidence about sessions and runs; each cites the journal records it came from."""

from __future__ import annotations

import contextlib
from collections.abc import Collection, Sequence
from typing import Any, Final, cast

import orjson

from baton.durable.refs import JournalRef
from baton.errors import RecordNotFound, StoreConflict, UsageError
from baton.store.database import (
    MAX_ID_CHARS,
    MAX_LIST_ROWS,
    StoreDatabase,
    check_in,
    expected_set,
    new_id,
    ref_text,
    ref_value,
)
from baton.store.models import (
    CHOSEN_BY,
    INTERACTION_STATES,
    OBSERVATION_KINDS,
    ChosenBy,
    Interaction,
    InteractionState,
    Observation,
    ObservationKind,
    OneOrMany,
)

INTERACTION_COLUMNS: Final = (
    "id, run_id, request_id, tool_call, offered, state, choice, chosen_by, reason, "
    "request_ref, response_ref, created_at, resolved_at"
)
OBSERVATION_COLUMNS: Final = "id, session_id, run_id, kind, payload, journal_ref, recorded_at"


class InteractionRecords(StoreDatabase):
    """Interactions (permission requests and decisions) and observations. Mixed into :class:`baton.store.Store`."""

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
            request_id = self._text(request_id, MAX_ID_CHARS)
        request_text = orjson.dumps(request_id).decode()

        def write() -> Interaction:
            with self._tx() as conn:
                self._fence(conn, run_id)  # the run's row, locked; this process's claim checked
                self._insert_interaction(
                    conn,
                    interaction_id,
                    run_id,
                    request_text,
                    tool_call,
                    offered_options,
                    request_ref,
                )
            return self.get_interaction(interaction_id)

        return await self.offload(write)

    def _insert_interaction(
        self,
        conn: Any,
        interaction_id: str,
        run_id: str,
        request_text: str,
        tool_call: Any,
        offered_options: Any,
        request_ref: JournalRef | None,
    ) -> None:
        conn.execute(
            "INSERT INTO interactions (id, run_id, request_id, tool_call, offered, state, "
            "request_ref, created_at) VALUES (?, ?, ?, ?, ?, 'PENDING', ?, ?)",
            (
                interaction_id,
                run_id,
                request_text,
                self._json(tool_call, "tool call"),
                self._json(offered_options, "offered options"),
                ref_text(request_ref),
                self._now(),
            ),
        )

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
        check_in(state, INTERACTION_STATES, "interaction state")
        if chosen_by is not None:
            check_in(chosen_by, CHOSEN_BY, "chooser")
        allowed = expected_set(expected)
        await self._publish([response_ref])
        return await self.offload(
            lambda: self._write_resolution(
                interaction_id, state, allowed, choice, chosen_by, reason, response_ref
            )
        )

    def _write_resolution(
        self,
        interaction_id: str,
        state: InteractionState,
        allowed: frozenset[str] | None,
        choice: str | None,
        chosen_by: ChosenBy | None,
        reason: str | None,
        response_ref: JournalRef | None,
    ) -> Interaction:
        with self._tx() as conn:
            found = conn.execute(
                "SELECT run_id FROM interactions WHERE id = ?", (interaction_id,)
            ).fetchone()
            if found is None:
                raise RecordNotFound(f"no interaction {interaction_id!r}")
            self._fence(conn, found[0])  # its run's row, locked; this process's claim checked
            row = conn.execute(
                "SELECT state FROM interactions WHERE id = ?", (interaction_id,)
            ).fetchone()
            if allowed is not None and row[0] not in allowed:
                raise StoreConflict(
                    f"interaction {interaction_id} is {row[0]}, not {' or '.join(sorted(allowed))}"
                )
            conn.execute(
                "UPDATE interactions SET state = ?, choice = ?, chosen_by = ?, reason = ?, "
                "response_ref = COALESCE(?, response_ref), resolved_at = ? WHERE id = ?",
                (
                    state,
                    self._text(choice, MAX_ID_CHARS),
                    chosen_by,
                    self._text(reason),
                    ref_text(response_ref),
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
            for run_id in ids:
                with contextlib.suppress(RecordNotFound):
                    self._fence(conn, run_id)  # each run's row, locked; claims checked
            return conn.execute(
                "UPDATE interactions SET state = 'ABORTED', reason = ?, resolved_at = ? "
                f"WHERE state = 'PENDING' AND run_id IN ({', '.join('?' for _ in ids)})",
                (self._text(reason), self._now(), *ids),
            ).rowcount

    def get_interaction(self, interaction_id: str) -> Interaction:
        """The interaction ``interaction_id``; RecordNotFound if there is none."""
        row = self._conn.execute(
            f"SELECT {INTERACTION_COLUMNS} FROM interactions WHERE id = ?", (interaction_id,)
        ).fetchone()
        if row is None:
            raise RecordNotFound(f"no interaction {interaction_id!r}")
        return _interaction(row)

    def list_interactions(
        self, run_id: str, *, state: InteractionState | None = None
    ) -> list[Interaction]:
        """A run's interactions, oldest first."""
        sql = f"SELECT {INTERACTION_COLUMNS} FROM interactions WHERE run_id = ?"
        args: list[Any] = [run_id]
        if state is not None:
            sql += " AND state = ?"
            args.append(state)
        sql += f" ORDER BY created_at, id LIMIT {MAX_LIST_ROWS}"
        return [_interaction(row) for row in self._conn.execute(sql, args)]

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
        check_in(kind, OBSERVATION_KINDS, "observation kind")
        if session_id is None and run_id is None:
            raise UsageError("an observation belongs to a session or a run")
        await self._publish([journal_ref])
        return await self.offload(
            lambda: self._insert_observation(kind, payload, session_id, run_id, journal_ref)
        )

    def _insert_observation(
        self,
        kind: ObservationKind,
        payload: Any,
        session_id: str | None,
        run_id: str | None,
        journal_ref: JournalRef | None,
    ) -> Observation:
        with self._tx() as conn:
            if run_id is not None:
                self._fence(conn, run_id)  # the run's row, locked; this process's claim checked
            cursor = conn.execute(
                "INSERT INTO observations (session_id, run_id, kind, payload, journal_ref, "
                "recorded_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
                (
                    session_id,
                    run_id,
                    kind,
                    self._json(payload, "observation payload"),
                    ref_text(journal_ref),
                    self._now(),
                ),
            )
            observation_id = cursor.fetchone()[0]
        row = self._conn.execute(
            f"SELECT {OBSERVATION_COLUMNS} FROM observations WHERE id = ?", (observation_id,)
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
        sql = f"SELECT {OBSERVATION_COLUMNS} FROM observations WHERE 1 = 1"
        args: list[Any] = []
        for column, value in (("session_id", session_id), ("run_id", run_id), ("kind", kind)):
            if value is not None:
                sql += f" AND {column} = ?"
                args.append(value)
        sql += f" ORDER BY id LIMIT {MAX_LIST_ROWS}"
        return [_observation(row) for row in self._conn.execute(sql, args)]


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
        request_ref=ref_value(row[9]),
        response_ref=ref_value(row[10]),
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
        ref_value(row[5]),
        row[6],
    )
