"""A run's normalized events as the store holds them: the ``acp-jsonl`` export's lines and
the input of the ATIF trajectory (:mod:`baton.views.trajectory`).

Two sources, the better one first:

- a run the fleet ran has its live events in the store (``run_events``, appended by the
  worker as they happened, docs/fleet.md): those are returned as they are, in their order;
- any other run is rebuilt from its record: ``prompt`` (the redacted prompt), ``session``,
  one event per stored item in the items' order (``text``, ``thought``, ``tool_call`` with its
  merged state, ``plan``, ``usage``, ``notice``, ``compaction``, ``elicitation``,
  ``workspace_changes``), each recorded permission decision just after the tool call it was
  about, and ``result`` from the run's row. A turn's text is stored as one item per part, so
  a rebuilt run keeps its text, thoughts and tool calls but not how they interleaved.

Everything here comes from the store, which holds only redacted text (docs/redaction.md).
Bounded: at most :data:`MAX_EXPORTED_EVENTS` events per run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, Literal

from baton.runtime.workspaces.tracking import ITEM_KIND as WORKSPACE_ITEM_KIND
from baton.runtime.workspaces.tracking import summary_of
from baton.store import Store
from baton.store.models import Interaction, Run, StoredItem
from baton.views.runs import duration_seconds, run_context

#: Events one run exports at most (a fleet run's stored stream can be long: a flood of
#: small text events past this is cut and the cut is said in the last line's ``truncated``).
MAX_EXPORTED_EVENTS: Final = 200_000

#: Where a run's events came from: the stored live stream, or its record rebuilt.
EventSource = Literal["stream", "record"]

#: Item kinds whose content becomes the event's fields as they are.
_PLAIN_ITEM_KINDS: Final = frozenset(
    {"tool_call", "plan", "usage", "notice", "compaction", "elicitation"}
)
#: Item kinds of streamed text.
_TEXT_ITEM_KINDS: Final = frozenset({"text", "thought", "user_text"})


def run_events(store: Store, run: Run) -> tuple[list[dict[str, Any]], EventSource]:
    """The run's normalized events, oldest first, and where they came from (see the module)."""
    events = _streamed_events(store, run.id)
    if events:
        if not any(e.get("type") == "prompt" for e in events):
            events.insert(0, _prompt_event(run))
        return events, "stream"
    return rebuilt_events(store, run), "record"


def _streamed_events(store: Store, run_id: str) -> list[dict[str, Any]]:
    """The run's stored live events (a fleet run's), read page by page, at most
    MAX_EXPORTED_EVENTS."""
    events: list[dict[str, Any]] = []
    after = -1
    while len(events) < MAX_EXPORTED_EVENTS:
        page = store.run_events(run_id, after=after)
        if not page:
            break
        events.extend(event for _seq, event in page)
        after = page[-1][0]
    return events[:MAX_EXPORTED_EVENTS]


def rebuilt_events(store: Store, run: Run) -> list[dict[str, Any]]:
    """The run's events rebuilt from its record (see the module)."""
    context = run_context(store, run)
    events: list[dict[str, Any]] = [
        {
            "type": "run_started",
            "runId": run.id,
            "agent": context["agent"],
            "cwd": context["cwd"],
            "policy": run.policy,
        },
        _prompt_event(run),
    ]
    stored_session = store.find_session(run.session_id) if run.session_id else None
    if stored_session is not None:
        events.append(
            {
                "type": "session",
                "runId": run.id,
                "sessionId": stored_session.id,
                "providerSessionId": stored_session.provider_session_id,
            }
        )
    items = store.list_items(run.id)
    interactions = store.list_interactions(run.id)
    events.extend(_item_events(run.id, items, interactions))
    events.append(_result_event(run, items, interactions))
    return events[:MAX_EXPORTED_EVENTS]


def _prompt_event(run: Run) -> dict[str, Any]:
    return {"type": "prompt", "runId": run.id, "text": run.prompt_text}


def _item_events(
    run_id: str, items: Sequence[StoredItem], interactions: Sequence[Interaction]
) -> list[dict[str, Any]]:
    """One event per item; each permission decision after its tool call's event."""
    asked: dict[str, list[Interaction]] = {}
    unplaced: list[Interaction] = []
    for interaction in interactions:
        call_id = _interaction_call_id(interaction)
        if call_id is None:
            unplaced.append(interaction)
        else:
            asked.setdefault(call_id, []).append(interaction)
    events: list[dict[str, Any]] = []
    for item in items:
        content = item.content if isinstance(item.content, dict) else {}
        if item.kind in _TEXT_ITEM_KINDS:
            events.append(
                {
                    "type": item.kind,
                    "runId": run_id,
                    "text": str(content.get("text") or ""),
                    "coalescedEvents": item.coalesced_events,
                }
            )
        elif item.kind == WORKSPACE_ITEM_KIND:
            if "error" in content:
                continue
            events.append({"type": item.kind, "runId": run_id, **summary_of(content)})
        elif item.kind in _PLAIN_ITEM_KINDS:
            events.append({"type": item.kind, "runId": run_id, **content})
            if item.kind == "tool_call":
                call_id = content.get("toolCallId")
                for interaction in asked.pop(call_id, []) if isinstance(call_id, str) else []:
                    events.append(permission_event(run_id, interaction))
    for rest in asked.values():
        unplaced.extend(rest)
    events.extend(permission_event(run_id, i) for i in unplaced)
    return events


def _interaction_call_id(interaction: Interaction) -> str | None:
    tool_call = interaction.tool_call
    if isinstance(tool_call, dict) and isinstance(tool_call.get("toolCallId"), str):
        return str(tool_call["toolCallId"])
    return None


def permission_event(run_id: str, interaction: Interaction) -> dict[str, Any]:
    """A recorded permission decision as the ``permission`` event shows it (docs/events.md),
    with ``granted`` (an allow option was chosen) added."""
    options = [
        {"optionId": o.get("optionId"), "name": o.get("name"), "kind": o.get("kind")}
        for o in interaction.offered_options or []
        if isinstance(o, dict)
    ]
    kinds = {o["optionId"]: o["kind"] for o in options}
    chosen_kind = kinds.get(interaction.choice) if interaction.choice is not None else None
    tool_call = interaction.tool_call if isinstance(interaction.tool_call, dict) else {}
    return {
        "type": "permission",
        "runId": run_id,
        "toolCallId": _interaction_call_id(interaction),
        "toolName": tool_call.get("name"),
        "options": options,
        "outcome": "selected" if interaction.choice is not None else "cancelled",
        "optionId": interaction.choice,
        "chosenBy": interaction.chosen_by,
        "reason": interaction.reason,
        "granted": str(chosen_kind or "").startswith("allow"),
    }


def _result_event(
    run: Run, items: Sequence[StoredItem], interactions: Sequence[Interaction]
) -> dict[str, Any]:
    usage = next(
        (i.content for i in reversed(items) if i.kind == "usage" and isinstance(i.content, dict)),
        None,
    )
    seconds = duration_seconds(run)
    return {
        "type": "result",
        "runId": run.id,
        "status": run.status,
        "stopReason": run.stop_reason,
        "errorCode": run.error_code,
        "message": run.diagnostic,
        "sessionId": run.session_id,
        "toolCalls": sum(1 for i in items if i.kind == "tool_call"),
        "permissions": len(interactions),
        "durationMs": round(seconds * 1000) if seconds is not None else None,
        "skippedFrames": run.skipped_frames,
        "violations": run.violations,
        "usage": usage,
    }
