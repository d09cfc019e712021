"""Baton's own rules on a correlated tool call: may any allow option be chosen at all?

The local policy runs before every permission policy, on the tool-call state after
correlation. It never chooses an option; it only says whether allowing is permitted. When it is
not, every allow option is withheld (even from the user under ``ask``) and only reject options
and cancel remain. Rules by tool kind:

- ``edit``, ``delete``, ``move``, ``read``: the tool call must name at least one path, and every
  string that may name a path (every string of ``locations``, ``content`` and ``rawInput`` but
  file contents and prose, :func:`baton.wire.toolcalls.path_candidates`) must pass
  :func:`check_path`: resolved with symlinks followed it lies inside the worktree, and what is
  there now is a directory, nothing yet, or a regular file with a single link (a hard link could
  be the other name of a file outside). ``edit``, ``delete`` and ``move`` may not touch the
  worktree root, anything with a ``.git`` component at any depth, or anything inside a nested
  bare repository.
- ``execute`` and ``search``: the tool call must carry exactly one command (more than one
  command field is opaque), no field that could change how it runs (an environment, standard
  input, a shell), working directories inside the worktree, and a command that
  :func:`~baton.runtime.permissions.reserved_commands.assess_command` reads with certainty and
  finds no reserved command in; every directory it changes into must lie inside too.
- ``fetch``: permitted when the run allows network access and every string of the request is
  either a plain ``http``/``https`` URL or a path that passes the ``read`` rule: anything else
  is a local read.
- any other kind (``think``, ``switch_mode``, ``other``, a kind Baton does not know, no kind):
  declined or cancelled only.

A tool call larger than the bounds below is not read at all (``input_too_large``): the
decision's cost stays linear and bounded whatever the agent sends. A request that stays opaque
after correlation (no path, no command) fails closed. Relative paths are resolved against the
tool's own working directory when it names one, else against the worktree.

Paths are checked when the decision is made; a symlink created later is not seen. ACP attests
no sandbox for the agent process: this is a rule on what Baton approves, not confinement.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

from baton.wire.toolcalls import (
    RAW_INPUT_COMMAND_KEYS,
    RAW_INPUT_CWD_KEYS,
    path_candidates,
    tool_command_values,
    tool_cwd_values,
    tool_kind,
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
PATH_NOT_REGULAR: Final = "path_not_regular"
PATH_HARD_LINKED: Final = "path_hard_linked"
WORKTREE_ROOT: Final = "worktree_root"
GIT_CONTROL_PATH: Final = "git_control_path"
NO_COMMAND: Final = "no_command"
CWD_OUTSIDE_WORKTREE: Final = "cwd_outside_worktree"
RESERVED_COMMAND: Final = "reserved_command"
UNPARSEABLE_COMMAND: Final = "unparseable_command"
OPAQUE_COMMAND: Final = "opaque_command"
NETWORK_DISABLED: Final = "network_disabled"
LOCAL_FILE_FETCH: Final = "local_file_fetch"
KIND_NOT_ALLOWABLE: Final = "kind_not_allowable"
READ_ONLY_LANE: Final = "read_only_lane"
INPUT_TOO_LARGE: Final = "input_too_large"

#: Every reason code :func:`evaluate` can return.
REASON_CODES: Final = (
    PATHS_INSIDE_WORKTREE,
    COMMAND_PERMITTED,
    NETWORK_PERMITTED,
    NO_PATH,
    PATH_OUTSIDE_WORKTREE,
    PATH_UNVERIFIABLE,
    PATH_NOT_REGULAR,
    PATH_HARD_LINKED,
    WORKTREE_ROOT,
    GIT_CONTROL_PATH,
    NO_COMMAND,
    CWD_OUTSIDE_WORKTREE,
    RESERVED_COMMAND,
    UNPARSEABLE_COMMAND,
    OPAQUE_COMMAND,
    NETWORK_DISABLED,
    LOCAL_FILE_FETCH,
    KIND_NOT_ALLOWABLE,
    READ_ONLY_LANE,
    INPUT_TOO_LARGE,
)

#: Characters of agent text (a path, a command) quoted in a decision's detail.
MAX_DETAIL_QUOTE_CHARS: Final = 200

#: JSON values (containers, strings, numbers...) in one correlated tool call that the policy
#: will read. A larger tool call is refused unread (``input_too_large``): it bounds the work and
#: memory one request can cause, and no real tool call comes near it.
MAX_POLICY_VALUES: Final = 50_000
#: Characters of strings and keys in one correlated tool call the policy will read (a large
#: file's new text counts; 8 MB is far past what an agent edits in one call).
MAX_POLICY_CHARS: Final = 8_000_000
#: Container depth of a correlated tool call the policy will read; deeper data is refused
#: unread (JSON nests far less in any real tool call).
MAX_POLICY_DEPTH: Final = 32
#: Paths (``cd DIR``, ``git -C DIR``) a command may change into, times the working directories
#: they may be resolved from: past it the command is opaque (the check is quadratic in it).
MAX_COMMAND_DIRECTORIES: Final = 64

#: Entries looked at inside a directory an edit, delete or move names (for a nested ``.git``);
#: a larger directory cannot be checked and is refused.
MAX_DIRECTORY_ENTRIES: Final = 10_000

#: rawInput keys of an execute request that could change how its command runs (an environment,
#: standard input, a shell or interpreter, configuration): such a request is opaque. Matched as
#: substrings of the key, lower-cased, without ``_`` and ``-``.
EXECUTION_CHANGING_KEY_PARTS: Final = (
    "env",
    "stdin",
    "input",
    "shell",
    "interpreter",
    "executable",
    "config",
    "alias",
    "hook",
    "preload",
)

#: An environment variable's name (``PATH``, ``GIT_DIR``) and a ``NAME=value`` assignment.
_ENV_NAME: Final = re.compile(r"[A-Z_][A-Z0-9_]*")
_ENV_ASSIGNMENT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")

_URL_SAFE: Final = re.compile(r"[^\s\x00-\x1f\x7f\\]+")


@dataclass(frozen=True, slots=True)
class LocalContext:
    """What the local policy checks against: the run's worktree (also the session's working
    directory) and whether the run allows network access."""

    worktree: str
    network_allowed: bool
    #: A read-only lane: file mutations can only be declined or cancelled.
    read_only: bool = False
    #: Additional workspace roots (``--add-dir``): inside them counts as inside the worktree,
    #: under the same symlink, hard-link and ``.git`` rules, each root its own boundary.
    additional_roots: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # Resolved once, with symlinks followed, so every comparison is between real paths.
        object.__setattr__(self, "worktree", os.path.realpath(self.worktree))
        object.__setattr__(
            self, "additional_roots", tuple(os.path.realpath(r) for r in self.additional_roots)
        )

    @property
    def roots(self) -> tuple[str, ...]:
        """The worktree, then the additional roots."""
        return (self.worktree, *self.additional_roots)

    def root_of(self, resolved: str) -> str | None:
        """The root (the innermost, when roots nest) that holds the real path ``resolved``."""
        holding = [root for root in self.roots if _inside(resolved, root)]
        return max(holding, key=len) if holding else None

    def root_for(self, raw: str, base: str) -> str:
        """The root to check ``raw`` (relative ones against ``base``) against: the one holding
        it, else the worktree (whose check then reports it outside)."""
        resolved = _resolve(raw, base)
        found = self.root_of(resolved) if resolved is not None else None
        return found or self.worktree


@dataclass(frozen=True, slots=True)
class LocalDecision:
    """Whether allow options may be chosen for this tool call, with a stable ``reason_code``
    (one of :data:`REASON_CODES`) and a sentence for people in ``detail``."""

    permits_allow: bool
    reason_code: str
    detail: str


def _is_git_control_name(component: str) -> bool:
    """:func:`baton.runtime.permissions.word_rules.is_git_control_name`, its module (the word
    tables of the command rules) loaded with the first request that needs it (issue 34)."""
    from baton.runtime.permissions.word_rules import is_git_control_name

    return is_git_control_name(component)


def _quote(text: str) -> str:
    return repr(text[:MAX_DETAIL_QUOTE_CHARS])


def _block(code: str, detail: str) -> LocalDecision:
    return LocalDecision(False, code, detail)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _resolve(raw: str, base: str) -> str | None:
    """``raw`` resolved against ``base`` with symlinks followed, or None when the path cannot
    be checked as a file tool would read it."""
    probe = raw.strip().lower()
    if "\x00" in raw or probe.startswith(("~", "file:")) or "://" in raw:
        return None
    try:
        return os.path.realpath(os.path.join(base, raw))
    except (OSError, ValueError):
        return None


def _too_large(tool_call: Mapping[str, Any]) -> str | None:
    """Why the tool call is past the policy's bounds, or None. Iterative, and it stops at the
    first bound crossed, so its own cost is bounded too."""
    values = chars = 0
    stack: list[tuple[object, int]] = [(tool_call, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, str):
            chars += len(value)
        elif isinstance(value, Mapping | list | tuple):
            if depth >= MAX_POLICY_DEPTH:
                return f"nested deeper than {MAX_POLICY_DEPTH} levels"
            values += len(value)
            if values > MAX_POLICY_VALUES:
                return f"more than {MAX_POLICY_VALUES} JSON values"
            items = value.items() if isinstance(value, Mapping) else enumerate(value)
            for key, item in items:
                if isinstance(key, str):
                    chars += len(key)
                stack.append((item, depth + 1))
        if chars > MAX_POLICY_CHARS:
            return f"more than {MAX_POLICY_CHARS} characters"
    return None


def _is_git_control_dir(directory: str) -> bool:
    """True for a Git control directory: ``HEAD``, ``objects`` and ``refs`` (a bare repository
    or a ``.git`` directory, whatever its name)."""
    return (
        os.path.isfile(os.path.join(directory, "HEAD"))
        and os.path.isdir(os.path.join(directory, "objects"))
        and os.path.isdir(os.path.join(directory, "refs"))
    )


def _nested_git_dir(path: str, root: str, *, with_work_tree: bool = False) -> str | None:
    """The directory between ``root`` (excluded) and ``path`` (included) that is a Git
    repository's control directory (a bare repository: ``HEAD``, ``objects`` and ``refs``), or
    with ``with_work_tree`` also one holding a ``.git`` (another repository's work tree)."""
    relative = os.path.relpath(path, root)
    current = root
    for part in relative.split(os.sep) if relative != "." else []:
        current = os.path.join(current, part)
        if _is_git_control_dir(current):
            return current
        if with_work_tree and os.path.lexists(os.path.join(current, ".git")):
            return current
    return None


def _in_git_control_dir(operand: str, base: str, seen: dict[str, bool]) -> str | None:
    """The Git control directory (a bare repository, or a ``.git``) that ``operand``, read as a
    path from ``base`` with symlinks followed, lies in or names, anywhere on the file system; or
    None. Writing there moves refs or objects of that repository (``echo SHA >
    ../remote.git/refs/heads/x``). ``seen`` caches directories already looked at (one
    request's operands share most of their ancestors)."""
    resolved = _resolve(operand, base)
    if resolved is None:
        return None
    current = resolved
    while True:
        known = seen.get(current)
        if known is None:
            known = _is_git_control_name(os.path.basename(current)) or _is_git_control_dir(current)
            seen[current] = known
        if known:
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _check_directory(raw: str, directory: str) -> LocalDecision | None:
    """Why changing the directory ``directory`` (deleting or moving it, with all it holds) may
    not be allowed: it holds a ``.git`` entry or a bare repository at some depth, or more
    entries than :data:`MAX_DIRECTORY_ENTRIES` to look at. Symlinks are not followed: deleting
    or moving one changes only the link."""
    seen = 0
    for _, dirs, files in os.walk(directory, followlinks=False):
        seen += len(dirs) + len(files)
        if seen > MAX_DIRECTORY_ENTRIES:
            return _block(
                PATH_UNVERIFIABLE, f"directory {_quote(raw)} holds more than Baton looks at"
            )
        if any(_is_git_control_name(name) for name in (*dirs, *files)) or (
            "HEAD" in files and "objects" in dirs and "refs" in dirs
        ):
            return _block(GIT_CONTROL_PATH, f"directory {_quote(raw)} holds a Git repository")
    return None


def check_path(raw: str, base: str, root: str, *, mutating: bool) -> LocalDecision | None:
    """Why the path ``raw`` (relative ones against ``base``) may not be allowed, or None.

    Inside means: resolved with symlinks followed it lies in ``root``; what is there now is a
    directory, nothing yet, or a regular file with exactly one link. A ``mutating`` access may
    also not name ``root`` itself, a ``.git`` component at any depth (of the path as given or
    resolved), or anything in a nested bare repository.
    """
    resolved = _resolve(raw, base)
    if resolved is None:
        return _block(PATH_UNVERIFIABLE, f"path {_quote(raw)} cannot be checked")
    if not _inside(resolved, root):
        return _block(PATH_OUTSIDE_WORKTREE, f"path {_quote(raw)} resolves outside the worktree")
    if mutating and resolved == root:
        return _block(WORKTREE_ROOT, f"a change to the worktree root itself ({_quote(raw)})")
    if mutating:
        given = raw.replace("\\", "/").split("/")
        real = os.path.relpath(resolved, root).split(os.sep)
        if any(_is_git_control_name(part) for part in (*given, *real)):
            return _block(GIT_CONTROL_PATH, f"path {_quote(raw)} is in a .git directory")
        nested = _nested_git_dir(resolved, root)
        if nested is not None:
            return _block(
                GIT_CONTROL_PATH, f"path {_quote(raw)} is in a Git repository's control directory"
            )
    try:
        info = os.lstat(resolved)
    except OSError as exc:
        if (
            isinstance(exc, FileNotFoundError | NotADirectoryError)
            or exc.errno == errno.ENAMETOOLONG
        ):
            return None  # nothing there yet: a new file
        return _block(PATH_UNVERIFIABLE, f"path {_quote(raw)} cannot be checked ({exc.strerror})")
    if stat.S_ISDIR(info.st_mode):
        return _check_directory(raw, resolved) if mutating else None
    if not stat.S_ISREG(info.st_mode):
        return _block(PATH_NOT_REGULAR, f"path {_quote(raw)} is not a regular file")
    if info.st_nlink != 1:
        return _block(
            PATH_HARD_LINKED,
            f"path {_quote(raw)} has {info.st_nlink} hard links; another may be outside",
        )
    return None


def _working_directories(
    tool_call: Mapping[str, Any], context: LocalContext
) -> list[str] | LocalDecision:
    """The tool's working directories (every cwd field must be a string inside), resolved; the
    worktree when it names none."""
    values = tool_cwd_values(tool_call)
    found: list[str] = []
    for value in values:
        if not isinstance(value, str):
            return _block(CWD_OUTSIDE_WORKTREE, "a working directory that is not a string")
        resolved = _resolve(value, context.worktree)
        if resolved is None or context.root_of(resolved) is None:
            return _block(CWD_OUTSIDE_WORKTREE, f"working directory {_quote(value)} is outside")
        found.append(resolved)
    return list(dict.fromkeys(found)) or [context.worktree]


def _check_paths(tool_call: Mapping[str, Any], kind: str, context: LocalContext) -> LocalDecision:
    bases = _working_directories(tool_call, context)
    if isinstance(bases, LocalDecision):
        return bases
    walk = path_candidates(tool_call, frozenset(RAW_INPUT_CWD_KEYS))
    if not walk.complete:
        return _block(INPUT_TOO_LARGE, f"the {kind} request holds more than Baton reads")
    if not walk.strings:
        return _block(NO_PATH, f"the {kind} request names no path")
    mutating = kind in MUTATING_KINDS
    for raw in walk.strings:
        for base in bases:
            root = context.root_for(raw, base)
            refusal = check_path(raw, base, root, mutating=mutating)
            if refusal is not None:
                return refusal
    count = len(walk.strings)
    return LocalDecision(True, PATHS_INSIDE_WORKTREE, f"{count} path(s) inside the worktree")


def _looks_like_environment(value: object) -> bool:
    """A mapping with an environment-variable name as a key, or a list of ``NAME=value``."""
    if isinstance(value, Mapping):
        return any(isinstance(key, str) and _ENV_NAME.fullmatch(key) for key in value)
    if isinstance(value, list):
        return any(isinstance(item, str) and _ENV_ASSIGNMENT.match(item) for item in value)
    return False


def _execution_changing_field(raw: Mapping[str, Any]) -> str | None:
    """The first rawInput key (besides the command's own) that could change how the command
    runs: a name from :data:`EXECUTION_CHANGING_KEY_PARTS` with a value, or any value shaped
    like an environment."""
    for key, value in raw.items():
        name = str(key)
        if name in RAW_INPUT_COMMAND_KEYS or value in (None, False, "", [], {}):
            continue
        normalized = name.lower().replace("_", "").replace("-", "")
        if any(part in normalized for part in EXECUTION_CHANGING_KEY_PARTS):
            return name
        if _looks_like_environment(value):
            return name
    return None


def _check_command(tool_call: Mapping[str, Any], kind: str, context: LocalContext) -> LocalDecision:
    values = tool_command_values(tool_call)
    if not values:
        return _block(NO_COMMAND, f"the {kind} request carries no command")
    if len(values) > 1:
        keys = ", ".join(key for key, _ in values)
        return _block(OPAQUE_COMMAND, f"the {kind} request carries more than one command ({keys})")
    _, value = values[0]
    command: str | list[str]
    if isinstance(value, str) and value.strip():
        command = value
    elif isinstance(value, list) and value and all(isinstance(item, str) for item in value):
        command = list(value)
    else:
        return _block(NO_COMMAND, f"the {kind} request carries no command Baton can read")
    raw = tool_call.get("rawInput")
    if isinstance(raw, Mapping):
        changing = _execution_changing_field(raw)
        if changing is not None:
            return _block(
                OPAQUE_COMMAND, f"the field {_quote(changing)} may change how the command runs"
            )
    bases = _working_directories(tool_call, context)
    if isinstance(bases, LocalDecision):
        return bases
    # The command rules (a shell reader and the git/gh/program tables) load with the first
    # command a request asks about, not with every run (issue 34).
    from baton.runtime.permissions.reserved_commands import assess_command

    assessment = assess_command(command)
    if assessment.finding is not None:
        return _block(assessment.finding.code, assessment.finding.detail)
    cwds = set(bases)
    for directory in assessment.directories:
        reached = set()
        for base in cwds:
            resolved = _resolve(directory, base)
            if resolved is None or context.root_of(resolved) is None:
                return _block(
                    CWD_OUTSIDE_WORKTREE, f"the command changes into {_quote(directory)}, outside"
                )
            reached.add(resolved)
        cwds |= reached
        if len(cwds) * (len(assessment.directories) or 1) > MAX_COMMAND_DIRECTORIES:
            return _block(OPAQUE_COMMAND, "the command changes directory too many times to follow")
    # Git run from inside another repository nested in the worktree acts on that repository:
    # a fetch there delivers into it.
    for directory in sorted(cwds):
        root = context.root_of(directory) or context.worktree
        nested = _nested_git_dir(directory, root, with_work_tree=True)
        if nested is not None:
            shown = os.path.relpath(nested, root)
            return _block(
                CWD_OUTSIDE_WORKTREE,
                f"the command runs inside another Git repository ({_quote(shown)})",
            )
    seen: dict[str, bool] = {}
    for operand in assessment.operands:
        for base in sorted(cwds):
            control = _in_git_control_dir(operand, base, seen)
            if control is not None:
                return _block(
                    GIT_CONTROL_PATH,
                    f"the argument {_quote(operand)} is in the Git repository {_quote(control)}",
                )
    shown = value if isinstance(value, str) else " ".join(value)
    return LocalDecision(True, COMMAND_PERMITTED, f"command {_quote(shown)}")


def is_plain_web_url(text: str) -> bool:
    """True for an ``http``/``https`` URL with a host and no whitespace, control characters or
    backslashes: a network target. Anything else a fetch names is a local read."""
    if _URL_SAFE.fullmatch(text) is None:
        return False
    try:
        parts = urlsplit(text)
    except ValueError:
        return False
    return parts.scheme.lower() in ("http", "https") and bool(parts.hostname)


def _check_fetch(tool_call: Mapping[str, Any], context: LocalContext) -> LocalDecision:
    walk = path_candidates(tool_call, frozenset(), skip_contents=False)
    urls = [item for item in walk.strings if is_plain_web_url(item)]
    named = _quote(urls[0]) if urls else "an unnamed target"
    if not context.network_allowed:
        return _block(NETWORK_DISABLED, f"fetch of {named} with network access disabled")
    if not walk.complete:
        return _block(INPUT_TOO_LARGE, "the fetch request holds more than Baton reads")
    for item in walk.strings:
        if item in urls:
            continue
        root = context.root_for(item, context.worktree)
        refusal = check_path(item, context.worktree, root, mutating=False)
        if refusal is not None:
            return _block(LOCAL_FILE_FETCH, f"fetch names a local target: {refusal.detail}")
    return LocalDecision(True, NETWORK_PERMITTED, f"fetch of {named}")


def evaluate(tool_call: Mapping[str, Any], context: LocalContext) -> LocalDecision:
    """The local decision for a correlated tool call. Never raises on agent input; its work is
    bounded by :data:`MAX_POLICY_VALUES` and :data:`MAX_POLICY_CHARS`."""
    kind = tool_kind(tool_call)
    if context.read_only and kind in MUTATION_KINDS:
        return _block(
            READ_ONLY_LANE, f"a {_quote(kind)} tool call on a read-only lane can only be declined"
        )
    if kind not in FILE_KINDS and kind not in COMMAND_KINDS and kind != FETCH_KIND:
        return _block(KIND_NOT_ALLOWABLE, f"a {_quote(kind)} tool call can only be declined")
    too_large = _too_large(tool_call)
    if too_large is not None:
        return _block(INPUT_TOO_LARGE, f"the tool call has {too_large}; Baton does not read it")
    if kind in FILE_KINDS:
        return _check_paths(tool_call, kind, context)
    if kind in COMMAND_KINDS:
        return _check_command(tool_call, kind, context)
    return _check_fetch(tool_call, context)
