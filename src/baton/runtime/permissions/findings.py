"""The reserved list and the findings that keep a command from being allowed.

Delivery (publishing commits, moving or deleting published refs, changing where a repository
publishes, opening or merging pull requests, publishing releases) belongs to the user, not to
the agent Baton drives. A command that contains one of the commands in :data:`RESERVED_RULES`
can be declined or cancelled, never allowed, under every policy. A command Baton cannot read
with certainty (:mod:`.shell_reading`) is ``opaque_command`` and is never allowed automatically
either.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal


@dataclass(frozen=True, slots=True)
class ReservedRule:
    """One entry of the reserved list: a stable ``name`` and what it covers."""

    name: str
    summary: str


#: The reserved list, in the order docs/permissions.md shows it. Names are stable (they appear
#: in interaction records); entries are only added.
RESERVED_RULES: Final[tuple[ReservedRule, ...]] = (
    ReservedRule("git-push", "git push in any form (--force, --delete, --mirror, refspecs with :)"),
    ReservedRule("git-send-email", "git send-email: publishes commits as e-mail"),
    ReservedRule("git-svn-dcommit", "git svn dcommit: publishes commits to Subversion"),
    ReservedRule("git-p4-submit", "git p4 submit: publishes commits to Perforce"),
    ReservedRule(
        "git-remote-change",
        "git remote add, set-url, remove, rm, rename, set-branches: changes where Git publishes",
    ),
    ReservedRule(
        "git-config-remote",
        "git config writing a remote.* or url.* key (or git config --edit): changes remotes",
    ),
    ReservedRule(
        "git-update-ref", "git update-ref in any form: force-updates or deletes any ref by name"
    ),
    ReservedRule(
        "git-alias-injection",
        "git -c alias.*, --config-env alias.*, or GIT_CONFIG_* set on the same command: "
        "defines an alias that could run anything",
    ),
    ReservedRule(
        "git-dynamic-subcommand",
        "a git, gh or hub subcommand built at run time ($VAR, `...`, or arguments fed by "
        "xargs or parallel)",
    ),
    ReservedRule(
        "gh-pr-write",
        "gh pr anything but view, list, diff, checks, status, checkout "
        "(create, merge, close, edit, review, comment, update-branch...)",
    ),
    ReservedRule(
        "gh-release-write",
        "gh release anything but view, list, download, verify, verify-asset "
        "(create, upload, edit, delete...)",
    ),
    ReservedRule(
        "gh-repo-write",
        "gh repo anything but view, list, clone, gitignore, license "
        "(create, delete, edit, rename, fork, sync, archive...)",
    ),
    ReservedRule(
        "gh-api-write",
        "gh api or hub api sending data: a method other than GET, fields without an explicit "
        "GET, --input, or a GraphQL mutation",
    ),
    ReservedRule("gh-workflow-run", "gh workflow run: starts a workflow (deployments are one)"),
    ReservedRule("gh-alias-define", "gh alias set or import: defines a shortcut to anything"),
    ReservedRule(
        "hub-delivery",
        "hub pull-request, create, delete, fork, and hub release anything but list, show, "
        "download (hub also gets every git rule)",
    ),
    ReservedRule(
        "git-transport",
        "git send-pack, http-push, receive-pack, upload-pack, upload-archive, remote-* helpers, "
        "subtree push, lfs push: the plumbing under push and fetch",
    ),
    ReservedRule(
        "git-config-write",
        "git config anything but a read, git -c, git --config-env: could define an alias, a "
        "hook path, a remote or a command git runs",
    ),
    ReservedRule(
        "git-repository-redirect",
        "git --git-dir, --work-tree, --namespace, --exec-path, --super-prefix: points git at "
        "another repository or other programs",
    ),
    ReservedRule(
        "git-runs-command",
        "a git option or subcommand that runs a command or installs files git runs: rebase "
        "--exec, bisect run, submodule foreach, filter-branch, difftool --extcmd, grep "
        "--open-files-in-pager, --upload-pack, --receive-pack, --exec, --template",
    ),
    ReservedRule(
        "git-other-subcommand",
        "any git subcommand not on Baton's list of local ones: an alias, an external git-* "
        "program, clone, submodule changes, and everything that may reach another repository",
    ),
    ReservedRule(
        "gh-other",
        "any gh or hub command not on Baton's read-only list: extensions, aliases, issue, "
        "label, secret and variable changes",
    ),
    ReservedRule(
        "git-control-path",
        "a word naming a path in a .git directory (hooks, config), or a path to a program "
        "named git, gh, hub or git-*: what git runs or reads",
    ),
    ReservedRule(
        "startup-file",
        "a word naming a file git or a shell reads when it starts (.gitconfig, ~/.config/git, "
        ".bashrc, .profile...): aliases and functions defined there run later",
    ),
)

_RULE_NAMES: Final = frozenset(rule.name for rule in RESERVED_RULES)

FindingCode = Literal["reserved_command", "unparseable_command", "opaque_command"]


@dataclass(frozen=True, slots=True)
class CommandFinding:
    """Why a command cannot be allowed. ``rule`` names a :data:`RESERVED_RULES` entry for a
    reserved command and is empty for an unparseable one."""

    code: FindingCode
    rule: str
    detail: str


def reserved_finding(rule: str, detail: str) -> CommandFinding:
    assert rule in _RULE_NAMES, rule
    return CommandFinding("reserved_command", rule, detail)


def unparseable_finding(detail: str) -> CommandFinding:
    return CommandFinding("unparseable_command", "", detail)


def opaque_finding(detail: str) -> CommandFinding:
    """A command Baton cannot read with certainty (it fails closed)."""
    return CommandFinding("opaque_command", "", detail)
