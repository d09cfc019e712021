"""The projection of a turn's ACP session/updates into run events and item views.

The turn (``turns/turn.py``) owns its life (submit, stream, interrupt, settle); what each
update *shows* is here: tool calls (with Claude's subagent parent link), plans, modes, config
options, session titles, available commands, and the compact, bounded, redacted views events
and items carry (tool calls with their diffs, plans, permission decisions). Usage, notices,
compactions and elicitations have their own projection (``turns/live_updates.py``).

Every view is within the projection bounds of :mod:`baton.wire.bounded` and the named bounds
below: enough to show and to search, never the whole payload (that is in the protected
journal). Text is redacted whole, then cut: cutting first could leave the head of a
credential too short for any rule to recognise.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from typing import Any, Final

from baton.connection.client import AcpClient
from baton.errors import BatonError
from baton.runtime.permissions.correlation import ToolCallTracker
from baton.runtime.turns.events import RunEvent
from baton.runtime.turns.live_updates import LiveUpdates
from baton.wire.bounded import bounded, bounded_text
from baton.wire.extensions import claude as claude_extension
from baton.wire.session_state import parse_config_options
from baton.wire.toolcalls import (
    tool_command,
    tool_diff_stats,
    tool_name,
    tool_paths,
)

#: Diff items of one tool call whose text a tool-call view carries (``diff.changes``), so an
#: event or item stays small however many files one call edits.
MAX_VIEW_DIFF_FILES: Final = 8
#: Characters of one side (old or new) of a diff a view carries. A longer side is left out
#: whole (``truncated``), never cut: a cut could leave the head of a credential too short for
#: any redaction rule. The full content stays in the protected journal.
MAX_VIEW_DIFF_TEXT_CHARS: Final = 64 * 1024


# What the compact views of agent data keep (every view is also within the projection bounds
# of baton.wire.bounded): enough to show and to search, never the whole payload (that is in
# the protected journal).
#: Characters of a tool call's title.
MAX_TOOL_TITLE_CHARS: Final = 512
#: Characters of a tool call's command line.
MAX_TOOL_COMMAND_CHARS: Final = 1024
#: Paths of one tool call.
MAX_TOOL_PATHS: Final = 16
#: Characters of a diff item's path.
MAX_TOOL_PATH_CHARS: Final = 1024
#: Entries of a plan.
MAX_PLAN_ENTRIES: Final = 64
#: Command names of an available_commands_update.
MAX_COMMAND_NAMES: Final = 64
#: Characters of a mode id, a session title or a command name.
MAX_NAME_CHARS: Final = 1024


class UpdateProjection:
    """One turn's projection: the tool calls and plan it saw, and the events they make."""

    def __init__(
        self,
        *,
        run_id: str,
        tracker: ToolCallTracker,
        client: AcpClient,
        provider_id: str,
        emit: Callable[[RunEvent], None],
        redact: Callable[[str], str],
        flush: Callable[[], None],
        live: LiveUpdates,
        reads_parents: bool,
    ) -> None:
        """``flush`` publishes the buffered output first (an update that is not text ends
        the text before it); ``reads_parents``: the claude profile's subagent link is read."""
        self._run_id = run_id
        self._tracker = tracker
        self._client = client
        self._provider_id = provider_id
        self._emit = emit
        self._redact = redact
        self._flush = flush
        self._live = live
        self._reads_parents = reads_parents
        #: The turn's tool calls by id: their merged state, as the tracker has it.
        self.tool_calls: dict[str, dict[str, Any]] = {}
        #: toolCallId -> its parent tool call (claude profile only: the subagent link).
        self.tool_parents: dict[str, str] = {}
        #: The turn's last plan (None: none was sent).
        self.plan: list[Any] | None = None

    def project(self, kind: object, update: dict[str, Any]) -> None:
        """Project one session/update that is neither a text delta nor a v2 state."""
        if kind in ("tool_call", "tool_call_update"):
            tool_call_id = update.get("toolCallId")
            if not isinstance(tool_call_id, str):
                return
            tool_state = self._tracker.get(tool_call_id) or dict(update)
            self.tool_calls[tool_call_id] = tool_state
            if self._reads_parents and tool_call_id not in self.tool_parents:
                parent = claude_extension.parent_tool_use_id(update)
                if parent is not None and parent != tool_call_id:
                    self.tool_parents[tool_call_id] = parent
            self._flush()
            self._emit(RunEvent("tool_call", self._run_id, self.tool_view(tool_state)))
            return
        if kind == "plan":
            entries = update.get("entries")
            self.plan = entries if isinstance(entries, list) else []
            self._flush()
            self._emit(RunEvent("plan", self._run_id, {"entries": plan_view(self.plan)}))
            return
        if self._live.handle(kind, update):
            return
        if kind == "current_mode_update":
            mode_id = update.get("currentModeId")
            if isinstance(mode_id, str):
                with contextlib.suppress(BatonError):
                    state = self._client.session_state(self._provider_id)
                    if state.modes is not None and mode_id in state.modes.ids():
                        self._client.update_session_state(
                            self._provider_id, state.with_current_mode(mode_id)
                        )
                self._emit(
                    RunEvent(
                        "mode", self._run_id, {"modeId": bounded_text(mode_id, MAX_NAME_CHARS)}
                    )
                )
            return
        if kind == "config_option_update":
            options, _ignored = parse_config_options(update.get("configOptions"))
            if options:
                with contextlib.suppress(BatonError):
                    state = self._client.session_state(self._provider_id)
                    self._client.update_session_state(
                        self._provider_id, state.with_config_options(options)
                    )
            self._emit(
                RunEvent(
                    "config",
                    self._run_id,
                    {
                        "configOptions": bounded(
                            [{"id": o.id, "currentValue": o.current_value} for o in options]
                        )
                    },
                )
            )
            return
        if kind == "session_info_update":
            title = update.get("title")
            if isinstance(title, str):
                # Redacted whole, then cut (as every view: see tool_call_view).
                shown = bounded_text(self._redact(title), MAX_NAME_CHARS)
                self._emit(RunEvent("session_info", self._run_id, {"title": shown}))
            return
        if kind == "available_commands_update":
            commands = update.get("availableCommands")
            names = command_names(commands)
            self._emit(RunEvent("commands", self._run_id, {"commands": names}))
            return
        # Everything else is journal-only telemetry.

    def tool_view(self, tool_state: dict[str, Any]) -> dict[str, Any]:
        """A tool call's view, with its parent tool call when one is known."""
        view = tool_call_view(tool_state, self._redact)
        parent = self.tool_parents.get(str(tool_state.get("toolCallId")))
        if parent is not None:
            view["parentToolCallId"] = parent
        return view

    def item_views(self) -> list[tuple[str, dict[str, Any]]]:
        """The turn's tool calls and plan as ``(kind, content)`` items, at its end."""
        views = [("tool_call", self.tool_view(state)) for state in self.tool_calls.values()]
        if self.plan is not None:
            views.append(("plan", {"entries": plan_view(self.plan)}))
        return views


def permission_view(record: Mapping[str, Any], redact: Callable[[str], str]) -> dict[str, Any]:
    """A permission decision (its interaction record) as its event shows it, bounded."""
    view: dict[str, Any] = bounded(
        {
            "toolCallId": record.get("toolCallId"),
            "toolName": record.get("toolName"),
            "options": [
                {"optionId": o.get("optionId"), "name": o.get("name"), "kind": o.get("kind")}
                for o in record.get("options", [])
            ],
            "outcome": "selected" if record.get("choice") is not None else "cancelled",
            "optionId": record.get("choice"),
            "chosenBy": record.get("chosenBy"),
            "reasonCode": record.get("reasonCode"),
            "reason": redact(str(record.get("reason") or "")),
        }
    )
    return view


def tool_call_view(state: dict[str, Any], redact: Callable[[str], str]) -> dict[str, Any]:
    """The compact, bounded, redacted view of a tool call for events and items (no raw input
    or output: those stay in the protected journal)."""
    title = state.get("title")
    view: dict[str, Any] = {
        "toolCallId": state.get("toolCallId"),
        "kind": state.get("kind"),
        # Redacted whole, then cut: cutting first could leave the head of a credential
        # too short for any rule to recognise.
        "title": redact(title)[:MAX_TOOL_TITLE_CHARS] if isinstance(title, str) else None,
        "status": state.get("status"),
        "paths": [redact(p) for p in tool_paths(state)[:MAX_TOOL_PATHS]],
    }
    name = tool_name(state)
    if name is not None:
        view["name"] = redact(name)
    command = tool_command(state)
    if command is not None:
        view["command"] = redact(command)[:MAX_TOOL_COMMAND_CHARS]
    content = state.get("content")
    diffs = [
        c
        for c in (content if isinstance(content, list) else [])
        if isinstance(c, dict) and c.get("type") == "diff"
    ]
    if diffs:
        added = removed = files = 0
        for diff in diffs:
            if isinstance(diff.get("changes"), list):
                # A v2 diff: its changes, counted from its git patch.
                stats = tool_diff_stats({"content": [diff]})
                files += len(stats)
                added += sum(s.added for s in stats)
                removed += sum(s.removed for s in stats)
                continue
            files += 1
            old = _lines(diff.get("oldText"))
            new = _lines(diff.get("newText"))
            added += max(len(new) - len(old), 0) if old else len(new)
            removed += max(len(old) - len(new), 0)
        # The diff's texts are the inspector's, bounded by their own rule (a side over
        # MAX_VIEW_DIFF_TEXT_CHARS is left out whole, never cut); everything else of the view
        # is a bounded projection.
        bounded_view: dict[str, Any] = bounded(view)
        bounded_view["diff"] = {
            "files": files,
            "added": added,
            "removed": removed,
            "changes": [diff_change(d, redact) for d in diffs[:MAX_VIEW_DIFF_FILES]],
        }
        return bounded_view
    view_only: dict[str, Any] = bounded(view)
    return view_only


def command_names(commands: object) -> list[str]:
    """The first :data:`MAX_COMMAND_NAMES` command names of an available_commands_update."""
    names: list[str] = []
    for command in commands if isinstance(commands, list) else []:
        if len(names) >= MAX_COMMAND_NAMES:
            break
        if isinstance(command, dict) and isinstance(command.get("name"), str):
            names.append(bounded_text(command["name"], MAX_NAME_CHARS))
    return names


def _lines(text: object) -> list[str]:
    """The lines of a diff side (nothing when the agent sent no text there)."""
    return text.splitlines() if isinstance(text, str) else []


def diff_change(diff: dict[str, Any], redact: Callable[[str], str]) -> dict[str, Any]:
    """One diff item's path and texts, redacted, for the inspector's rendered diff; a side
    over :data:`MAX_VIEW_DIFF_TEXT_CHARS` (or not a string) is left out and marked."""
    changes = diff.get("changes")
    if isinstance(changes, list):
        # ACP v2: the first changed path, and the git patch (when sent) instead of the texts.
        first = next((c for c in changes if isinstance(c, dict)), {})
        path = first.get("path")
        patch = diff.get("patch")
        text = patch.get("text") if isinstance(patch, dict) else None
        fits = not isinstance(text, str) or len(text) <= MAX_VIEW_DIFF_TEXT_CHARS
        return {
            "path": redact(path)[:1024] if isinstance(path, str) else None,
            "oldText": None,
            "newText": None,
            "patch": redact(text) if fits and isinstance(text, str) else None,
            "truncated": not fits,
        }
    path = diff.get("path")
    old, new = diff.get("oldText"), diff.get("newText")
    sides = [side for side in (old, new) if side is not None]
    fits = all(isinstance(s, str) and len(s) <= MAX_VIEW_DIFF_TEXT_CHARS for s in sides)
    return {
        "path": redact(path)[:MAX_TOOL_PATH_CHARS] if isinstance(path, str) else None,
        "oldText": redact(old) if fits and isinstance(old, str) else None,
        "newText": redact(new) if fits and isinstance(new, str) else None,
        "truncated": not fits,
    }


def plan_view(entries: list[Any]) -> list[dict[str, Any]]:
    """The plan's entries as events and items show them, bounded."""
    view: list[dict[str, Any]] = bounded(
        [
            {k: e.get(k) for k in ("content", "status", "priority")}
            for e in entries[:MAX_PLAN_ENTRIES]
            if isinstance(e, dict)
        ]
    )
    return view
