"""Baton's own rules on a correlated tool call: may any allow option be chosen at all?

The local policy runs before every permission policy, on the tool-call state after
correlation. It never chooses an option; it only says whether allowing is permitted. When it is
not, every allow option is withheld (even from the user under ``ask``) and only reject options
and cancel remain. Rules by tool kind:

- ``edit``, ``delete``, ``move``, ``read``: the tool call must name at least one path, and every
  path, resolved with symlinks followed, must lie inside the worktree. ``edit``, ``delete`` and
  ``move`` may not touch the worktree root itself or anything under its ``.git``.
- ``execute`` and ``search``: the tool call must carry a command; a working directory it names
  must lie inside the worktree; the command may contain no reserved Git or GitHub delivery
  command (:mod:`baton.runtime.permissions.reserved_commands`).
- ``fetch``: permitted when the run allows network access; a ``file:`` URL is a read outside
  the worktree and is refused.
- any other kind (``think``, ``switch_mode``, ``other``, a kind Baton does not know, no kind):
  declined or cancelled only.

A request that stays opaque after correlation (no path, no command) fails closed. The worktree
is also the session's working directory: relative paths are resolved against the tool's own
``cwd`` when it names one, else against the worktree.

Paths are checked when the decision is made; a symlink created later is not seen. ACP attests
no sandbox for the agent process: this is a rule on what Baton approves, not confinement.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from baton.runtime.permissions.reserved_commands import find_reserved
from baton.wire.toolcalls import (
    tool_argv,
    tool_command,
    tool_cwd,
    tool_kind,
    tool_network_target,
    tool_paths,
)

#: Kinds whose paths are checked against the worktree.
FILE_KINDS: Final = frozenset({"edit", "delete", "move", "read"})
#: Kinds a read-only lane never allows.
MUTATION_KINDS: Final = frozenset({"edit", "delete", "move"})
#: File kinds that change the tree (auto-edits may choose for these).
MUTATING_KINDS: Final = frozenset({"edit", "delete", "move"})
#: Kinds whose command is checked.
COMMAND_KINDS: Final = frozenset({"execute", "search"})
#: The network kind.
FETCH_KIND: Final = "fetch"

# Stable reason codes (they appear in interaction records and docs/permissions.md).
PATHS_INSIDE_WORKTREE: Final = "paths_inside_worktree"
COMMAND_PERMITTED: Final = "command_permitted"
NETWORK_PERMITTED: Final = "network_permitted"
NO_PATH: Final = "no_path"
PATH_OUTSIDE_WORKTREE: Final = "path_outside_worktree"
PATH_UNVERIFIABLE: Final = "path_unverifiable"
WORKTREE_ROOT: Final = "worktree_root"
GIT_CONTROL_PATH: Final = "git_control_path"
NO_COMMAND: Final = "no_command"
CWD_OUTSIDE_WORKTREE: Final = "cwd_outside_worktree"
RESERVED_COMMAND: Final = "reserved_command"
UNPARSEABLE_COMMAND: Final = "unparseable_command"
NETWORK_DISABLED: Final = "network_disabled"
LOCAL_FILE_FETCH: Final = "local_file_fetch"
KIND_NOT_ALLOWABLE: Final = "kind_not_allowable"
READ_ONLY_LANE: Final = "read_only_lane"

#: Every reason code :func:`evaluate` can return.
REASON_CODES: Final = (
    PATHS_INSIDE_WORKTREE,
    COMMAND_PERMITTED,
    NETWORK_PERMITTED,
    NO_PATH,
    PATH_OUTSIDE_WORKTREE,
    PATH_UNVERIFIABLE,
    WORKTREE_ROOT,
    GIT_CONTROL_PATH,
    NO_COMMAND,
    CWD_OUTSIDE_WORKTREE,
    RESERVED_COMMAND,
    UNPARSEABLE_COMMAND,
    NETWORK_DISABLED,
    LOCAL_FILE_FETCH,
    KIND_NOT_ALLOWABLE,
    READ_ONLY_LANE,
)

#: Characters of agent text (a path, a command) quoted in a decision's detail.
MAX_DETAIL_QUOTE_CHARS: Final = 200


@dataclass(frozen=True, slots=True)
class LocalContext:
    """What the local policy checks against: the run's worktree (also the session's working
    directory) and whether the run allows network access."""

    worktree: str
    network_allowed: bool
    #: A read-only lane: file mutations can only be declined or cancelled.
    read_only: bool = False

    def __post_init__(self) -> None:
        # Resolved once, with symlinks followed, so every comparison is between real paths.
        object.__setattr__(self, "worktree", os.path.realpath(self.worktree))


@dataclass(frozen=True, slots=True)
class LocalDecision:
    """Whether allow options may be chosen for this tool call, with a stable ``reason_code``
    (one of :data:`REASON_CODES`) and a sentence for people in ``detail``."""

    permits_allow: bool
    reason_code: str
    detail: str


def _quote(text: str) -> str:
    return repr(text[:MAX_DETAIL_QUOTE_CHARS])


def _block(code: str, detail: str) -> LocalDecision:
    return LocalDecision(False, code, detail)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _resolve(raw: str, base: str) -> str | None:
    """``raw`` resolved against ``base`` with symlinks followed, or None when the path cannot
    be checked as a file tool would read it."""
    if "\x00" in raw or raw.startswith("~") or "://" in raw or raw.lower().startswith("file:"):
        return None
    try:
        return os.path.realpath(os.path.join(base, raw))
    except (OSError, ValueError):
        return None


def _check_paths(tool_call: Mapping[str, Any], kind: str, context: LocalContext) -> LocalDecision:
    paths = tool_paths(tool_call)
    if not paths:
        return _block(NO_PATH, f"the {kind} request names no path")
    root = context.worktree
    base = root
    cwd = tool_cwd(tool_call)
    if cwd is not None:
        resolved_cwd = _resolve(cwd, root)
        if resolved_cwd is None or not _inside(resolved_cwd, root):
            return _block(CWD_OUTSIDE_WORKTREE, f"working directory {_quote(cwd)} is outside")
        base = resolved_cwd
    mutating = kind in MUTATING_KINDS
    for raw in paths:
        resolved = _resolve(raw, base)
        if resolved is None:
            return _block(PATH_UNVERIFIABLE, f"path {_quote(raw)} cannot be checked")
        if not _inside(resolved, root):
            return _block(
                PATH_OUTSIDE_WORKTREE, f"path {_quote(raw)} resolves outside the worktree"
            )
        if mutating and resolved == root:
            return _block(WORKTREE_ROOT, f"{kind} of the worktree root itself")
        first = os.path.relpath(resolved, root).split(os.sep, 1)[0]
        if mutating and first.lower() == ".git":
            return _block(GIT_CONTROL_PATH, f"path {_quote(raw)} is Git's control directory")
    count = len(paths)
    return LocalDecision(True, PATHS_INSIDE_WORKTREE, f"{count} path(s) inside the worktree")


def _check_command(tool_call: Mapping[str, Any], kind: str, context: LocalContext) -> LocalDecision:
    command = tool_command(tool_call)
    if command is None:
        return _block(NO_COMMAND, f"the {kind} request carries no command")
    cwd = tool_cwd(tool_call)
    if cwd is not None:
        resolved = _resolve(cwd, context.worktree)
        if resolved is None or not _inside(resolved, context.worktree):
            return _block(CWD_OUTSIDE_WORKTREE, f"working directory {_quote(cwd)} is outside")
    # An argument vector is exact; joining it with spaces would lose its quoting.
    argv = tool_argv(tool_call)
    finding = find_reserved(argv if argv is not None else command)
    if finding is not None:
        return _block(finding.code, finding.detail)
    return LocalDecision(True, COMMAND_PERMITTED, f"command {_quote(command)}")


def _check_fetch(tool_call: Mapping[str, Any], context: LocalContext) -> LocalDecision:
    target = tool_network_target(tool_call)
    named = _quote(target) if target is not None else "an unnamed target"
    if not context.network_allowed:
        return _block(NETWORK_DISABLED, f"fetch of {named} with network access disabled")
    if target is not None and target.strip().lower().startswith("file:"):
        return _block(LOCAL_FILE_FETCH, f"fetch of the local file {named}")
    return LocalDecision(True, NETWORK_PERMITTED, f"fetch of {named}")


def evaluate(tool_call: Mapping[str, Any], context: LocalContext) -> LocalDecision:
    """The local decision for a correlated tool call. Never raises on agent input."""
    kind = tool_kind(tool_call)
    if context.read_only and kind in MUTATION_KINDS:
        return _block(
            READ_ONLY_LANE, f"a {_quote(kind)} tool call on a read-only lane can only be declined"
        )
    if kind in FILE_KINDS:
        return _check_paths(tool_call, kind, context)
    if kind in COMMAND_KINDS:
        return _check_command(tool_call, kind, context)
    if kind == FETCH_KIND:
        return _check_fetch(tool_call, context)
    return _block(KIND_NOT_ALLOWABLE, f"a {_quote(kind)} tool call can only be declined")
