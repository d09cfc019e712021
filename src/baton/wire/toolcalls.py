"""Tool-call state as ACP streams it: sparse updates merged into one state, and the facts a
permission policy reads out of it (paths, command, working directory, network target).

A tool call starts with a ``tool_call`` update and changes with ``tool_call_update``s. Every
field but ``toolCallId`` is optional in an update: an absent field keeps its prior value, an
explicit ``null`` clears it, and ``content`` and ``locations`` replace the prior collection
whole (the schema says "Replace the content collection"). A permission request's ``toolCall``
is the same kind of sparse update.

The state is a plain ``dict`` in the protocol's own spelling. Values are shared with the updates
they came from, never copied: callers treat both as immutable. The extraction helpers accept
any shape and never raise: a field of the wrong type simply yields nothing, and the policy that
reads them fails closed on "nothing".
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from baton.errors import InternalError

#: Keys of a session update that are framing, not tool-call state.
_UPDATE_ONLY_KEYS: Final = frozenset({"sessionUpdate"})

#: rawInput keys that name one file (or a list of files) a tool reads or changes. The first four
#: are the protocol-neutral spellings; ``file_path`` and ``notebook_path`` are Claude Code's,
#: ``source`` and ``destination`` name both ends of a move. More keys only make the path check
#: stricter: every path found must pass it.
RAW_INPUT_PATH_KEYS: Final = (
    "path",
    "file",
    "filePath",
    "target",
    "file_path",
    "notebook_path",
    "source",
    "destination",
    "paths",
)

#: rawInput keys that hold the command of an execute or search tool, in the order they are tried.
RAW_INPUT_COMMAND_KEYS: Final = ("command", "cmd", "script")

#: rawInput keys that hold a tool's working directory.
RAW_INPUT_CWD_KEYS: Final = ("cwd", "workdir")

#: rawInput keys that hold a fetch tool's network target.
RAW_INPUT_NETWORK_KEYS: Final = ("url", "uri", "host")

#: Diffs with more lines than this (old plus new) get an upper-bound summary instead of an exact
#: one: the exact line matcher is quadratic in the worst case, and the summary is only a hint.
MAX_EXACT_DIFF_LINES: Final = 5_000


def merge_tool_call(prior: Mapping[str, Any] | None, update: Mapping[str, Any]) -> dict[str, Any]:
    """The tool-call state after ``update`` is applied to ``prior`` (``None``: first sight).

    Present keys overwrite, absent keys keep their prior value, an explicit ``None`` removes the
    key (cleared), ``sessionUpdate`` is dropped. ``prior`` and ``update`` are not modified.

    Raises :class:`InternalError` when ``update`` has no string ``toolCallId`` or names another
    tool call than ``prior``: callers upsert by ``toolCallId`` and must route updates to the
    right state.
    """
    tool_call_id = update.get("toolCallId")
    if not isinstance(tool_call_id, str):
        raise InternalError("a tool-call update without a string toolCallId reached the merge")
    if prior is not None and prior.get("toolCallId") != tool_call_id:
        raise InternalError(
            f"tool-call update for {tool_call_id!r} merged into the state of "
            f"{prior.get('toolCallId')!r}"
        )
    state: dict[str, Any] = dict(prior) if prior is not None else {}
    for key, value in update.items():
        if key in _UPDATE_ONLY_KEYS:
            continue
        if value is None:
            state.pop(key, None)
        else:
            state[key] = value
    return state


def _raw_input(tool_call: Mapping[str, Any]) -> Mapping[str, Any] | None:
    raw = tool_call.get("rawInput")
    return raw if isinstance(raw, Mapping) else None


def _strings(value: object) -> list[str]:
    """``value`` as a list of non-empty strings: a string, or the strings of a list."""
    if isinstance(value, str):
        return [value] if value else []
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str) and item]
    return []


def _items(value: object) -> list[Mapping[str, Any]]:
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, Mapping)]


def tool_paths(tool_call: Mapping[str, Any]) -> list[str]:
    """Every file path the tool call names, in first-seen order, without duplicates.

    Read from ``locations[].path``, ``content[].path`` (a ``diff`` item), ``content[].diff.path``
    (a nested diff), the keys of ``rawInput.changes`` (Codex's patch) and the rawInput keys in
    :data:`RAW_INPUT_PATH_KEYS`.
    """
    found: list[str] = []
    for location in _items(tool_call.get("locations")):
        found.extend(_strings(location.get("path")))
    for item in _items(tool_call.get("content")):
        found.extend(_strings(item.get("path")))
        diff = item.get("diff")
        if isinstance(diff, Mapping):
            found.extend(_strings(diff.get("path")))
    raw = _raw_input(tool_call)
    if raw is not None:
        changes = raw.get("changes")
        if isinstance(changes, Mapping):
            found.extend(key for key in changes if isinstance(key, str) and key)
        for key in RAW_INPUT_PATH_KEYS:
            found.extend(_strings(raw.get(key)))
    return list(dict.fromkeys(found))


def tool_argv(tool_call: Mapping[str, Any]) -> list[str] | None:
    """The command as an argument vector when the agent sent one (Codex sends
    ``["/bin/bash", "-lc", "..."]``), else ``None``. A list holding anything but strings is
    opaque and yields ``None``."""
    raw = _raw_input(tool_call)
    if raw is None:
        return None
    for key in RAW_INPUT_COMMAND_KEYS:
        value = raw.get(key)
        if isinstance(value, list):
            if value and all(isinstance(item, str) for item in value):
                return list(value)
            return None
        if value is not None:
            return None
    return None


def tool_command(tool_call: Mapping[str, Any]) -> str | None:
    """The command the tool call runs: ``rawInput`` itself when it is a string, else the first of
    ``rawInput.command``, ``cmd``, ``script`` (a list is joined with spaces). ``None`` when there
    is none, it is blank, or its shape is not a string or a list of strings."""
    raw = tool_call.get("rawInput")
    if isinstance(raw, str):
        return raw if raw.strip() else None
    if not isinstance(raw, Mapping):
        return None
    for key in RAW_INPUT_COMMAND_KEYS:
        value = raw.get(key)
        if value is None:
            continue
        if isinstance(value, str):
            return value if value.strip() else None
        argv = tool_argv(tool_call)
        if argv is None:
            return None
        joined = " ".join(argv)
        return joined if joined.strip() else None
    return None


def _first_string(tool_call: Mapping[str, Any], keys: tuple[str, ...]) -> str | None:
    raw = _raw_input(tool_call)
    if raw is None:
        return None
    for key in keys:
        value = raw.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def tool_cwd(tool_call: Mapping[str, Any]) -> str | None:
    """The tool's working directory from ``rawInput.cwd`` or ``rawInput.workdir``, if any."""
    return _first_string(tool_call, RAW_INPUT_CWD_KEYS)


def tool_network_target(tool_call: Mapping[str, Any]) -> str | None:
    """The network target of a fetch from ``rawInput.url``, ``uri`` or ``host``, if any."""
    return _first_string(tool_call, RAW_INPUT_NETWORK_KEYS)


@dataclass(frozen=True, slots=True)
class DiffStat:
    """Lines added and removed by one diff item. ``exact`` is false when the diff was too large
    to match line by line and the counts are upper bounds."""

    path: str
    added: int
    removed: int
    exact: bool


def _count_changes(old: list[str], new: list[str]) -> tuple[int, int]:
    added = removed = 0
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, a_start, a_end, b_start, b_end in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            removed += a_end - a_start
        if tag in ("replace", "insert"):
            added += b_end - b_start
    return added, removed


def tool_diff_stats(tool_call: Mapping[str, Any]) -> list[DiffStat]:
    """A +added -removed line count for each ``diff`` content item (``oldText`` absent or null:
    a new file). Items without a string ``path`` and ``newText`` are skipped."""
    stats: list[DiffStat] = []
    for item in _items(tool_call.get("content")):
        if item.get("type") != "diff":
            continue
        path, new_text, old_text = item.get("path"), item.get("newText"), item.get("oldText")
        if not isinstance(path, str) or not isinstance(new_text, str):
            continue
        old_lines = old_text.splitlines() if isinstance(old_text, str) else []
        new_lines = new_text.splitlines()
        if len(old_lines) + len(new_lines) > MAX_EXACT_DIFF_LINES:
            stats.append(DiffStat(path, len(new_lines), len(old_lines), exact=False))
        else:
            added, removed = _count_changes(old_lines, new_lines)
            stats.append(DiffStat(path, added, removed, exact=True))
    return stats


#: The kind a tool call has when it names none (the schema's default).
DEFAULT_TOOL_KIND: Final = "other"


def tool_kind(tool_call: Mapping[str, Any]) -> str:
    """The tool call's ``kind`` verbatim, or ``"other"`` (the schema's default) when it is
    absent, cleared or not a string. Unknown kinds are kept as they are."""
    kind = tool_call.get("kind")
    return kind if isinstance(kind, str) and kind else DEFAULT_TOOL_KIND
