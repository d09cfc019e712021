"""How the CLI shows a turn's workspace comparison (``baton run``'s summary, ``baton show``):
one line of counts, then one ``! unreported`` line per change no tool call reported."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from baton.cli.terminal import visible

#: Unreported changes named one per line; past it a count says how many more.
MAX_UNREPORTED_LINES: Final = 20

#: The symbol of each change kind in a file list.
KIND_MARKS: Final = {
    "added": "A",
    "modified": "M",
    "deleted": "D",
    "renamed": "R",
    "mode": "T",
    "symlink": "L",
}


def _field(data: Mapping[str, Any], camel: str) -> Any:
    """``data[camel]``, or its snake_case spelling (``baton show`` reads the JSON contract
    back with snake_case keys)."""
    if camel in data:
        return data[camel]
    return data.get("".join(f"_{c.lower()}" if c.isupper() else c for c in camel))


def counts_line(changes: Mapping[str, Any]) -> str:
    """``workspace NAME: N files changed (+a -r), U unreported`` (and the bounds reached)."""
    counts = changes.get("counts") or {}
    files = int(counts.get("files", 0))
    line = (
        f"workspace {visible(str(changes.get('workspace')), 80)}: "
        f"{files} file{'s' if files != 1 else ''} changed "
        f"(+{_field(counts, 'linesAdded') or 0} -{_field(counts, 'linesRemoved') or 0})"
    )
    unreported = int(counts.get("unreported", 0))
    line += f", {unreported} unreported" if unreported else ", all reported"
    truncated = changes.get("truncated") or ()
    if truncated:
        line += f" [bounds reached: {', '.join(map(str, truncated))}]"
    if changes.get("provisional"):
        line += " [provisional: the outcome is ambiguous; `baton recover` compares again]"
    return line


def unreported_lines(changes: Mapping[str, Any]) -> list[str]:
    """One line per unreported change (bounded by :data:`MAX_UNREPORTED_LINES`)."""
    files = [f for f in changes.get("files") or () if f.get("unreported")]
    lines = [
        f"! unreported {f.get('kind')}: {visible(str(f.get('path')), 200)}"
        for f in files[:MAX_UNREPORTED_LINES]
    ]
    if len(files) > MAX_UNREPORTED_LINES:
        lines.append(f"! ... and {len(files) - MAX_UNREPORTED_LINES} more unreported")
    return lines


def file_lines(files: list[Mapping[str, Any]]) -> list[str]:
    """``M +3 -1 path`` per file, renames as ``old -> new``, flags after."""
    out = []
    for f in files:
        path = visible(str(f.get("path")), 200)
        old_path = _field(f, "oldPath")
        if old_path:
            path = f"{visible(str(old_path), 200)} -> {path}"
        flags = [
            flag
            for flag, on in (
                ("binary", f.get("binary")),
                ("unreported", f.get("unreported")),
                ("diff cut", _field(f, "diffTruncated")),
                ("not hashed", _field(f, "notHashed")),
            )
            if on
        ]
        mark = KIND_MARKS.get(str(f.get("kind")), "?")
        tail = f"  [{', '.join(flags)}]" if flags else ""
        out.append(f"  {mark} +{f.get('added', 0)} -{f.get('removed', 0)}  {path}{tail}")
    return out
