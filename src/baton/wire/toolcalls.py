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

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from baton.errors import InternalError

#: Keys of a session update that are framing, not tool-call state.
_UPDATE_ONLY_KEYS: Final = frozenset({"sessionUpdate"})

#: rawInput keys that name one file (or a list of files) a tool reads or changes, as shown to
#: people. The first four are the protocol-neutral spellings; ``file_path`` and ``notebook_path``
#: are Claude Code's, ``source``/``destination``, ``new_path``/``old_path`` and ``move_path`` name
#: both ends of a move. The permission policy does not rely on this list: it reads every string
#: of a file tool's rawInput (:func:`path_candidates`).
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
    "new_path",
    "newPath",
    "old_path",
    "oldPath",
    "move_path",
    "movePath",
)

#: rawInput keys that hold the command of an execute or search tool. Display takes the first
#: present; the permission policy reads them all and refuses a request that carries more than one
#: (:func:`tool_command_values`).
RAW_INPUT_COMMAND_KEYS: Final = (
    "command",
    "cmd",
    "script",
    "argv",
    "args",
    "arguments",
    "commands",
    "commandLine",
    "command_line",
    "shellCommand",
    "shell_command",
    "code",
    "program",
)

#: rawInput keys that hold a tool's working directory (Gemini says ``directory``).
RAW_INPUT_CWD_KEYS: Final = (
    "cwd",
    "workdir",
    "directory",
    "dir",
    "working_directory",
    "workingDirectory",
)

#: rawInput keys that hold a fetch tool's network target, as shown to people. The permission
#: policy reads every string of a fetch's rawInput instead.
RAW_INPUT_NETWORK_KEYS: Final = ("url", "uri", "host", "urls", "uris")

#: Keys whose values are file contents or prose, never a path: skipped when every other string
#: of a file tool's rawInput, ``content`` and ``locations`` is read as a path.
CONTENT_KEYS: Final = frozenset(
    {
        "content",
        "contents",
        "text",
        "newText",
        "oldText",
        "new_string",
        "old_string",
        "newString",
        "oldString",
        "new_source",
        "newSource",
        "new_content",
        "old_content",
        "newContent",
        "oldContent",
        "file_text",
        "old_str",
        "new_str",
        "insert_text",
        "code",
        "source_code",
        "replacement",
        "search",
        "replace",
        "body",
        "snippet",
        "message",
        "summary",
        "prompt",
        "query",
        "unified_diff",
        "diff",
        "patch",
        "instruction",
        "instructions",
        "description",
        "explanation",
        "reason",
        "justification",
        "title",
        "type",
        "kind",
        "cell_type",
        "cell_id",
        "edit_mode",
        "mimeType",
        "data",
        "call_id",
        "turn_id",
        "toolCallId",
        "terminalId",
    }
)

#: Containers entered when every string of a tool call is read (:func:`path_candidates`). Deeper
#: data is not read, and the reading says so: the policy then fails closed.
MAX_WALK_DEPTH: Final = 32

#: Strings and keys read by one :func:`path_candidates` call. More is not read (and the policy
#: fails closed); it bounds the work one request can cause.
MAX_WALK_STRINGS: Final = 10_000

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
    """The file paths the tool call names, for people, in first-seen order, without duplicates.

    Read from ``locations[].path``, ``content[].path`` (a v1 ``diff`` item),
    ``content[].changes[].oldPath`` and ``.path`` (a v2 ``diff`` item), ``content[].diff.path``
    (a nested diff), the keys of ``rawInput.changes`` (Codex's patch) and their ``move_path``,
    and the rawInput keys in :data:`RAW_INPUT_PATH_KEYS`. The permission policy reads more
    (:func:`path_candidates`).
    """
    found: list[str] = []
    for location in _items(tool_call.get("locations")):
        found.extend(_strings(location.get("path")))
    for item in _items(tool_call.get("content")):
        found.extend(_strings(item.get("path")))
        for change in _items(item.get("changes")):  # a v2 diff: changes[] with path, oldPath
            found.extend(_strings(change.get("oldPath")))
            found.extend(_strings(change.get("path")))
        diff = item.get("diff")
        if isinstance(diff, Mapping):
            found.extend(_strings(diff.get("path")))
    raw = _raw_input(tool_call)
    if raw is not None:
        changes = raw.get("changes")
        if isinstance(changes, Mapping):
            for key, change in changes.items():
                if isinstance(key, str) and key:
                    found.append(key)
                if isinstance(change, Mapping):
                    found.extend(_strings(change.get("move_path")))
        for key in RAW_INPUT_PATH_KEYS:
            found.extend(_strings(raw.get(key)))
    return list(dict.fromkeys(found))


@dataclass(frozen=True, slots=True)
class StringWalk:
    """Strings read out of agent JSON: ``strings`` in first-seen order, and ``complete`` false
    when a bound (:data:`MAX_WALK_DEPTH`, :data:`MAX_WALK_STRINGS`) stopped the reading."""

    strings: tuple[str, ...]
    complete: bool


def _walk_strings(roots: list[object], skip_keys: frozenset[str]) -> StringWalk:
    """Every string and mapping key under ``roots``, except the scalar values of ``skip_keys``;
    iterative (no recursion on agent data) and bounded."""
    found: list[str] = []
    complete = True
    stack: list[tuple[object, int]] = [(root, 0) for root in reversed(roots)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, Mapping | list | tuple):
            if depth >= MAX_WALK_DEPTH:
                complete = False
                continue
            children: list[tuple[object, int]] = []
            if isinstance(value, Mapping):
                for key, item in value.items():
                    if isinstance(key, str):
                        found.append(key)
                        # Contents are strings; a container under such a key is still read.
                        if key in skip_keys and not isinstance(item, Mapping | list | tuple):
                            continue
                    children.append((item, depth + 1))
            else:
                children = [(item, depth + 1) for item in value]
            stack.extend(reversed(children))
        if len(found) > MAX_WALK_STRINGS:
            return StringWalk(tuple(found[:MAX_WALK_STRINGS]), complete=False)
    return StringWalk(tuple(dict.fromkeys(item for item in found if item)), complete)


def path_candidates(
    tool_call: Mapping[str, Any], skip_keys: frozenset[str], *, skip_contents: bool = True
) -> StringWalk:
    """Every string that may name a path in the tool call's ``locations``, ``content`` and
    ``rawInput``: every string value and mapping key at any depth, except the string values of
    :data:`CONTENT_KEYS` and of ``skip_keys`` (the caller's own fields, such as a working
    directory). Reading more than a path is harmless for a check that every candidate must pass:
    a field name or a word resolves to a name inside the working directory. With
    ``skip_contents`` false (a fetch, which carries no file contents) contents are read too."""
    skip = CONTENT_KEYS | skip_keys if skip_contents else skip_keys
    roots: list[object] = [tool_call.get("locations"), tool_call.get("content")]
    raw = tool_call.get("rawInput")
    if isinstance(raw, Mapping):
        roots.append({key: value for key, value in raw.items() if key not in skip_keys})
    elif raw is not None:
        roots.append(raw)
    return _walk_strings([root for root in roots if root is not None], skip)


def tool_command_values(tool_call: Mapping[str, Any]) -> list[tuple[str, object]]:
    """Every command-carrying field of the tool call: ``("rawInput", value)`` when rawInput is
    itself a string, else each present key of :data:`RAW_INPUT_COMMAND_KEYS` with its value."""
    raw = tool_call.get("rawInput")
    if isinstance(raw, str):
        return [("rawInput", raw)]
    if not isinstance(raw, Mapping):
        return []
    return [(key, raw[key]) for key in RAW_INPUT_COMMAND_KEYS if raw.get(key) is not None]


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
    """The command the tool call runs, for people: ``rawInput`` itself when it is a string, else
    the first present key of :data:`RAW_INPUT_COMMAND_KEYS` (a list is joined with spaces).
    ``None`` when there is none, it is blank, or its shape is not a string or a list of strings.
    """
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
    """The tool's working directory from the first of :data:`RAW_INPUT_CWD_KEYS`, if any."""
    return _first_string(tool_call, RAW_INPUT_CWD_KEYS)


def tool_cwd_values(tool_call: Mapping[str, Any]) -> list[object]:
    """Every working-directory field of the rawInput (:data:`RAW_INPUT_CWD_KEYS`), whatever its
    type: the policy requires each to be a string naming a directory inside the worktree."""
    raw = _raw_input(tool_call)
    if raw is None:
        return []
    return [raw[key] for key in RAW_INPUT_CWD_KEYS if raw.get(key) is not None]


def tool_network_target(tool_call: Mapping[str, Any]) -> str | None:
    """The network target of a fetch from the first of :data:`RAW_INPUT_NETWORK_KEYS`, for
    people. The permission policy reads every string of the request instead."""
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
    import difflib  # only for a diff to summarize (issue 34)

    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, a_start, a_end, b_start, b_end in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            removed += a_end - a_start
        if tag in ("replace", "insert"):
            added += b_end - b_start
    return added, removed


#: The one patch format ACP v2 defines (``DiffPatch.format``).
GIT_PATCH_FORMAT: Final = "git_patch"

#: Lines of a v2 git patch read for a summary; past it the counts so far are upper-bound hints.
MAX_PATCH_LINES: Final = 100_000


def _patch_stats(text: str) -> dict[str, tuple[int, int, bool]]:
    """Per-file (added, removed, complete) line counts of a git patch, keyed by the new path
    (the old one for a deletion) without the ``a/``/``b/`` prefix."""
    stats: dict[str, tuple[int, int, bool]] = {}
    current: str | None = None
    old_path: str | None = None
    added = removed = 0
    lines = text.splitlines()
    complete = len(lines) <= MAX_PATCH_LINES

    def close() -> None:
        if current is not None:
            stats[current] = (added, removed, complete)

    for line in lines[:MAX_PATCH_LINES]:
        if line.startswith("diff --git "):
            close()
            current, old_path, added, removed = None, None, 0, 0
        elif line.startswith("--- "):
            name = line[4:].strip()
            old_path = name[2:] if name.startswith("a/") else None
        elif line.startswith("+++ "):
            name = line[4:].strip()
            current = name[2:] if name.startswith("b/") else old_path
        elif current is not None and line.startswith("+"):
            added += 1
        elif current is not None and line.startswith("-"):
            removed += 1
    close()
    return stats


def _v2_diff_stats(item: Mapping[str, Any]) -> list[DiffStat]:
    """One :class:`DiffStat` per ``changes[]`` entry of a v2 diff, counted from its git patch
    (matched by path suffix); a change the patch does not cover gets 0/0, not exact."""
    patch = item.get("patch")
    per_file: dict[str, tuple[int, int, bool]] = {}
    if isinstance(patch, Mapping) and patch.get("format") == GIT_PATCH_FORMAT:
        text = patch.get("text")
        if isinstance(text, str):
            per_file = _patch_stats(text)
    stats: list[DiffStat] = []
    for change in _items(item.get("changes")):
        path = change.get("path")
        if not isinstance(path, str):
            continue
        found = next((v for k, v in per_file.items() if path == k or path.endswith("/" + k)), None)
        if found is None:
            stats.append(DiffStat(path, 0, 0, exact=False))
        else:
            stats.append(DiffStat(path, found[0], found[1], exact=found[2]))
    return stats


def tool_diff_stats(tool_call: Mapping[str, Any]) -> list[DiffStat]:
    """A +added -removed line count for each ``diff`` content item: a v1 item from ``oldText``
    (absent or null: a new file) and ``newText``, skipped without a string ``path`` and
    ``newText``; a v2 item (``changes[]``) from its ``git_patch``."""
    stats: list[DiffStat] = []
    for item in _items(tool_call.get("content")):
        if item.get("type") != "diff":
            continue
        if isinstance(item.get("changes"), list):
            stats.extend(_v2_diff_stats(item))
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


#: Characters kept of a tool call's programmatic ``name`` (agent text shown and stored; real
#: names such as ``Bash`` or ``mcp__server__tool`` are far shorter).
MAX_TOOL_NAME_CHARS: Final = 256


def tool_name(tool_call: Mapping[str, Any]) -> str | None:
    """The tool call's programmatic ``name`` (stable ACP since SDK 2.4.0: on tool calls,
    updates and permission requests), cut at :data:`MAX_TOOL_NAME_CHARS`; None when absent,
    cleared (``null``) or not a non-empty string. The merge keeps the latest name sent."""
    name = tool_call.get("name")
    if not isinstance(name, str) or not name:
        return None
    return name[:MAX_TOOL_NAME_CHARS]
