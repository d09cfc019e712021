"""Git run the way a hostile repository cannot turn into code execution.

Every command Baton runs for a workspace goes through :func:`run_git`. A repository's own
configuration (``.git/config``, included files, ``.gitattributes``) can name programs git
would run: hooks, ``core.fsmonitor``, clean/smudge/process filters, textconv and external
diff drivers, pagers, editors, ssh and credential helpers, GPG, automatic gc. Each command
is therefore run:

- with an environment built from nothing (``PATH`` and the C locale only): no inherited
  ``GIT_*`` (``GIT_DIR``, ``GIT_EXTERNAL_DIFF``, ``GIT_SSH_COMMAND``, ``GIT_CONFIG_*``...),
  no system or global config (``GIT_CONFIG_NOSYSTEM``, ``GIT_CONFIG_GLOBAL=/dev/null``),
  no system attributes, no terminal prompt, no optional locks, no replace objects;
- with per-command overrides (``-c``, which beat every config file) of each setting that
  names a program (:data:`HARDENED_CONFIG`), plus, for every filter driver the repository's
  config defines, an empty ``clean``, ``smudge`` and ``process`` and ``required=false``
  (``GIT_CONFIG_COUNT``; git runs no filter whose command is empty);
- diffs with ``--no-textconv --no-ext-diff``, and only between tree objects, which never
  touches a working-tree file through a filter.

Snapshots are written with ``hash-object --no-filters`` and ``update-index --index-info``
into a private index file: no worktree file passes through a filter either.

Blocking calls (``subprocess``): the async callers run them in a thread.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from baton.errors import WorkspaceGitFailed
from baton.runtime.workspaces.limits import GIT_COMMAND_TIMEOUT_SECONDS, MAX_GIT_OUTPUT_BYTES

#: Settings that would make git run a program, each set per command to a value that runs
#: none. ``core.hooksPath=/dev/null`` disables every hook (post-checkout, reference-
#: transaction, post-index-change...).
HARDENED_CONFIG: Final[tuple[tuple[str, str], ...]] = (
    ("core.hooksPath", "/dev/null"),
    ("core.fsmonitor", ""),
    ("core.untrackedCache", "false"),
    ("core.pager", "cat"),
    ("core.editor", "true"),
    ("core.sshCommand", ""),
    ("core.gitProxy", ""),
    ("core.askPass", ""),
    ("core.alternateRefsCommand", ""),
    ("sequence.editor", "true"),
    ("diff.external", ""),
    ("credential.helper", ""),
    ("gpg.program", "false"),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("submodule.recurse", "false"),
    ("protocol.allow", "never"),
    ("uploadpack.packObjectsHook", ""),
    ("pager.diff", "false"),
    ("pager.status", "false"),
    ("advice.detachedHead", "false"),
)

#: The only variables a git command inherits from Baton's own environment.
INHERITED_VARIABLES: Final = ("PATH",)

#: The fixed environment every command gets (see the module docstring).
FIXED_ENVIRONMENT: Final[Mapping[str, str]] = {
    "LC_ALL": "C",
    "LANG": "C",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_NO_REPLACE_OBJECTS": "1",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "HOME": os.devnull,
    "XDG_CONFIG_HOME": os.devnull,
}

#: Characters of git's stderr quoted in an error.
MAX_STDERR_QUOTE_CHARS: Final = 400


@dataclass(frozen=True, slots=True)
class GitResult:
    """One command's exit status and output (bytes, bounded)."""

    returncode: int
    stdout: bytes
    stderr: bytes

    @property
    def text(self) -> str:
        """Standard output decoded (UTF-8, undecodable bytes replaced), stripped."""
        return self.stdout.decode("utf-8", "replace").strip()


def git_environment(
    environ: Mapping[str, str], extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment of one git command: :data:`FIXED_ENVIRONMENT`, ``PATH`` from
    ``environ``, and ``extra`` (``GIT_INDEX_FILE`` for a snapshot's private index)."""
    env = {key: environ[key] for key in INHERITED_VARIABLES if key in environ}
    env.update(FIXED_ENVIRONMENT)
    env.update(extra or {})
    return env


def _config_arguments() -> list[str]:
    args: list[str] = []
    for key, value in HARDENED_CONFIG:
        args += ["-c", f"{key}={value}"]
    return args


def _filter_overrides(filters: Sequence[str]) -> dict[str, str]:
    """Each filter driver emptied, through ``GIT_CONFIG_COUNT`` (a driver's name may hold
    ``=``, which ``-c NAME=VALUE`` cannot carry)."""
    pairs = [
        (f"filter.{name}.{key}", "false" if key == "required" else "")
        for name in filters
        for key in ("clean", "smudge", "process", "required")
    ]
    env = {"GIT_CONFIG_COUNT": str(len(pairs))}
    for index, (key, value) in enumerate(pairs):
        env[f"GIT_CONFIG_KEY_{index}"] = key
        env[f"GIT_CONFIG_VALUE_{index}"] = value
    return env


def run_git(
    cwd: str,
    args: Sequence[str],
    *,
    filters: Sequence[str] = (),
    environ: Mapping[str, str] | None = None,
    extra_env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    check: bool = True,
    max_output: int = MAX_GIT_OUTPUT_BYTES,
) -> GitResult:
    """Run ``git ARGS`` in ``cwd`` hardened (module docstring), ``filters`` being the filter
    drivers the repository defines (:func:`filter_drivers`). WORKSPACE_GIT_FAILED when it
    exits non-zero (with ``check``), outlives :data:`GIT_COMMAND_TIMEOUT_SECONDS`, or writes
    more than ``max_output`` bytes; git not installed is WORKSPACE_GIT_FAILED too."""
    argv = ["git", "--no-pager", *_config_arguments(), *args]
    env = git_environment(
        os.environ if environ is None else environ,
        {**_filter_overrides(filters), **(extra_env or {})},
    )
    try:
        done = subprocess.run(
            argv,
            cwd=cwd,
            env=env,
            input=stdin if stdin is not None else b"",
            capture_output=True,
            timeout=GIT_COMMAND_TIMEOUT_SECONDS,
            check=False,
        )
    except FileNotFoundError as exc:
        raise WorkspaceGitFailed(f"git could not be run: {exc}") from exc
    except subprocess.TimeoutExpired as exc:
        raise WorkspaceGitFailed(
            f"git {args[0]} ran longer than {GIT_COMMAND_TIMEOUT_SECONDS:.0f} s and was stopped"
        ) from exc
    if len(done.stdout) > max_output:
        raise WorkspaceGitFailed(f"git {args[0]} wrote more than {max_output} bytes")
    result = GitResult(done.returncode, done.stdout, done.stderr)
    if check and done.returncode != 0:
        raise WorkspaceGitFailed(f"git {args[0]} failed ({done.returncode}): {_last_line(result)}")
    return result


def _last_line(result: GitResult) -> str:
    lines = result.stderr.decode("utf-8", "replace").strip().splitlines()
    return (lines[-1] if lines else "no message")[:MAX_STDERR_QUOTE_CHARS]


def filter_drivers(cwd: str, environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The names of the filter drivers the repository's config defines (``filter.NAME.*``),
    read without running anything, so each can be emptied per command."""
    found = run_git(
        cwd,
        ["config", "--null", "--name-only", "--get-regexp", r"^filter\."],
        environ=environ,
        check=False,
    )
    names: list[str] = []
    for key in found.stdout.decode("utf-8", "replace").split("\0"):
        # filter.<name>.<key>: the name may itself hold dots.
        if key.startswith("filter.") and key.count(".") >= 2:
            names.append(key[len("filter.") : key.rindex(".")])
    return tuple(dict.fromkeys(names))
