"""Whether a command may be granted: the reserved Git and GitHub delivery commands, and commands
Baton cannot read with certainty.

Delivery (publishing commits, moving or deleting published refs, changing where a repository
publishes, opening or merging pull requests, publishing releases) belongs to the user, not to
the agent Baton drives. A permission request whose command contains one of the commands in
:data:`RESERVED_RULES` can be declined or cancelled, never allowed, under every policy; one
whose command Baton cannot read with certainty is never allowed automatically.

:func:`assess_command` reads a command in two ways and refuses it when either finds a reason:

1. :mod:`.command_scan` looks for reserved commands in any shell syntax, over-reporting on
   purpose, to name the rule a command breaks (``eval 'git push'`` is ``git-push``).
2. :mod:`.shell_reading` reads the command with certainty, for a small documented subset of
   the shell grammar, and :mod:`.command_rules` judges every simple command of that reading:
   a command outside the subset, or one that evaluates text or runs a command from its
   arguments, is ``opaque_command``; a git or gh invocation not on the local/read-only lists is
   ``reserved_command``. Only a command that passes both may be granted.

What no reading can see, and Baton does not claim to: what a script file or a program does
when it runs (``bash deliver.sh``, ``make``, ``pytest``), and Git aliases of a subcommand that
is not on the local list are not run because such a subcommand is refused. ACP attests no
sandbox for the agent process: this is a guard on what Baton approves, not confinement.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from baton.runtime.permissions.command_rules import judge_argv, judge_script
from baton.runtime.permissions.command_scan import (
    MAX_COMMAND_CHARS,
    MAX_NESTING_DEPTH,
    MAX_PROGRAM_WORDS,
    MAX_SCAN_CHARS,
    SCRIPT_RUNNERS,
    scan_reserved,
)
from baton.runtime.permissions.findings import (
    RESERVED_RULES,
    CommandFinding,
    FindingCode,
    ReservedRule,
)

__all__ = [
    "MAX_COMMAND_CHARS",
    "MAX_NESTING_DEPTH",
    "MAX_PROGRAM_WORDS",
    "MAX_SCAN_CHARS",
    "RESERVED_RULES",
    "SCRIPT_RUNNERS",
    "CommandAssessment",
    "CommandFinding",
    "FindingCode",
    "ReservedRule",
    "assess_command",
    "find_reserved",
]


@dataclass(frozen=True, slots=True)
class CommandAssessment:
    """Why a command may not be granted (``finding``, ``None`` when nothing stops it), the
    directories it changes into (``cd DIR``, ``git -C DIR``), which the caller must check lie
    inside the worktree before granting, and its operands."""

    finding: CommandFinding | None
    directories: tuple[str, ...]
    #: Every argument and redirection target, which the caller must check does not lie in a
    #: Git repository's control directory (a bare remote next to the worktree, say).
    operands: tuple[str, ...] = ()


def assess_command(command: str | Sequence[str]) -> CommandAssessment:
    """Assess a shell command string or an argument vector (run without a shell). Never raises
    on agent input; linear in the command's length, within the bounds of :mod:`.command_scan`."""
    finding = scan_reserved(command)
    if finding is not None:
        return CommandAssessment(finding, ())
    judgement = judge_script(command) if isinstance(command, str) else judge_argv(list(command))
    return CommandAssessment(judgement.finding, judgement.directories, judgement.operands)


def find_reserved(command: str | Sequence[str]) -> CommandFinding | None:
    """Why ``command`` may not be granted, or ``None`` when nothing in it stops a grant (its
    directories and operands still need checking against the file system:
    :func:`assess_command`)."""
    return assess_command(command).finding
