"""The big credential patterns compile on first use, not at import (issue 34), and then behave
exactly like the compiled pattern."""

from __future__ import annotations

import re
import subprocess
import sys

from baton.redaction.lazy_pattern import lazy_compile


def test_a_lazy_pattern_is_the_compiled_pattern_once_used() -> None:
    lazy = lazy_compile(r"(?P<word>b[a-z]+)", re.IGNORECASE)
    assert "search" not in vars(lazy)  # nothing compiled yet
    compiled = re.compile(r"(?P<word>b[a-z]+)", re.IGNORECASE)
    text = "a Bearer and a basic word"
    assert lazy.sub("X", text) == compiled.sub("X", text)
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in compiled.finditer(text)]
    assert lazy.groupindex == compiled.groupindex and lazy.pattern == compiled.pattern
    # After the first use the methods are the compiled pattern's own (no wrapper per call).
    assert vars(lazy)["search"].__self__.pattern == compiled.pattern


def test_importing_the_text_rules_compiles_none_of_the_big_alternations() -> None:
    probe = (
        "import baton.redaction.text as t; "
        "print(sorted(n for n in ('_SHAPES_RE', '_SHAPE_HINT_RE', '_ANY_HINT_RE') "
        "if 'search' in vars(getattr(t, n))))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, check=True)
    assert done.stdout.strip() == b"[]"
