"""One run's normalized events folded into ATIF steps (:mod:`baton.views.trajectory` puts the
steps of a run, a session or a batch into a trajectory).

An agent step gathers the text (``message``), the thoughts (``reasoning_content``) and the
tool calls of one stretch of the turn, as Harbor infers them from ACP events: text or a new
tool call that comes after a finished (completed or failed) tool call starts the next step. Each tool call's
observation is keyed by its call id (``source_call_id``): its last status, the diff it
proposed (as a unified diff of the recorded, redacted sides) and the permission decisions
about it. A tool call the claude profile reports inside another (``parentToolCallId``, its
subagent) goes to that parent's subagent instead, whose trajectory the parent's observation
names (``subagent_trajectory_ref``).

Pure: no I/O; the events are already redacted (they come from the store).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

#: Lines of one proposed change's unified diff kept in an observation (a long rewrite is cut
#: and says so): bounds the trajectory of an agent that rewrites big files.
MAX_DIFF_LINES_PER_CHANGE: Final = 2000
#: Tool call statuses that end a tool cycle: text or a new call after one starts a new step.
_FINISHED: Final = frozenset({"completed", "failed"})
#: Notices, compactions and elicitations one step lists at most in its ``extra``.
MAX_STEP_EXTRA_ENTRIES: Final = 64


@dataclass
class ToolState:
    """One tool call as its events left it, with the permission decisions about it."""

    view: dict[str, Any]
    permissions: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class AgentStep:
    """One agent step being gathered."""

    message: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: dict[str, ToolState] = field(default_factory=dict)
    #: Permission decisions about no tool call of this step.
    permissions: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    completed_cycle: bool = False
    #: Subagent trajectory ids by the tool call they ran under (filled when built).
    subagent_refs: dict[str, str] = field(default_factory=dict)

    def has_content(self) -> bool:
        """Whether the step holds anything to show."""
        return bool(self.message or self.reasoning or self.calls or self.permissions)


@dataclass
class RunSteps:
    """A run's events folded: its agent steps, its subagents' steps by parent call id, its
    last usage, and the events that end it."""

    steps: list[AgentStep] = field(default_factory=list)
    subagents: dict[str, AgentStep] = field(default_factory=dict)
    usage: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    plan: list[Any] | None = None
    workspace_changes: dict[str, Any] | None = None


def fold_events(events: Iterable[dict[str, Any]], *, split: bool = True) -> RunSteps:
    """The run's events (oldest first) folded into steps (see the module). ``split`` False
    (events rebuilt from a record, whose interleaving is unknown): one agent step."""
    folded = RunSteps()
    current = AgentStep()
    parents: dict[str, str] = {}

    def flush() -> None:
        nonlocal current
        if current.has_content():
            folded.steps.append(current)
        current = AgentStep()

    for event in events:
        kind = event.get("type")
        if kind in ("text", "thought"):
            if current.completed_cycle:
                flush()
            text = str(event.get("text") or "")
            (current.message if kind == "text" else current.reasoning).append(text)
        elif kind == "tool_call":
            call_id = event.get("toolCallId")
            if not isinstance(call_id, str):
                continue
            parent = event.get("parentToolCallId") or parents.get(call_id)
            if isinstance(parent, str) and parent != call_id:
                parents[call_id] = parent
                sub = folded.subagents.setdefault(parent, AgentStep())
                _track(sub, call_id, event)
                continue
            if current.completed_cycle and call_id not in current.calls:
                owner = _owner_of(folded.steps, call_id)
                if owner is not None:
                    _track(owner, call_id, event)
                    continue
                flush()
            _track(current, call_id, event)
            if split and event.get("status") in _FINISHED:
                current.completed_cycle = True
        elif kind == "permission":
            _place_permission(folded, current, parents, event)
        elif kind == "usage":
            folded.usage = {k: v for k, v in event.items() if k not in ("type", "runId")}
        elif kind == "plan":
            folded.plan = list(event.get("entries") or [])
        elif kind == "workspace_changes":
            folded.workspace_changes = {
                k: v for k, v in event.items() if k not in ("type", "runId")
            }
        elif kind in ("notice", "compaction", "elicitation", "steer"):
            entries = current.extra.setdefault(f"{kind}s", [])
            if len(entries) < MAX_STEP_EXTRA_ENTRIES:
                entries.append({k: v for k, v in event.items() if k not in ("type", "runId")})
        elif kind == "result":
            folded.result = event
    flush()
    return folded


def _track(step: AgentStep, call_id: str, event: dict[str, Any]) -> None:
    view = {k: v for k, v in event.items() if k not in ("type", "runId")}
    state = step.calls.get(call_id)
    if state is None:
        step.calls[call_id] = ToolState(view)
    else:
        state.view.update(view)


def _owner_of(steps: list[AgentStep], call_id: str) -> AgentStep | None:
    """The earlier step that holds ``call_id`` (a late update of its call)."""
    for step in reversed(steps):
        if call_id in step.calls:
            return step
    return None


def _place_permission(
    folded: RunSteps, current: AgentStep, parents: dict[str, str], event: dict[str, Any]
) -> None:
    decision = {
        k: event.get(k)
        for k in ("optionId", "outcome", "chosenBy", "reasonCode", "reason", "options")
    }
    decision["granted"] = _granted(event)
    call_id = event.get("toolCallId")
    if isinstance(call_id, str):
        parent = parents.get(call_id)
        candidates = [folded.subagents[parent]] if parent in folded.subagents else []
        candidates += [current, *reversed(folded.steps)]
        for step in candidates:
            if call_id in step.calls:
                step.calls[call_id].permissions.append(decision)
                return
    current.permissions.append({"toolCallId": call_id, **decision})


def _granted(event: dict[str, Any]) -> bool:
    """Whether the decision chose an allow option (a live ``permission`` event names the
    option; a rebuilt one says ``granted`` already)."""
    if isinstance(event.get("granted"), bool):
        return bool(event["granted"])
    chosen = event.get("optionId")
    for option in event.get("options") or ():
        if isinstance(option, dict) and option.get("optionId") == chosen and chosen is not None:
            return str(option.get("kind") or "").startswith("allow")
    return False


def atif_step(step: AgentStep, step_id: int, *, model_name: str | None) -> dict[str, Any]:
    """The ATIF step (a ``source: agent`` Step as JSON) of one gathered step."""
    tool_calls = []
    results = []
    for call_id, state in step.calls.items():
        view = state.view
        tool_calls.append(
            {
                "tool_call_id": call_id,
                "function_name": str(view.get("name") or view.get("kind") or "tool"),
                "arguments": _arguments(view),
                "extra": _present(
                    {"title": view.get("title"), "kind": view.get("kind"), "name": view.get("name")}
                ),
            }
        )
        result: dict[str, Any] = {
            "source_call_id": call_id,
            "content": _observation_text(view),
            "extra": _present(
                {
                    "status": view.get("status"),
                    "diff": _diff_counts(view.get("diff")),
                    "permissions": state.permissions or None,
                }
            ),
        }
        ref = step.subagent_refs.get(call_id)
        if ref is not None:
            result["subagent_trajectory_ref"] = [{"trajectory_id": ref}]
        results.append(result)
    built: dict[str, Any] = {
        "step_id": step_id,
        "source": "agent",
        "message": "".join(step.message),
    }
    if model_name is not None:
        built["model_name"] = model_name
    if step.reasoning:
        built["reasoning_content"] = "".join(step.reasoning)
    if tool_calls:
        built["tool_calls"] = tool_calls
    if results:
        built["observation"] = {"results": results}
    extra = dict(step.extra)
    if step.permissions:
        extra["permissions"] = step.permissions
    if extra:
        built["extra"] = extra
    return built


def _present(values: dict[str, Any]) -> dict[str, Any] | None:
    kept = {k: v for k, v in values.items() if v is not None}
    return kept or None


def _arguments(view: dict[str, Any]) -> dict[str, Any]:
    """What Baton recorded of a call's input: its command and paths (the raw input stays in
    the protected journal, docs/journal.md)."""
    arguments: dict[str, Any] = {}
    if view.get("command") is not None:
        arguments["command"] = view["command"]
    if view.get("paths"):
        arguments["paths"] = list(view["paths"])
    return arguments


def _diff_counts(diff: Any) -> dict[str, Any] | None:
    if not isinstance(diff, dict):
        return None
    return {k: diff.get(k) for k in ("files", "added", "removed")}


def _observation_text(view: dict[str, Any]) -> str:
    """The call's outcome as text: its status and title, then the diff it proposed."""
    status = view.get("status") or "unknown"
    lines = [f"{view.get('title') or view.get('name') or 'tool call'}: {status}"]
    diff = view.get("diff")
    changes = diff.get("changes") if isinstance(diff, dict) else None
    for change in changes if isinstance(changes, list) else ():
        if isinstance(change, dict):
            lines.append(_unified(change))
    return "\n".join(lines)


def _unified(change: dict[str, Any]) -> str:
    path = str(change.get("path") or "file")
    if change.get("truncated"):
        return f"--- {path}\n+++ {path}\n[diff left out: a side was over the recorded bound]"
    old, new = change.get("oldText"), change.get("newText")
    diff_lines = list(
        difflib.unified_diff(
            str(old or "").splitlines(),
            str(new or "").splitlines(),
            fromfile="/dev/null" if old is None else path,
            tofile=path,
            lineterm="",
        )
    )
    if len(diff_lines) > MAX_DIFF_LINES_PER_CHANGE:
        cut = len(diff_lines) - MAX_DIFF_LINES_PER_CHANGE
        diff_lines = [*diff_lines[:MAX_DIFF_LINES_PER_CHANGE], f"[{cut} more diff lines cut]"]
    return "\n".join(diff_lines)
