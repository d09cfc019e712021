"""Words of a command that name what git or a shell runs or reads later.

A command may not mention, in any argument or redirection target:

- a ``.git`` path component (hooks and configuration are code git runs), compared as a
  case-insensitive or Unicode-ignoring file system would (:func:`is_git_control_name`);
- a startup file of git or a shell (:data:`STARTUP_FILES`, :data:`ETC_STARTUP_FILES`):
  aliases and functions defined there run in later, innocent-looking commands;
- a path to a program named like git, gh or hub (with a ``/``, as a redirection target, or as
  an operand of a copying program, :data:`FILE_WRITERS`): a copy earlier on ``PATH`` would
  shadow the real one.
"""

from __future__ import annotations

import itertools
import posixpath
import re
import unicodedata
from typing import Final

from baton.runtime.permissions.findings import CommandFinding, reserved_finding

#: Code points a file system may ignore in a name (HFS+), so ``.g\u200cit`` can name ``.git``.
_IGNORABLE: Final = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]")
#: Characters that separate the path components of a word (``/``, ``=``, quotes...).
_COMPONENT_SEPARATORS: Final = re.compile(r"[^\w.~\-\u0080-\uffff]")

#: Files git or a shell reads when it starts, in a home directory: writing one defines aliases,
#: functions, hooks or commands that later, innocent-looking commands run.
STARTUP_FILES: Final = frozenset(
    {
        ".gitconfig",
        ".bashrc",
        ".bash_profile",
        ".bash_login",
        ".bash_logout",
        ".profile",
        ".zshrc",
        ".zshenv",
        ".zprofile",
        ".zlogin",
        ".kshrc",
        ".mkshrc",
        ".shrc",
        ".inputrc",
    }
)
#: The same, system-wide: names under ``/etc``.
ETC_STARTUP_FILES: Final = frozenset(
    {"gitconfig", "bash.bashrc", "bashrc", "profile", "profile.d", "environment", "zshenv"}
)
#: Programs that a file of the same name earlier on ``PATH`` would shadow.
_SHADOWED_PROGRAMS: Final = frozenset({"git", "gh", "hub"})
#: Programs whose operands are files they write (a copy named ``git`` on ``PATH`` shadows git).
FILE_WRITERS: Final = frozenset({"cp", "mv", "ln", "install", "tee", "rsync", "dd", "touch"})


def is_git_control_name(component: str) -> bool:
    """True when a path component names a ``.git`` directory or file, as a case-insensitive or
    Unicode-ignoring file system would read it (``.GIT``, ``.git.``, ``git~1``)."""
    name = _IGNORABLE.sub("", unicodedata.normalize("NFC", component)).lower().rstrip(". ")
    return name in (".git", "git~1")


def names_git_control(word: str) -> bool:
    """True when any component of ``word`` names a ``.git`` directory or file."""
    return any(is_git_control_name(part) for part in _COMPONENT_SEPARATORS.split(word))


def names_startup_file(word: str) -> bool:
    """True when ``word`` names a file git or a shell reads when it starts
    (:data:`STARTUP_FILES`, :data:`ETC_STARTUP_FILES` under ``etc``, ``git`` under ``.config``):
    writing one changes what later commands do."""
    parts = [part.lower() for part in _COMPONENT_SEPARATORS.split(word) if part]
    if any(part in STARTUP_FILES for part in parts):
        return True
    return any(
        (first == ".config" and second == "git") or (first == "etc" and second in ETC_STARTUP_FILES)
        for first, second in itertools.pairwise(parts)
    )


def _names_program(word: str) -> bool:
    name = posixpath.basename(word).lower()
    return name in _SHADOWED_PROGRAMS or name.startswith("git-")


def control_word(word: str, *, target: bool, program: bool = False) -> CommandFinding | None:
    """A reserved finding when ``word`` names what git or the shell runs or reads: a ``.git``
    path, a startup file, or (not as the program itself) a path to a program named like git,
    gh or hub that could shadow the real one. ``target``: the word is a file being written."""
    shown = word[:200]
    if names_git_control(word):
        return reserved_finding("git-control-path", f"the word {shown!r}")
    if names_startup_file(word):
        return reserved_finding("startup-file", f"the word {shown!r}")
    if not program and _names_program(word) and ("/" in word or target):
        return reserved_finding("git-control-path", f"a path to a program named {shown!r}")
    return None
