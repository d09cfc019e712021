"""Conversation names: the rules a name must follow, and generated names.

A name is what a person types (`baton run --session fix-login`), unique per data directory.
It is 1 to :data:`MAX_SESSION_NAME_CHARS` characters of ASCII letters, digits, ``.``, ``_``
and ``-``, starting with a letter or a digit: safe in a shell, a file name and a URL path
(``baton serve``), and never mistaken for an option.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Final

from baton.errors import SessionNameInvalid

#: Longest name: long enough for a branch-like name, short enough for a table column.
MAX_SESSION_NAME_CHARS: Final = 64
#: The whole rule as one pattern.
SESSION_NAME_PATTERN: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
#: A generated name: this prefix and random hex digits.
GENERATED_PREFIX: Final = "session-"
#: Random bytes in a generated name (8 hex digits: a clash is rare, and then retried).
GENERATED_NAME_BYTES: Final = 4
#: Attempts at a free generated name before giving up (each clash is a 1 in 4 billion event
#: per existing session, so this bound is never reached in practice; it keeps the loop finite).
MAX_GENERATED_NAME_ATTEMPTS: Final = 16


def check_session_name(name: object) -> str:
    """``name`` if it follows the rules, else :class:`SessionNameInvalid` saying which."""
    if not isinstance(name, str) or SESSION_NAME_PATTERN.fullmatch(name) is None:
        shown = repr(name)[: MAX_SESSION_NAME_CHARS + 8]
        raise SessionNameInvalid(
            f"{shown} is not a session name: 1-{MAX_SESSION_NAME_CHARS} characters of letters, "
            "digits, '.', '_' and '-', starting with a letter or digit"
        )
    return name


def generate_session_name(taken: Callable[[str], bool]) -> str:
    """A fresh ``session-xxxxxxxx`` name that ``taken`` says is free."""
    for _attempt in range(MAX_GENERATED_NAME_ATTEMPTS):
        name = GENERATED_PREFIX + os.urandom(GENERATED_NAME_BYTES).hex()
        if not taken(name):
            return name
    raise SessionNameInvalid("no free generated session name was found; name the session")
