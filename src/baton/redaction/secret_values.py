"""The exact sensitive values (a profile's credentials) that redaction removes wherever they occur.

Pattern rules catch credentials by shape; these are the values Baton *knows* are secret, such
as the ``ANTHROPIC_API_KEY`` the agent was launched with or the ``env`` values of the MCP
servers it declared to the agent, matched exactly. Every occurrence of
every value is masked, overlapping ones included: the characters covered by any occurrence are
replaced as one :data:`~baton.redaction.markers.REDACTED` span, so a value that contains
another, or two values that overlap, never leave a fragment of either in the output.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Final
from urllib.parse import quote

from baton.errors import ConfigurationError
from baton.redaction.markers import REDACTED

#: Values shorter than this are ignored. Masking every occurrence of a short value would destroy
#: ordinary text (a one-letter "secret" would mask every such letter), and a short value is no
#: secret worth the damage; pattern rules still apply to it.
MIN_SECRET_CHARS: Final = 8


def _period(value: str) -> int:
    """The smallest shift at which ``value`` overlaps itself (its length if it never does).

    Two occurrences of ``value`` in a text start at least this far apart, so the scan for the
    next occurrence may skip ahead by it: a repetitive value cannot make masking quadratic.
    """
    failure = [0] * len(value)
    k = 0
    for i in range(1, len(value)):
        while k and value[i] != value[k]:
            k = failure[k - 1]
        if value[i] == value[k]:
            k += 1
        failure[i] = k
    return len(value) - failure[-1]


def _variants(value: str) -> set[str]:
    """``value`` and the spellings it takes in text: stripped of surrounding whitespace (a value
    read from a file with its newline), JSON-escaped (inside JSON text that is itself a string),
    and percent-encoded (inside a URL)."""
    variants: set[str] = set()
    for base in {value, value.strip()}:
        variants.add(base)
        variants.add(json.dumps(base, ensure_ascii=False)[1:-1])
        variants.add(quote(base, safe=""))
    return variants


@dataclass(frozen=True, slots=True)
class _State:
    """One consistent snapshot of a :class:`SecretValues` (replaced whole by ``add``)."""

    values: tuple[str, ...]
    periods: tuple[int, ...]
    shortest: int
    has_whitespace: bool


def _state(unique: set[str]) -> _State:
    ordered = sorted(unique, key=lambda v: (-len(v), v))
    return _State(
        tuple(ordered),
        tuple(_period(v) for v in ordered),
        len(ordered[-1]) if ordered else 0,
        any(any(c.isspace() for c in v) for v in ordered),
    )


def _spellings(values: Iterable[str]) -> set[str]:
    unique: set[str] = set()
    for value in values:
        if not isinstance(value, str):
            raise ConfigurationError(f"secret values must be strings, got a {type(value).__name__}")
        unique.update(v for v in _variants(value) if len(v) >= MIN_SECRET_CHARS)
    return unique


class SecretValues:
    """A grow-only set of exact sensitive values, longest first.

    Values shorter than :data:`MIN_SECRET_CHARS` are dropped, duplicates are merged, and each
    value also contributes its stripped, JSON-escaped and percent-encoded spellings. The object
    never reveals its values in ``repr``.

    Values can be added (:meth:`add`), never removed: every holder of the object (a lane's
    journal, its stream redactors, its records) sees the additions at once, so a value Baton
    hands to the agent later (an MCP server's ``env``) is redacted everywhere from then on.
    Each method reads one consistent snapshot, so an addition from another thread never tears
    a pass.
    """

    __slots__ = ("_state",)

    def __init__(self, values: Iterable[str] = ()) -> None:
        self._state = _state(_spellings(values))

    def add(self, values: Iterable[str]) -> None:
        """Add ``values`` (and their spellings) to the set; values already in it are ignored."""
        new = _spellings(values)
        state = self._state
        if new <= set(state.values):
            return
        self._state = _state(new | set(state.values))

    @property
    def snapshot(self) -> object:
        """An opaque token of the set as it stands: the same object until :meth:`add` grows
        the set (text redacted under one snapshot is clean of every value in it)."""
        return self._state

    def __bool__(self) -> bool:
        """True when at least one value is long enough to be matched."""
        return bool(self._state.values)

    def __len__(self) -> int:
        """The number of values matched (spelling variants included)."""
        return len(self._state.values)

    def __iter__(self) -> Iterator[str]:
        """The values, longest first."""
        return iter(self._state.values)

    def __repr__(self) -> str:
        return f"SecretValues(<{len(self._state.values)} values>)"

    def longest(self) -> int:
        """Length of the longest value (0 when there is none)."""
        values = self._state.values
        return len(values[0]) if values else 0

    @property
    def has_whitespace(self) -> bool:
        """True when some value contains whitespace (a stream must then re-check on any input)."""
        return self._state.has_whitespace

    def occurs_in(self, text: str) -> bool:
        """True when some value occurs in ``text`` (so :meth:`mask` would change it)."""
        state = self._state
        if len(text) < state.shortest:
            return False
        return any(value in text for value in state.values)

    def mask(self, text: str) -> str:
        """Replace every character covered by an occurrence of any value with one marker per
        contiguous covered span."""
        state = self._state
        if len(text) < state.shortest:
            return text
        spans: list[tuple[int, int]] = []
        for value, period in zip(state.values, state.periods, strict=True):
            start = text.find(value)
            size = len(value)
            while start >= 0:
                spans.append((start, start + size))
                start = text.find(value, start + period)
        if not spans:
            return text
        spans.sort()
        pieces: list[str] = []
        position = 0
        run_start, run_end = spans[0]
        for start, end in spans[1:]:
            if start <= run_end:
                run_end = max(run_end, end)
                continue
            pieces.append(text[position:run_start])
            pieces.append(REDACTED)
            position = run_end
            run_start, run_end = start, end
        pieces.append(text[position:run_start])
        pieces.append(REDACTED)
        pieces.append(text[run_end:])
        return "".join(pieces)

    def pending_prefix(self, text: str) -> int:
        """Length of the longest end of ``text`` that is a proper beginning of some value (0 when
        none is): the part a stream must hold back until it knows how the value continues."""
        best = 0
        for value in self._state.values:
            if len(value) - 1 <= best:
                break  # values are longest first: no later one can beat ``best``
            window = text[-(len(value) - 1) :]
            first = value[0]
            index = window.find(first)
            while index >= 0 and len(window) - index > best:
                if value.startswith(window[index:]):
                    best = len(window) - index
                    break
                index = window.find(first, index + 1)
        return best

    def straddling_start(self, text: str, cut: int) -> int | None:
        """The smallest start of an occurrence of a value in ``text`` that begins before ``cut``
        and ends after it, or None."""
        found: int | None = None
        for value in self._state.values:
            size = len(value)
            low = max(0, cut - size + 1)
            high = min(len(text), cut + size - 1)
            if high - low < size:
                continue
            index = text.find(value, low, high)
            if index >= 0 and (found is None or index < found):
                found = index
        return found
