"""Additional workspace roots (``--add-dir``, ``RunRequest.additional_directories``).

Each directory is resolved against the caller's working directory with symlinks followed (so
the agent and the local permission policy see the same real path), must exist and be a
directory, and must not be the run's working directory or lie inside it (that adds nothing).
Duplicates collapse. They go to the agent as ``additionalDirectories`` on session/new, load and
resume (refused locally with CAPABILITY_NOT_ADVERTISED when the agent did not advertise
``sessionCapabilities.additionalDirectories``), and the local permission policy treats them as
inside the worktree, with the same symlink, hard-link and ``.git`` rules.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Final

from baton.errors import AdditionalDirectoryInvalid

#: Additional roots per run: every tool path is checked against each, and a person reads the
#: list; real use is one to three (a sibling checkout, a shared library).
MAX_ADDITIONAL_DIRECTORIES: Final = 16


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def resolve_additional_directories(
    directories: Sequence[str], cwd: str, *, base: str | None = None
) -> tuple[str, ...]:
    """The additional roots, resolved (relative ones against ``base``, default the process's
    working directory) and checked. Raises :class:`AdditionalDirectoryInvalid` naming the first
    bad one."""
    if len(directories) > MAX_ADDITIONAL_DIRECTORIES:
        raise AdditionalDirectoryInvalid(
            str(directories[MAX_ADDITIONAL_DIRECTORIES]),
            f"is one too many: at most {MAX_ADDITIONAL_DIRECTORIES} additional directories",
        )
    real_cwd = os.path.realpath(cwd)
    found: list[str] = []
    for raw in directories:
        if not isinstance(raw, str) or not raw or "\x00" in raw:
            raise AdditionalDirectoryInvalid(repr(raw)[:80], "is not a path")
        resolved = os.path.realpath(os.path.join(base or os.getcwd(), os.path.expanduser(raw)))
        if not os.path.isdir(resolved):
            raise AdditionalDirectoryInvalid(resolved, "is not an existing directory")
        if _inside(resolved, real_cwd):
            raise AdditionalDirectoryInvalid(
                resolved, "is the working directory or inside it (already part of the worktree)"
            )
        if resolved not in found:
            found.append(resolved)
    return tuple(found)
