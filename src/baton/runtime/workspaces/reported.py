"""Matching the comparison with what the agent reported: a change is *reported* when a tool
call of the turn named its path (``locations``, diff content, the raw input's path keys:
:func:`baton.wire.toolcalls.tool_paths`) and no permission asked for that tool call was
refused; anything else the turn changed is flagged **unreported**.

Paths are compared as real paths of their directories (the run's working directory may be a
subdirectory of the workspace; a symlink itself is not followed, so a change to a link
matches the link's own path).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from baton.runtime.workspaces.changes import Comparison
from baton.wire.toolcalls import tool_paths


def _workspace_relative(raw: str, cwd: str, top: str) -> str | None:
    if not raw or "\x00" in raw or "://" in raw:
        return None
    joined = os.path.normpath(os.path.join(cwd, os.path.expanduser(raw)))
    real = os.path.join(os.path.realpath(os.path.dirname(joined)), os.path.basename(joined))
    real_top = os.path.realpath(top)
    if not real.startswith(real_top + os.sep):
        return None
    return os.path.relpath(real, real_top)


def refused_tool_calls(permissions: Iterable[Mapping[str, Any]]) -> set[str]:
    """The tool calls whose permission request ended without an allow option chosen."""
    refused: set[str] = set()
    for view in permissions:
        tool_call_id = view.get("toolCallId")
        if not isinstance(tool_call_id, str):
            continue
        kinds = {o.get("optionId"): o.get("kind") for o in view.get("options") or ()}
        kind = kinds.get(view.get("optionId"))
        if view.get("outcome") != "selected" or not str(kind or "").startswith("allow"):
            refused.add(tool_call_id)
    return refused


def reported_paths(
    tool_calls: Mapping[str, Mapping[str, Any]],
    permissions: Sequence[Mapping[str, Any]],
    *,
    cwd: str,
    top: str,
) -> dict[str, list[str]]:
    """Workspace-relative path -> the tool calls that reported it (refused ones left out)."""
    refused = refused_tool_calls(permissions)
    found: dict[str, list[str]] = {}
    for tool_call_id, state in tool_calls.items():
        if tool_call_id in refused:
            continue
        for raw in tool_paths(state):
            path = _workspace_relative(raw, cwd, top)
            if path is not None:
                found.setdefault(path, [])
                if tool_call_id not in found[path]:
                    found[path].append(tool_call_id)
    return found


def match_reports(comparison: Comparison, reported: Mapping[str, Sequence[str]]) -> None:
    """Set each change's ``reported_by`` (empty: unreported)."""
    for change in comparison.changes:
        by = list(reported.get(change.path, ()))
        if change.old_path is not None:
            by += [t for t in reported.get(change.old_path, ()) if t not in by]
        change.reported_by = by
