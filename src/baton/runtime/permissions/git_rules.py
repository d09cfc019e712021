"""git, hub and gh by allowlist: only what acts on the local repository, or only reads.

Only the global options in :data:`GIT_SAFE_OPTIONS` (``-C DIR`` is allowed; the caller checks
``DIR``), only the local subcommands of :data:`GIT_LOCAL_SUBCOMMANDS`, ``git config`` only to
read, no option that runs a command. Anything else is reserved: it might be an alias (git
refuses aliases that shadow its builtins, so an exact-case builtin name is never one), an
external ``git-*`` program or a transport that reaches another repository. gh passes only the
read-only commands of :data:`GH_READS`; hub gets the git rules and :data:`HUB_READS`.
"""

from __future__ import annotations

from typing import Final

from baton.runtime.permissions.command_scan import (
    GIT_CONFIG_READ_FLAGS,
    GIT_CONFIG_READ_VERBS,
    api_writes,
    show_command,
)
from baton.runtime.permissions.findings import CommandFinding, reserved_finding
from baton.runtime.permissions.program_rules import has_option

#: Global git options that change nothing about which repository or program git uses.
GIT_SAFE_OPTIONS: Final = frozenset(
    {
        "--no-pager",
        "-P",
        "--no-replace-objects",
        "--literal-pathspecs",
        "--glob-pathspecs",
        "--noglob-pathspecs",
        "--icase-pathspecs",
        "--no-optional-locks",
        "--no-advice",
        "--version",
        "--help",
        "-h",
        "--html-path",
        "--man-path",
        "--info-path",
    }
)
#: Global options that point git at another repository or other programs.
_GIT_REDIRECTS: Final = ("--git-dir", "--work-tree", "--namespace", "--exec-path", "--super-prefix")

#: git subcommands that act on the local repository only. Every other subcommand is reserved:
#: it reaches another repository (push, send-pack, clone...), or it is an alias or an external
#: ``git-*`` program Baton cannot see into.
GIT_LOCAL_SUBCOMMANDS: Final = frozenset(
    {
        "add",
        "am",
        "annotate",
        "apply",
        "archive",
        "bisect",
        "blame",
        "branch",
        "bundle",
        "cat-file",
        "check-attr",
        "check-ignore",
        "check-mailmap",
        "check-ref-format",
        "checkout",
        "checkout-index",
        "cherry",
        "cherry-pick",
        "clean",
        "commit",
        "commit-graph",
        "commit-tree",
        "config",
        "count-objects",
        "describe",
        "diff",
        "diff-files",
        "diff-index",
        "diff-tree",
        "difftool",
        "fetch",
        "for-each-ref",
        "format-patch",
        "fsck",
        "gc",
        "grep",
        "hash-object",
        "help",
        "init",
        "log",
        "ls-files",
        "ls-remote",
        "ls-tree",
        "merge",
        "merge-base",
        "merge-file",
        "merge-tree",
        "mktag",
        "mktree",
        "mv",
        "name-rev",
        "notes",
        "pack-refs",
        "prune",
        "pull",
        "range-diff",
        "read-tree",
        "rebase",
        "reflog",
        "remote",
        "repack",
        "rerere",
        "reset",
        "restore",
        "rev-list",
        "rev-parse",
        "revert",
        "rm",
        "shortlog",
        "show",
        "show-branch",
        "show-ref",
        "sparse-checkout",
        "stash",
        "status",
        "stripspace",
        "submodule",
        "switch",
        "symbolic-ref",
        "tag",
        "update-index",
        "var",
        "verify-commit",
        "verify-pack",
        "verify-tag",
        "version",
        "whatchanged",
        "worktree",
        "write-tree",
    }
)
#: Plumbing and helpers that move objects or refs between repositories.
GIT_TRANSPORTS: Final = frozenset(
    {
        "send-pack",
        "http-push",
        "receive-pack",
        "upload-pack",
        "upload-archive",
        "fetch-pack",
        "http-fetch",
        "http-backend",
        "daemon",
        "shell",
        "remote-ext",
        "remote-fd",
        "remote-http",
        "remote-https",
        "remote-ftp",
        "remote-ftps",
        "imap-send",
    }
)
#: Subcommands that take a merge strategy, and the strategies git builds in.
_GIT_STRATEGY_SUBCOMMANDS: Final = frozenset({"merge", "pull", "rebase", "cherry-pick", "revert"})
_GIT_BUILTIN_STRATEGIES: Final = frozenset(
    {"ort", "recursive", "resolve", "octopus", "ours", "subtree"}
)
#: Remote URLs whose transport runs a command (``ext::sh -c ...``) or talks over a descriptor.
_COMMAND_TRANSPORTS: Final = ("ext::", "fd::")
#: ``git remote`` verbs that only read (or refresh remote-tracking refs, like fetch).
_GIT_REMOTE_READS: Final = frozenset({"show", "get-url", "prune", "update"})
_GIT_SUBMODULE_READS: Final = frozenset({"status", "summary"})
#: Options that make a git subcommand run a command or install files git later runs.
_GIT_RUNS_OPTIONS: Final[dict[str, tuple[str, ...]]] = {
    "rebase": ("-x", "--exec"),
    "difftool": ("-x", "--extcmd", "-t", "--tool"),
    "grep": ("-O", "--open-files-in-pager"),
    "fetch": ("--upload-pack",),
    "pull": ("--upload-pack",),
    "ls-remote": ("--upload-pack",),
    "archive": ("--exec", "--remote"),
    "init": ("--template", "--separate-git-dir"),
    "am": ("--exec",),
}
_GIT_CONFIG_WRITES: Final = frozenset(
    {
        "--add",
        "--replace-all",
        "--unset",
        "--unset-all",
        "--rename-section",
        "--remove-section",
        "-e",
        "--edit",
        "set",
        "unset",
        "rename-section",
        "remove-section",
        "edit",
    }
)
_GIT_CONFIG_VALUE_OPTIONS: Final = frozenset(
    {"-f", "--file", "--blob", "--type", "--default", "--comment", "--value"}
)

# --- gh and hub -----------------------------------------------------------------------------

#: gh commands that only read, by group: ``None`` means the group has no verbs (or any verb
#: reads). A group or verb not listed is reserved.
GH_READS: Final[dict[str, frozenset[str] | None]] = {
    "pr": frozenset({"view", "list", "diff", "checks", "status", "checkout", "co"}),
    "release": frozenset({"view", "list", "download", "verify", "verify-asset"}),
    "repo": frozenset({"view", "list", "clone", "gitignore", "license"}),
    "issue": frozenset({"view", "list", "status"}),
    "run": frozenset({"view", "list", "watch", "download"}),
    "workflow": frozenset({"view", "list"}),
    "search": None,
    "status": None,
    "api": None,  # judged by its method and fields
    "label": frozenset({"list"}),
    "gist": frozenset({"view", "list"}),
    "cache": frozenset({"list"}),
    "ruleset": frozenset({"view", "list", "check"}),
    "secret": frozenset({"list"}),
    "variable": frozenset({"list", "get"}),
    "alias": frozenset({"list"}),
    "extension": frozenset({"list"}),
    "auth": frozenset({"status"}),
    "help": None,
    "version": None,
}
#: hub's own commands that only read, by command (hub also runs every git subcommand).
HUB_READS: Final[dict[str, frozenset[str] | None]] = {
    "pr": frozenset({"list", "show", "checkout"}),
    "release": frozenset({"list", "show", "download"}),
    "issue": frozenset({"list", "show"}),
    "ci-status": None,
    "api": None,
}


def judge_git(program: str, args: list[str], directories: list[str]) -> CommandFinding | None:
    """Why a git (or hub) invocation may not be granted, or None; ``-C`` directories are
    appended to ``directories`` for the caller to check."""
    index = 0
    while index < len(args) and args[index].startswith("-"):
        option = args[index]
        if option in GIT_SAFE_OPTIONS:
            index += 1
            continue
        if option == "-C" and index + 1 < len(args):
            directories.append(args[index + 1])
            index += 2
            continue
        if option in ("-c", "--config-env") or option.startswith(("-c", "--config-env")):
            return reserved_finding("git-config-write", show_command(program, args))
        if option.startswith(_GIT_REDIRECTS):
            return reserved_finding("git-repository-redirect", show_command(program, args))
        return reserved_finding("git-other-subcommand", f"git option {option[:100]!r}")
    if index >= len(args):
        return None  # git alone prints its help
    # Exact case: ``git STATUS`` is no builtin, and git then looks up an alias
    # case-insensitively (``alias.status`` may push).
    return _judge_git_subcommand(program, args[index], args[index + 1 :], args)


def _judge_git_subcommand(
    program: str, subcommand: str, rest: list[str], args: list[str]
) -> CommandFinding | None:
    shown = show_command(program, args)
    verbs = [word.lower() for word in rest if not word.startswith("-")]
    first = verbs[0] if verbs else ""
    if (
        subcommand in GIT_TRANSPORTS
        or (subcommand == "subtree")
        or (subcommand == "lfs" and first == "push")
        or any(word.lower().startswith(_COMMAND_TRANSPORTS) for word in rest)
    ):
        return reserved_finding("git-transport", shown)
    if program == "hub" and subcommand in HUB_READS:
        return _judge_reads(HUB_READS, subcommand, rest, shown, "hub")
    if subcommand not in GIT_LOCAL_SUBCOMMANDS:
        return reserved_finding("git-other-subcommand", shown)
    if subcommand in _GIT_STRATEGY_SUBCOMMANDS and _external_strategy(rest):
        return reserved_finding("git-runs-command", shown)
    runs = _GIT_RUNS_OPTIONS.get(subcommand, ())
    if any(has_option(word, runs) for word in rest):
        return reserved_finding("git-runs-command", shown)
    if subcommand == "bisect" and first == "run":
        return reserved_finding("git-runs-command", shown)
    if subcommand == "submodule" and first and first not in _GIT_SUBMODULE_READS:
        if first == "foreach":
            return reserved_finding("git-runs-command", shown)
        return reserved_finding("git-other-subcommand", shown)
    if subcommand == "remote" and first and first not in _GIT_REMOTE_READS:
        return reserved_finding("git-remote-change", shown)
    if subcommand == "config" and not _config_reads(rest):
        return reserved_finding("git-config-write", shown)
    return None


def _external_strategy(rest: list[str]) -> bool:
    """True when ``-s``/``--strategy`` names a merge strategy git does not build in: git runs
    ``git-merge-<name>`` from its exec path or ``PATH``, a program Baton cannot see into."""
    for index, word in enumerate(rest):
        value = None
        if word in ("-s", "--strategy"):
            value = rest[index + 1] if index + 1 < len(rest) else ""
        elif word.startswith("--strategy="):
            value = word.partition("=")[2]
        elif word.startswith("-s") and len(word) > 2 and not word.startswith("--"):
            value = word[2:]
        if value is not None and value not in _GIT_BUILTIN_STRATEGIES:
            return True
    return False


def _config_reads(rest: list[str]) -> bool:
    """True when ``git config`` with these arguments only reads."""
    lowered = [word.lower() for word in rest]
    if any(word.split("=", 1)[0] in _GIT_CONFIG_WRITES for word in lowered):
        return False
    positionals: list[str] = []
    index = 0
    while index < len(lowered):
        word = lowered[index]
        if word in _GIT_CONFIG_VALUE_OPTIONS:
            index += 2
            continue
        if not word.startswith("-"):
            positionals.append(word)
        index += 1
    if positionals and positionals[0] in GIT_CONFIG_READ_VERBS:
        return True
    if any(word in GIT_CONFIG_READ_FLAGS for word in lowered):
        return True
    return len(positionals) <= 1


def _judge_reads(
    table: dict[str, frozenset[str] | None], group: str, rest: list[str], shown: str, tool: str
) -> CommandFinding | None:
    verbs = [word for word in rest if not word.startswith("-")]  # exact case, as gh reads them
    if group == "api":
        return reserved_finding("gh-api-write", shown) if api_writes(rest) else None
    allowed = table[group]
    if allowed is None or not verbs:
        return None
    if verbs[0] not in allowed:
        named = {"pr": "gh-pr-write", "release": "gh-release-write", "repo": "gh-repo-write"}
        rule = named.get(group, "gh-other") if tool == "gh" else "gh-other"
        if tool == "hub" and group in ("pr", "release"):
            rule = "hub-delivery"
        return reserved_finding(rule, shown)
    return None


def judge_gh(args: list[str]) -> CommandFinding | None:
    shown = show_command("gh", args)
    positionals = [word for word in args if not word.startswith("-")]
    if not positionals:
        return None  # gh alone (or with --help, --version) prints help
    group = positionals[0]
    if group not in GH_READS:
        return reserved_finding("gh-other", shown)
    rest = args[args.index(positionals[0]) + 1 :]
    return _judge_reads(GH_READS, group, rest, shown, "gh")
