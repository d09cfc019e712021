"""Regular expressions compiled on first use, not at import (issue 34: start-up costs what the
verb uses). The credential rules are alternations of over a hundred shapes; compiling them
takes tens of milliseconds that `baton runs`, `show` or `journal verify` (which import the
redaction package through the store and the journal but never redact) should not pay.

:func:`lazy_compile` returns an object that stands for the compiled pattern: on first use it
compiles it and takes the compiled pattern's own bound methods as its attributes, so every
later call is the C method itself, with no wrapper in between.
"""

from __future__ import annotations

import re
from typing import Any, Final, cast

#: The pattern methods the redaction rules call (each becomes an attribute on first use).
_METHODS: Final = ("search", "match", "fullmatch", "sub", "subn", "finditer", "findall", "split")


class _LazyPattern:
    """A pattern source, compiled by the first attribute read (see the module docstring)."""

    def __init__(self, pattern: str, flags: int) -> None:
        self._source = pattern
        self._flags = flags

    def __getattr__(self, name: str) -> Any:
        # Called only for attributes not set yet, that is before the first compile.
        compiled = re.compile(self._source, self._flags)
        for method in _METHODS:
            setattr(self, method, getattr(compiled, method))
        self.pattern = compiled.pattern
        self.flags = compiled.flags
        self.groups = compiled.groups
        self.groupindex = compiled.groupindex
        return getattr(compiled, name)


def lazy_compile(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)``, done when the pattern is first used."""
    return cast("re.Pattern[str]", _LazyPattern(pattern, flags))
