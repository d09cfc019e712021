"""Sessions as the contract shows them: a conversation (`baton session ... --json`,
``/api/v1/sessions``), one with its runs and native state (`baton session show --json`), and
the sessions of queued turns (`baton submit --session NAME`, docs/fleet.md)."""

from __future__ import annotations

from typing import Any

from baton.runtime.conversations import ConversationView
from baton.store import Conversation, Store
from baton.views.contract import document, plain


def record_json(
    record: Conversation, turns: int | None = None, *, host: str | None = None
) -> dict[str, Any]:
    """A conversation in the JSON contract (``agentCommand`` redacted as stored), with the
    ``host`` holding it (see :meth:`Conversations.holding_host`). Its ``settings`` are kept
    as given: config option ids are the provider's, not Baton's keys."""
    view = {key: value for key, value in plain(record).items() if key != "settings"}
    if turns is not None:
        view["turns"] = turns
    view["host"] = host
    view["kind"] = "conversation"
    return {**document(view), "settings": dict(record.settings)}


def queued_session_rows(store: Store) -> list[dict[str, Any]]:
    """The sessions of queued turns (`baton submit --session NAME`, docs/fleet.md): each
    pinned to the worker that took its first turn, with that worker's host, as JSON records
    (``kind: "queued"``; conversations are ``kind: "conversation"``)."""
    hosts = {worker.name: worker.host for worker in store.list_workers()}
    return [
        document({"kind": "queued", **plain(pinned), "host": hosts.get(pinned.worker)})
        for pinned in store.list_pinned_sessions()
    ]


def view_json(view: ConversationView, host: str | None = None) -> dict[str, Any]:
    """`session show --json`: the record (with the ``host`` holding it), its runs (id,
    status, prompt) and native state."""
    body = record_json(view.record, len(view.runs), host=host)
    body["runs"] = [
        {
            "runId": run.id,
            "status": run.status,
            "stopReason": run.stop_reason,
            "errorCode": run.error_code,
            "createdAt": run.created_at,
            "prompt": run.prompt_text,
        }
        for run in view.runs
    ]
    body["nativeState"] = view.native_state
    body["attachedHere"] = view.attached_here
    return body
