"""Grok's read-only review lane: a second, adapter-owned Grok process for review work.

The grok profile's normal lane runs with ``--permission-mode default``. Its ``review`` lane
adds Grok's native read-only sandbox (``--sandbox read-only``: the kernel lets the process and
its children read everywhere but write only to temporary directories and ``~/.grok``). On top
of what the sandbox enforces, Baton itself:

- refuses edit, delete, move and MCP tools on that lane (their allow options are never offered,
  whatever the policy), and passes it no MCP servers;
- rejects a repository root that overlaps a location the sandbox still lets Grok write
  (``/tmp``, ``/var/tmp``, ``$TMPDIR``, ``~/.grok``), since "read-only" would not hold there;
- fails the lane's startup when Grok reports that the sandbox was not applied (Landlock or
  Seatbelt unavailable), instead of running unconfined.

Sessions never cross lanes: a review session lives only on the review process.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Final

from baton.errors import ConfigurationError, ReviewRootWritable, SandboxNotApplied

#: The lane name of the read-only review process.
REVIEW_LANE: Final = "review"

#: The normal lane's name.
DEFAULT_LANE: Final = "default"

#: Profiles that have a review lane, and the arguments that start it.
REVIEW_LAUNCH_ARGV: Final[Mapping[str, tuple[str, ...]]] = {
    "grok": (
        "--no-auto-update",
        "--permission-mode",
        "default",
        "--sandbox",
        "read-only",
        "agent",
        "stdio",
    ),
}

#: Locations Grok's read-only sandbox still lets it write (besides $TMPDIR).
SANDBOX_WRITABLE_ROOTS: Final = ("/tmp", "/var/tmp")

#: What Grok says on stderr when its sandbox could not be applied. No capture of this message
#: exists yet, so the pattern is deliberately broad: any line that names the sandbox together
#: with a failure word stops the lane (a false alarm costs a refused start, never a silent
#: unconfined run).
SANDBOX_NOT_APPLIED: Final = re.compile(
    r"sandbox[^\n]{0,120}(not applied|unavailable|unsupported|not supported|failed|disabled|"
    r"could not|cannot|error)",
    re.IGNORECASE,
)


def review_argv(profile_id: str) -> tuple[str, ...]:
    """The launch arguments of ``profile_id``'s review lane (ConfigurationError if none)."""
    argv = REVIEW_LAUNCH_ARGV.get(profile_id)
    if argv is None:
        raise ConfigurationError(
            f"the {profile_id} profile has no read-only review lane (only: "
            f"{', '.join(sorted(REVIEW_LAUNCH_ARGV))})"
        )
    return argv


def writable_roots(environ: Mapping[str, str]) -> list[str]:
    """The real paths the read-only sandbox still lets the agent write."""
    roots = list(SANDBOX_WRITABLE_ROOTS)
    tmpdir = environ.get("TMPDIR")
    if tmpdir:
        roots.append(tmpdir)
    home = environ.get("HOME")
    if home:
        roots.append(os.path.join(home, ".grok"))
    return sorted({os.path.realpath(root) for root in roots})


def _overlaps(a: str, b: str) -> bool:
    return a == b or a.startswith(b.rstrip("/") + "/") or b.startswith(a.rstrip("/") + "/")


def check_review_root(cwd: str, environ: Mapping[str, str]) -> None:
    """Refuse a repository root (and its Git control directory) that overlaps a writable
    location of the sandbox."""
    root = os.path.realpath(cwd)
    candidates = [root]
    git = os.path.join(root, ".git")
    if os.path.exists(git):
        candidates.append(os.path.realpath(git))
    for path in candidates:
        for writable in writable_roots(environ):
            if _overlaps(path, writable):
                raise ReviewRootWritable(
                    f"the review lane's repository {path} overlaps {writable}, which Grok's "
                    "read-only sandbox still lets the agent write; use a repository elsewhere"
                )


def check_sandbox_applied(stderr_tail: str) -> None:
    """Raise :class:`SandboxNotApplied` when the agent's stderr says the sandbox failed."""
    match = SANDBOX_NOT_APPLIED.search(stderr_tail)
    if match is not None:
        raise SandboxNotApplied(
            "Grok reported that its read-only sandbox was not applied; the review lane will "
            "not run unconfined"
        )
