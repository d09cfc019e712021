"""Bounded projections of agent data: what an event or a record may keep of a JSON value.

Everything Baton builds from an agent's data into a run event or a stored item (a plan, usage
and cost, a tool call's view, a permission's view, mode, config and command names) goes
through :func:`bounded` first. A projection keeps at most :data:`MAX_PROJECTION_DEPTH` levels
of containers, :data:`MAX_PROJECTION_ITEMS` entries per container,
:data:`MAX_PROJECTION_STRING_CHARS` characters per string and :data:`MAX_PROJECTION_CHARS`
characters of strings and keys in all. What is left out is replaced or counted by an explicit
:data:`TRUNCATED_MARKER`, never an error: an agent that nests a plan entry 500 levels deep gets
a marker in the plan, and its turn keeps its real outcome.

Pure: no I/O, no clock. The walk's own recursion is bounded by the depth bound.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

#: Container levels a projection keeps; a deeper container becomes a marker. Real plans,
#: usage and tool-call views are a few levels deep; the JSON encoder refuses 255 levels and
#: the event redactor stops at 64, so 32 keeps every later walk and encode far from both.
MAX_PROJECTION_DEPTH: Final = 32
#: Entries of one mapping or list a projection keeps; the rest are counted in a marker.
MAX_PROJECTION_ITEMS: Final = 256
#: Characters of one string (or key) a projection keeps; the rest are cut with a marker.
MAX_PROJECTION_STRING_CHARS: Final = 16 * 1024
#: Characters of strings and keys one projection keeps in all; past it every further value is a
#: marker. Bounds the memory and the size of one event line or item.
MAX_PROJECTION_CHARS: Final = 256 * 1024
#: What stands for agent data a projection does not keep (the same word the permission
#: records use).
TRUNCATED_MARKER: Final = "[TRUNCATED]"


@dataclass(frozen=True, slots=True)
class ProjectionBounds:
    """The bounds of one projection (the module constants by default)."""

    depth: int = MAX_PROJECTION_DEPTH
    items: int = MAX_PROJECTION_ITEMS
    string_chars: int = MAX_PROJECTION_STRING_CHARS
    total_chars: int = MAX_PROJECTION_CHARS


DEFAULT_BOUNDS: Final = ProjectionBounds()


def bounded(value: object, bounds: ProjectionBounds = DEFAULT_BOUNDS) -> Any:
    """A JSON-typed copy of ``value`` within ``bounds`` (mappings become dicts with string
    keys, lists and tuples lists; anything that is not JSON becomes its bounded ``str``)."""
    return _Walk(bounds).value(value, 0)


def bounded_text(value: str, limit: int = MAX_PROJECTION_STRING_CHARS) -> str:
    """``value`` cut to ``limit`` characters, with a marker counting what was cut."""
    if len(value) <= limit:
        return value
    return f"{value[:limit]}{TRUNCATED_MARKER} ({len(value) - limit} more characters)"


class _Walk:
    __slots__ = ("bounds", "chars")

    def __init__(self, bounds: ProjectionBounds) -> None:
        self.bounds = bounds
        self.chars = bounds.total_chars

    def text(self, value: str) -> str:
        keep = min(len(value), self.bounds.string_chars, max(self.chars, 0))
        self.chars -= keep
        if keep == len(value):
            return value
        return f"{value[:keep]}{TRUNCATED_MARKER} ({len(value) - keep} more characters)"

    def value(self, value: object, depth: int) -> Any:
        if value is None or isinstance(value, bool | int | float):
            return value
        if isinstance(value, str):
            return self.text(value)
        if not isinstance(value, Mapping | list | tuple):
            return self.text(str(value))
        if depth >= self.bounds.depth:
            return f"{TRUNCATED_MARKER} (nested deeper than {self.bounds.depth} levels)"
        if self.chars <= 0:
            return f"{TRUNCATED_MARKER} (size limit)"
        limit = self.bounds.items
        if isinstance(value, Mapping):
            out: dict[str, Any] = {}
            for index, (key, item) in enumerate(value.items()):
                if index >= limit or self.chars <= 0:
                    out[TRUNCATED_MARKER] = f"{len(value) - index} more keys"
                    break
                out[self.text(key if isinstance(key, str) else str(key))] = self.value(
                    item, depth + 1
                )
            return out
        items: list[Any] = []
        for index, item in enumerate(value):
            if index >= limit or self.chars <= 0:
                items.append(f"{TRUNCATED_MARKER} ({len(value) - index} more items)")
                break
            items.append(self.value(item, depth + 1))
        return items
