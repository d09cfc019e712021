"""A conversation as it happened: its turns in order, each the prompt, the reply (the run's
materialized text items), its tool calls summarized and its permission decisions, read from
the store (redacted as stored). Also its Markdown form for `baton session export`."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Final

from baton.store import Interaction, Run, Store, StoredItem
from baton.store.models import RunStatus

#: Characters of one tool call's title kept in a summary.
MAX_TOOL_TITLE_CHARS: Final = 200

#: Forks followed back when a fork's history starts with its parents' turns (a fork of a fork
#: of ...). Bounds the walk: a parent removed and its name reused by a fork of its own child
#: would otherwise make a cycle.
MAX_FORK_DEPTH: Final = 16


@dataclass(frozen=True, slots=True)
class ToolCallSummary:
    """One tool call of a turn: its kind, title and last status."""

    tool_call_id: str
    kind: str
    title: str
    status: str


@dataclass(frozen=True, slots=True)
class PermissionDecision:
    """One permission request of a turn and how it was answered."""

    state: str
    choice: str | None
    chosen_by: str | None
    reason: str | None


@dataclass(frozen=True, slots=True)
class HistoryTurn:
    """One turn of a conversation."""

    run_id: str
    status: RunStatus
    stop_reason: str | None
    error_code: str | None
    created_at: str
    prompt: str
    reply: str
    tool_calls: list[ToolCallSummary] = field(default_factory=list)
    permissions: list[PermissionDecision] = field(default_factory=list)
    #: True when the turn's prompt reached the agent (its run cites a sent prompt).
    sent: bool = True
    #: The session the turn happened in when it is inherited (a fork's history starts with
    #: its parent's turns up to the fork point); None for the session's own turns.
    inherited_from: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The turn in the CLI's JSON contract (camelCase)."""
        return {
            "runId": self.run_id,
            "inheritedFrom": self.inherited_from,
            "status": self.status,
            "stopReason": self.stop_reason,
            "errorCode": self.error_code,
            "createdAt": self.created_at,
            "prompt": self.prompt,
            "reply": self.reply,
            "toolCalls": [
                {"toolCallId": t.tool_call_id, "kind": t.kind, "title": t.title, "status": t.status}
                for t in self.tool_calls
            ],
            "permissions": [
                {
                    "state": p.state,
                    "choice": p.choice,
                    "chosenBy": p.chosen_by,
                    "reason": p.reason,
                }
                for p in self.permissions
            ],
        }


def tool_calls_of(items: list[StoredItem]) -> list[ToolCallSummary]:
    """Each tool call once, in first-seen order, with its latest kind, title and status."""
    calls: dict[str, ToolCallSummary] = {}
    for item in items:
        content = item.content
        if item.kind != "tool_call" or not isinstance(content, dict):
            continue
        call_id = str(content.get("toolCallId") or f"#{item.seq}")
        before = calls.get(call_id)
        title = str(content.get("title") or (before.title if before else ""))
        calls[call_id] = ToolCallSummary(
            call_id,
            str(content.get("kind") or (before.kind if before else "other")),
            title[:MAX_TOOL_TITLE_CHARS],
            str(content.get("status") or (before.status if before else "pending")),
        )
    return list(calls.values())


def reply_of(items: list[StoredItem]) -> str:
    """The agent's reply: the text items, concatenated in order (thoughts left out)."""
    return "".join(
        str(item.content.get("text", ""))
        for item in items
        if item.kind == "text" and isinstance(item.content, dict)
    )


def decisions_of(interactions: list[Interaction]) -> list[PermissionDecision]:
    """The permission decisions of a turn, in order."""
    return [PermissionDecision(i.state, i.choice, i.chosen_by, i.reason) for i in interactions]


def history_turn(store: Store, run: Run) -> HistoryTurn:
    """One run of a conversation as a turn of its history."""
    items = store.list_items(run.id)
    return HistoryTurn(
        run.id,
        run.status,
        run.stop_reason,
        run.error_code,
        run.created_at,
        run.prompt_text,
        reply_of(items),
        tool_calls_of(items),
        decisions_of(store.list_interactions(run.id)),
        sent=run.prompt_ref is not None,
    )


def conversation_history(
    store: Store, name: str, limit: int | None = None, *, _depth: int = 0
) -> list[HistoryTurn]:
    """The conversation's turns, oldest first (only the last ``limit`` when given). A fork's
    history starts with the turns it inherited from its parent (up to the fork point, each
    marked ``inherited_from``); a parent since removed leaves only the fork's own turns."""
    record = store.get_conversation(name)
    runs = (
        store.conversation_runs(name)
        if limit is None
        else store.conversation_runs(name, limit=limit)
    )
    own = [history_turn(store, run) for run in runs]
    if limit is not None and len(own) >= limit:
        return own[len(own) - limit :]
    inherited: list[HistoryTurn] = []
    parent = record.forked_from
    if parent is not None and _depth < MAX_FORK_DEPTH and store.find_conversation(parent):
        upto = record.fork_turns or 0
        inherited = [
            replace(turn, inherited_from=turn.inherited_from or parent)
            for turn in conversation_history(store, parent, _depth=_depth + 1)[:upto]
        ]
    turns = inherited + own
    return turns if limit is None else turns[max(0, len(turns) - limit) :]


def history_markdown(name: str, turns: list[HistoryTurn]) -> str:
    """The history as a Markdown document (agent text is quoted as stored, never rendered as
    headings: every line of it is indented as a block quote)."""
    lines = [f"# Session {name}", ""]
    for index, turn in enumerate(turns, 1):
        origin = f", in {turn.inherited_from}" if turn.inherited_from else ""
        lines += [
            f"## Turn {index} ({turn.run_id}, {turn.status}{origin})",
            "",
            "**Prompt**",
            "",
        ]
        lines += [f"> {line}" for line in turn.prompt.splitlines() or [""]]
        lines += ["", "**Reply**", ""]
        lines += [f"> {line}" for line in turn.reply.splitlines() or [""]]
        if turn.tool_calls:
            lines += ["", "**Tool calls**", ""]
            lines += [
                f"- {_one_line(t.kind)}: {_one_line(t.title)} [{_one_line(t.status)}]"
                for t in turn.tool_calls
            ]
        if turn.permissions:
            lines += ["", "**Permissions**", ""]
            lines += [
                f"- {p.state}: {_one_line(p.choice or 'no option')} (by {p.chosen_by or '-'})"
                for p in turn.permissions
            ]
        lines.append("")
    return "\n".join(lines)


def _one_line(text: str) -> str:
    """``text`` on one line (a list item of agent text must not start a new block)."""
    return " ".join(text.split())
