"""What the commands of a certainly-read shell command do, and whether Baton may grant them.

:mod:`.shell_reading` turns a command string into simple commands (or calls it opaque). This
module judges each simple command's words and finds the first reason not to grant:

- **Shells.** ``sh``, ``bash`` and ``dash`` with ``-c SCRIPT`` (and only the options
  :data:`SHELL_FLAGS`) have their script read by the same recognizer, up to
  :data:`MAX_NESTING_DEPTH` levels; a shell that reads its script from standard input is
  opaque; a shell running a script file runs a file like any other program (see below). Other
  shells (``zsh``, ``ksh``, ``fish``, ``busybox``...) read another grammar: opaque.
- **Eval-like builtins and wrappers** (:data:`EVAL_BUILTINS`, :data:`COMMAND_RUNNERS`): a
  command that evaluates text, changes the shell's state (variables, aliases, traps, hashed
  paths) or runs another command from its arguments (``env``, ``sudo``, ``xargs``,
  ``timeout``...) is opaque, and so are ``find -exec``, inline code for an interpreter
  (``python -c``, ``perl -e``, ``node -e``...), an interpreter reading code from standard
  input, ``awk`` programs that can run commands, ``sed`` scripts with an ``e``, editors, and
  the command options of ``tar``, ``rsync`` and ``scp``.
- **git and hub** (:func:`_judge_git`): only the global options in :data:`GIT_SAFE_OPTIONS`
  (``-C DIR`` is allowed; the local policy checks ``DIR``), only the local subcommands of
  :data:`GIT_LOCAL_SUBCOMMANDS`, ``git config`` only to read, no option that runs a command.
  Anything else is reserved: it might be an alias, an external ``git-*`` program or a transport
  that reaches another repository.
- **gh** (:func:`_judge_gh`): only the read-only commands of :data:`GH_READS`.
- **.git paths**: a word naming anything in a ``.git`` directory at any depth is reserved.

``cd DIR`` is allowed; the local policy checks every ``cd`` and ``git -C`` directory against the
worktree (:attr:`Judgement.directories`). What no reading can see, and Baton does not claim to:
what a script *file* or a program does when it runs (``bash deliver.sh``, ``make``,
``pytest``); this is a rule on what Baton approves, not a sandbox.
"""

from __future__ import annotations

import itertools
import posixpath
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from baton.runtime.permissions.command_scan import (
    MAX_NESTING_DEPTH,
    MAX_SCAN_CHARS,
    api_writes,
    show_command,
)
from baton.runtime.permissions.findings import (
    CommandFinding,
    opaque_finding,
    reserved_finding,
    unparseable_finding,
)
from baton.runtime.permissions.shell_reading import Opaque, SimpleCommand, read_script

#: Shells whose ``-c`` script is read by :mod:`.shell_reading` (they share its grammar).
POSIX_SHELLS: Final = frozenset({"sh", "bash", "dash"})
#: Shells with another grammar, or several (``busybox sh``): anything they run is opaque.
OTHER_SHELLS: Final = frozenset(
    {"zsh", "ksh", "mksh", "pdksh", "ash", "fish", "busybox", "csh", "tcsh", "yash", "rc", "es"}
    | {"pwsh", "powershell", "nu", "xonsh", "elvish", "osh", "oil"}
)
#: Single-letter options of a POSIX shell that change nothing Baton reads (``o`` takes a name
#: from :data:`SHELL_SET_OPTIONS`).
SHELL_FLAGS: Final = frozenset("celuxvo")
SHELL_LONG_OPTIONS: Final = frozenset({"--login", "--noprofile", "--norc", "--posix"})
SHELL_SET_OPTIONS: Final = frozenset({"pipefail", "errexit", "nounset", "xtrace", "verbose"})

#: Builtins that evaluate text, change the shell's state (variables, aliases, functions, traps,
#: hashed paths, options, directory stack) or run another command: opaque. ``command -v`` and
#: ``command -V`` (a lookup) are the exception.
EVAL_BUILTINS: Final = frozenset(
    {
        "eval",
        "source",
        ".",
        "exec",
        "command",
        "builtin",
        "alias",
        "unalias",
        "enable",
        "trap",
        "hash",
        "export",
        "declare",
        "typeset",
        "local",
        "readonly",
        "set",
        "shopt",
        "unset",
        "let",
        "fc",
        "history",
        "coproc",
        "pushd",
        "popd",
        "bind",
        "read",
        "mapfile",
        "readarray",
        "getopts",
        "complete",
    }
)

#: Programs that run another command taken from their arguments (or from their input): opaque.
COMMAND_RUNNERS: Final = frozenset(
    {
        "env",
        "sudo",
        "doas",
        "su",
        "runuser",
        "sg",
        "newgrp",
        "nohup",
        "timeout",
        "nice",
        "ionice",
        "stdbuf",
        "setsid",
        "chroot",
        "unshare",
        "nsenter",
        "taskset",
        "chrt",
        "numactl",
        "xargs",
        "parallel",
        "watch",
        "ssh",
        "script",
        "flock",
        "strace",
        "ltrace",
        "gdb",
        "tmux",
        "screen",
        "expect",
        "firejail",
        "systemd-run",
        "at",
        "batch",
        "rlwrap",
        "unbuffer",
        "valgrind",
        "fakeroot",
        "proot",
        "bwrap",
        "faketime",
        "torsocks",
        "proxychains",
        "proxychains4",
        "xvfb-run",
        "entr",
        "dbus-launch",
        "cpulimit",
        "caffeinate",
        "catchsegv",
        "ed",
        "red",
        "ex",
        "vi",
        "vim",
        "nvim",
        "view",
        "emacs",
        "emacsclient",
    }
)

#: Interpreters, and the options (single-dash letters may be clustered) that give them code
#: inline. Inline code is a script Baton does not read: opaque. So is an interpreter with no
#: file to run, which reads its program from standard input.
INLINE_CODE_OPTIONS: Final[dict[str, tuple[str, ...]]] = {
    "python": ("c",),
    "pypy": ("c",),
    "perl": ("e", "E"),
    "ruby": ("e",),
    "node": ("e", "p", "--eval", "--print"),
    "nodejs": ("e", "p", "--eval", "--print"),
    "bun": ("e", "p", "--eval", "--print", "eval"),
    "deno": ("eval",),
    "php": ("r", "--run"),
    "lua": ("e",),
    "luajit": ("e",),
    "rscript": ("e", "--expr"),
    "r": ("e",),
    "julia": ("e", "E", "--eval", "--print"),
    "osascript": ("e",),
    "groovy": ("e",),
    "tclsh": (),
    "wish": (),
}
_INTERPRETER_NAME: Final = re.compile(r"^([a-z]+?)(?:[0-9]+(?:\.[0-9]+)*)?$")
#: Options with which an interpreter runs no program: ``python -V``, ``python -m pytest``.
_INTERPRETER_NO_PROGRAM: Final = frozenset({"-V", "--version", "-h", "--help", "-m"})

_AWKS: Final = frozenset({"awk", "gawk", "mawk", "nawk", "busybox-awk"})
#: awk program text that can run a command (``system()``, a pipe to or from a command).
_AWK_RUNS: Final = re.compile(r"system|\||getline")
_AWK_OPAQUE_OPTIONS: Final = ("-f", "--file", "-l", "--load", "-i", "--include", "-E", "--exec")
_SEDS: Final = frozenset({"sed", "gsed"})
_FIND_RUNS: Final = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
#: HTTP clients, and the options with which curl and wget send data or read their options from a
#: file (a request that writes could create a ref or a pull request through a forge's API).
_HTTP_CLIENTS: Final = frozenset({"curl", "wget", "http", "https", "xh", "xhs"})
_CURL_WRITES: Final = (
    "-d",
    "--data",
    "--data-raw",
    "--data-binary",
    "--data-ascii",
    "--data-urlencode",
    "--json",
    "-F",
    "--form",
    "--form-string",
    "-T",
    "--upload-file",
    "-K",
    "--config",
)
_WGET_WRITES: Final = (
    "--post-data",
    "--post-file",
    "--body-data",
    "--body-file",
    "-e",
    "--execute",
    "--config",
)
#: Options that make an archiver or a copier run a command: ``tar --to-command``, ``rsync -e``.
_COMMAND_OPTIONS: Final[dict[str, tuple[str, ...]]] = {
    "tar": (
        "--to-command",
        "--checkpoint-action",
        "--use-compress-program",
        "-I",
        "--info-script",
        "--new-volume-script",
        "-F",
    ),
    "gtar": ("--to-command", "--checkpoint-action", "--use-compress-program", "-I", "-F"),
    "rsync": ("-e", "--rsh", "--rsync-path"),
    "scp": ("-S", "-o"),
    "sftp": ("-S", "-D", "-o"),
}

# --- git ------------------------------------------------------------------------------------

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
_GIT_CONFIG_READS: Final = frozenset(
    {
        "--get",
        "--get-all",
        "--get-regexp",
        "--get-urlmatch",
        "--get-color",
        "--get-colorbool",
        "--list",
        "-l",
    }
)
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

#: Code points a file system may ignore in a name (HFS+), so ``.g\u200cit`` can name ``.git``.
_IGNORABLE: Final = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]")
#: Characters that separate the path components of a word (``/``, ``=``, quotes...).
_COMPONENT_SEPARATORS: Final = re.compile(r"[^\w.~\-\u0080-\uffff]")


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


def _control_word(word: str, *, target: bool, program: bool = False) -> CommandFinding | None:
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


#: Arguments of one command kept for the file-system check (:attr:`Judgement.operands`); more
#: make the command opaque. It bounds the stat calls one request causes.
MAX_OPERANDS: Final = 256

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
_FILE_WRITERS: Final = frozenset({"cp", "mv", "ln", "install", "tee", "rsync", "dd", "touch"})


@dataclass(frozen=True, slots=True)
class Judgement:
    """The first reason a read command may not be granted (``None``: none), and the directories
    it changes into (``cd DIR``, ``git -C DIR``) in order, for the local policy to check."""

    finding: CommandFinding | None
    directories: tuple[str, ...]
    #: Every argument and redirection target (and the value after ``=`` of one), for the local
    #: policy to check none of them lies in a Git repository's control directory.
    operands: tuple[str, ...] = ()


@dataclass(slots=True)
class _Judge:
    budget: int = MAX_SCAN_CHARS
    directories: list[str] = field(default_factory=list)
    operands: list[str] = field(default_factory=list)

    def note_operand(self, word: str) -> CommandFinding | None:
        """Keep ``word`` (and what follows its last ``=``) for the file-system check."""
        self.operands.append(word)
        if "=" in word:
            self.operands.append(word.rpartition("=")[2])
        if len(self.operands) > MAX_OPERANDS:
            return opaque_finding(f"more than {MAX_OPERANDS} arguments to check")
        return None

    def script(self, text: str, depth: int) -> CommandFinding | None:
        if depth > MAX_NESTING_DEPTH:
            return unparseable_finding(f"scripts nested more than {MAX_NESTING_DEPTH} levels deep")
        self.budget -= len(text)
        if self.budget < 0:
            return unparseable_finding(f"reading the command took over {MAX_SCAN_CHARS} characters")
        reading = read_script(text)
        if isinstance(reading, Opaque):
            return opaque_finding(reading.detail)
        for command in reading:
            finding = self.command(command, depth)
            if finding is not None:
                return finding
        return None

    def command(self, command: SimpleCommand, depth: int) -> CommandFinding | None:
        for word in (*command.redirect_targets, *command.here_strings):
            finding = _control_word(word, target=word in command.redirect_targets)
            if finding is not None:
                return finding
        for word in command.redirect_targets:
            finding = self.note_operand(word)
            if finding is not None:
                return finding
        return self.argv(command.words, depth)

    def argv(self, words: Sequence[str], depth: int) -> CommandFinding | None:
        if not words:
            return opaque_finding("an empty argument vector")
        program = posixpath.basename(words[0]).lower()
        args = list(words[1:])
        for index, word in enumerate(words):
            # The program word itself may be git; a copy's operands may not be named git.
            target = index > 0 and program in _FILE_WRITERS
            finding = _control_word(word, target=target, program=index == 0)
            if finding is None and index > 0:
                finding = self.note_operand(word)
            if finding is not None:
                return finding
        if program in POSIX_SHELLS:
            return self.shell(program, args, depth)
        if program in OTHER_SHELLS:
            return opaque_finding(f"{program} reads a grammar Baton does not")
        if program in EVAL_BUILTINS:
            if program == "command" and args and args[0] in ("-v", "-V"):
                return None
            return opaque_finding(f"{program!r} evaluates text or changes the shell's state")
        if program in COMMAND_RUNNERS:
            if program == "env" and not args:
                return None
            return opaque_finding(f"{program!r} runs a command taken from its arguments")
        if program == "cd":
            if len(args) != 1 or args[0].startswith("-"):
                return opaque_finding("cd without exactly one directory")
            self.directories.append(args[0])
            return None
        if program == "printf" and any(arg.startswith("-v") for arg in args):
            return opaque_finding("printf -v assigns a variable")
        if program in ("git", "hub"):
            return self.git(program, args)
        if program.startswith("git-") and len(program) > len("git-"):
            return self.git("git", [program[len("git-") :], *args])
        if program == "gh":
            return _judge_gh(args)
        return _judge_program(program, args)

    def shell(self, program: str, args: list[str], depth: int) -> CommandFinding | None:
        index, runs_text = 0, False
        while index < len(args) and args[index][:1] in ("-", "+"):
            option = args[index]
            index += 1
            if option == "--":
                break
            if option in SHELL_LONG_OPTIONS:
                continue
            letters = option[1:]
            if option[0] == "+" or option.startswith("--") or not letters:
                return opaque_finding(f"the {program} option {option!r}")
            if any(letter not in SHELL_FLAGS for letter in letters):
                return opaque_finding(f"the {program} option {option!r}")
            if "o" in letters:
                if index >= len(args) or args[index] not in SHELL_SET_OPTIONS:
                    return opaque_finding(f"{program} -o with an option Baton does not read")
                index += 1
            runs_text = runs_text or "c" in letters
        if runs_text:
            if index >= len(args):
                return opaque_finding(f"{program} -c without a script")
            return self.script(args[index], depth + 1)
        if index >= len(args):
            return opaque_finding(f"{program} reads its script from standard input")
        return None  # a script file: a program like any other

    def git(self, program: str, args: list[str]) -> CommandFinding | None:
        index = 0
        while index < len(args) and args[index].startswith("-"):
            option = args[index]
            if option in GIT_SAFE_OPTIONS:
                index += 1
                continue
            if option == "-C" and index + 1 < len(args):
                self.directories.append(args[index + 1])
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
    if any(_has_option(word, runs) for word in rest):
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


def _has_option(word: str, options: tuple[str, ...]) -> bool:
    for option in options:
        if word == option or word.startswith(option + "="):
            return True
        # A short option with its value attached (``-xCMD``).
        if len(option) == 2 and option[0] == "-" and word.startswith(option) and word[1:2] != "-":
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
    if positionals and positionals[0] in ("get", "list"):
        return True
    if any(word in _GIT_CONFIG_READS for word in lowered):
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


def _judge_gh(args: list[str]) -> CommandFinding | None:
    shown = show_command("gh", args)
    positionals = [word for word in args if not word.startswith("-")]
    if not positionals:
        return None  # gh alone (or with --help, --version) prints help
    group = positionals[0]
    if group not in GH_READS:
        return reserved_finding("gh-other", shown)
    rest = args[args.index(positionals[0]) + 1 :]
    return _judge_reads(GH_READS, group, rest, shown, "gh")


def _judge_program(program: str, args: list[str]) -> CommandFinding | None:
    """Programs other than shells, builtins, git and gh: opaque when they run code given inline
    or commands given in their options, else ``None``."""
    match = _INTERPRETER_NAME.match(program)
    base = match.group(1) if match else program
    inline = INLINE_CODE_OPTIONS.get(program, INLINE_CODE_OPTIONS.get(base))
    if inline is not None:
        for word in args:
            if word in inline or (
                word.startswith("-")
                and not word.startswith("--")
                and any(len(option) == 1 and option in word[1:] for option in inline)
            ):
                return opaque_finding(f"{program} runs inline code")
            if word.split("=", 1)[0] in inline:
                return opaque_finding(f"{program} runs inline code")
        operands = [word for word in args if not word.startswith("-") or word == "-"]
        if "-" in operands:
            return opaque_finding(f"{program} reads its program from standard input")
        if not operands and not any(word in _INTERPRETER_NO_PROGRAM for word in args):
            return opaque_finding(f"{program} reads its program from standard input")
        return None
    if program in _AWKS:
        if any(_has_option(word, _AWK_OPAQUE_OPTIONS) for word in args):
            return opaque_finding(f"{program} loads a program or an extension from a file")
        if any(_AWK_RUNS.search(word) for word in args):
            return opaque_finding(f"an {program} program that can run a command")
        return None
    if program in _SEDS:
        return _judge_sed(program, args)
    if program in _HTTP_CLIENTS:
        return _judge_http_client(program, args)
    if program == "find" and any(word in _FIND_RUNS for word in args):
        return opaque_finding("find runs a command (-exec)")
    options = _COMMAND_OPTIONS.get(program, ())
    if any(_has_option(word, options) for word in args):
        return opaque_finding(f"{program} with an option that runs a command")
    return None


def _judge_http_client(program: str, args: list[str]) -> CommandFinding | None:
    """curl and wget may only read: a method other than GET or HEAD, data to send, an upload,
    or options read from a file could write to a forge's API (a ref, a pull request)."""
    if program in ("http", "https", "xh", "xhs"):
        if args and all(word in ("--help", "--version") for word in args):
            return None
        return opaque_finding(f"{program} requests are not read (they may send data)")
    writes = _CURL_WRITES if program == "curl" else _WGET_WRITES
    methods = ("-X", "--request") if program == "curl" else ("--method",)
    for index, word in enumerate(args):
        if _has_option(word, writes):
            return opaque_finding(f"{program} {word[:40]!r} may send data")
        # curl clusters short options (``-sSd``): any sending letter in a cluster counts.
        if (
            program == "curl"
            and word[:1] == "-"
            and word[1:2] not in ("-", "X")
            and any(letter in word[1:] for letter in "dFTKX")
        ):
            return opaque_finding(f"curl {word[:40]!r} may send data")
        method = None
        if word in methods:
            method = args[index + 1] if index + 1 < len(args) else ""
        elif word.startswith(tuple(f"{option}=" for option in methods)):
            method = word.partition("=")[2]
        elif program == "curl" and word.startswith("-X") and len(word) > 2:
            method = word[2:]
        if method is not None and method.upper() not in ("GET", "HEAD"):
            return opaque_finding(f"{program} with the method {method[:20]!r}")
    return None


def _judge_sed(program: str, args: list[str]) -> CommandFinding | None:
    scripts: list[str] = []
    explicit = False
    index = 0
    operands: list[str] = []
    while index < len(args):
        word = args[index]
        if word in ("-f", "--file") or word.startswith(("--file=", "-f")):
            return opaque_finding(f"{program} reads its script from a file")
        if word in ("-e", "--expression"):
            explicit = True
            scripts.append(args[index + 1] if index + 1 < len(args) else "")
            index += 2
            continue
        if word.startswith("--expression="):
            explicit = True
            scripts.append(word.partition("=")[2])
        elif word.startswith("-e") and len(word) > 2:
            explicit = True
            scripts.append(word[2:])
        elif not word.startswith("-"):
            operands.append(word)
        index += 1
    if not explicit and operands:
        scripts.append(operands[0])
    # GNU sed's ``e`` command and the ``e`` flag of ``s`` run a command; an ``e`` anywhere in
    # the script is taken for one (a false alarm costs only an automatic grant).
    if any("e" in script for script in scripts):
        return opaque_finding(f"a {program} script with an 'e' (it may run a command)")
    return None


def judge_script(text: str, *, depth: int = 0) -> Judgement:
    """Judge a shell command string (read by :func:`.shell_reading.read_script`)."""
    judge = _Judge()
    finding = judge.script(text, depth)
    return Judgement(finding, tuple(judge.directories), tuple(judge.operands))


def judge_argv(argv: Sequence[str]) -> Judgement:
    """Judge an argument vector run without a shell (Codex's ``["/bin/bash", "-lc", ...]``)."""
    judge = _Judge()
    finding = judge.argv(argv, 0)
    return Judgement(finding, tuple(judge.directories), tuple(judge.operands))
