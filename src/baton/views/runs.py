"""A run as the contract shows it: its row (`baton runs --json`, ``GET /api/v1/runs``) and its
full record (`baton show --json`, ``GET /api/v1/runs/{run}``)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from baton.runtime.workspaces.tracking import ITEM_KIND, summary_of
from baton.store import Store
from baton.store.models import Run
from baton.store.owner import owner_host
from baton.views.contract import document, plain
from baton.views.run_ids import resolve_run


def duration_seconds(run: Run) -> float | None:
    """Seconds from the run's creation to its end (None while it has not ended)."""
    if run.ended_at is None:
        return None
    try:
        start = datetime.fromisoformat(run.created_at.replace("Z", "+00:00"))
        end = datetime.fromisoformat(run.ended_at.replace("Z", "+00:00"))
    except ValueError:
        return None
    return max(0.0, (end - start).total_seconds())


def run_context(store: Store, run: Run) -> dict[str, Any]:
    """What the run's own row does not say: its agent profile, its cwd, its duration, the
    name of the named session it is a turn of (``session_name``), and the host of the Baton
    process that owns it (the host whose disk holds its journal;
    None for a run recorded before hosts were: docs/fleet.md)."""
    return run_contexts(store, [run])[0]


def run_contexts(store: Store, runs: Sequence[Run]) -> list[dict[str, Any]]:
    """:func:`run_context` of each run, in order, with one batched lookup of their servers
    and one of their sessions (a listing makes no query per row: issue 34)."""
    servers = store.server_instances_by_id(
        r.server_instance_id for r in runs if r.server_instance_id
    )
    sessions = store.sessions_by_id(r.session_id for r in runs if r.session_id)
    names = store.conversation_names_of_runs(r.id for r in runs)
    by_provider = store.conversation_names_of_provider_sessions(
        s.provider_session_id for s in sessions.values() if s.provider_session_id
    )
    contexts = []
    for run in runs:
        server = servers.get(run.server_instance_id) if run.server_instance_id else None
        session = sessions.get(run.session_id) if run.session_id else None
        contexts.append(
            {
                # The run's id under the name every other object uses (``id`` is kept,
                # deprecated, until the next schema version: docs/events.md).
                "run_id": run.id,
                "agent": server.profile
                if server is not None
                else (session.profile if session else None),
                "cwd": session.cwd if session is not None else None,
                "duration_seconds": duration_seconds(run),
                "host": owner_host(run.owner),
                # The named session (conversation) the run is a turn of, or None: people
                # name sessions by it (``sessionId`` is Baton's internal session record).
                "session_name": names.get(run.id)
                or (
                    by_provider.get((session.profile, session.provider_session_id))
                    if session is not None and session.provider_session_id
                    else None
                ),
            }
        )
    return contexts


def run_row(store: Store, run: Run) -> dict[str, Any]:
    """One run as a line of `baton runs --json` (the record and :func:`run_context`)."""
    return run_rows(store, [run])[0]


def run_rows(store: Store, runs: Sequence[Run]) -> list[dict[str, Any]]:
    """:func:`run_row` of each run, in order, their contexts looked up in batches."""
    contexts = run_contexts(store, runs)
    return [
        document({**plain(run), **context}) for run, context in zip(runs, contexts, strict=True)
    ]


def permission_outcomes(interactions: list[dict[str, Any]]) -> dict[str, int]:
    """Recorded permission decisions counted as granted, denied and cancelled."""
    counts = {"granted": 0, "denied": 0, "cancelled": 0}
    for interaction in interactions:
        choice = interaction.get("choice")
        if choice is None:
            counts["cancelled"] += 1
            continue
        kinds = {
            o.get("optionId"): o.get("kind")
            for o in interaction.get("offered_options") or []
            if isinstance(o, dict)
        }
        allowed = str(kinds.get(choice) or "").startswith("allow")
        counts["granted" if allowed else "denied"] += 1
    return counts


def run_view(store: Store, run_id: str) -> dict[str, Any]:
    """The run (named by id or unique prefix) with its items, interactions, observations and
    agent process, as JSON types (snake_case keys: :func:`~baton.views.contract.document`
    makes them the contract's camelCase)."""
    record = resolve_run(store, run_id)
    view: dict[str, Any] = plain(record)
    view.update(run_context(store, record))
    view["items"] = [plain(item) for item in store.list_items(record.id)]
    view["interactions"] = [plain(i) for i in store.list_interactions(record.id)]
    view["observations"] = [plain(o) for o in store.list_observations(run_id=record.id)]
    view["permission_outcomes"] = permission_outcomes(view["interactions"])
    server = (
        store.find_server_instance(record.server_instance_id) if record.server_instance_id else None
    )
    view["server_instance"] = plain(server) if server is not None else None
    view["workspace_changes"] = latest_workspace_changes(view["items"])
    return view


def latest_workspace_changes(items: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The summary of the run's last ``workspace_changes`` item (the one ``recover`` may
    have added after the turn's), or None (docs/workspaces.md)."""
    for item in reversed(items):
        if item["kind"] == ITEM_KIND and isinstance(item["content"], dict):
            if "error" in item["content"]:
                return {"error": item["content"]["error"]}
            return summary_of(item["content"])
    return None
