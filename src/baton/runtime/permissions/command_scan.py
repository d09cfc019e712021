"""The over-reporting scan for reserved commands, in any shell syntax.

This scan looks for the commands of :data:`.findings.RESERVED_RULES` in any text, however
unusual its shell syntax, to name the rule a command breaks. It is not what grants a command:
that takes the certain reading of :mod:`.shell_reading` and the rules of :mod:`.command_rules`,
and a command this scan misses but that reading cannot read is opaque all the same.

What is deliberately *not* reserved: local-only ref management (``git branch -d/-D/-m/-f``,
``git tag``, ``git tag -d/-f``, ``git reset``, ``git rebase``, ``git commit --amend``). It changes
nothing outside the machine and the user reviews the repository before anything is delivered.
``git update-ref`` is reserved even so: it is plumbing that writes or deletes any ref by name
(remote-tracking refs included) with none of the porcelain's checks, which no coding task needs.

How a command is read. A string goes through :mod:`shlex` (POSIX rules, no comment stripping,
so ``true#; git push`` cannot hide the push) and is split at ``&&``, ``||``, ``;``, ``|``, ``&``,
newlines and parentheses; line continuations are joined first. Every word of every segment is
looked at, not only the first, so prefixes cannot hide a command (``FOO=1 git push``,
``command git push``, ``sudo -u x git push``, ``timeout 5 git push``, ``xargs git push``,
``find . -exec git push \\;``). The arguments of a program that runs a script
(:data:`SCRIPT_RUNNERS`: ``sh -c``, ``bash -lc``, ``eval``, ``ssh host '...'``...) and the
contents of command substitutions (``$(...)``, backticks, also inside double quotes) are read
again as scripts, up to :data:`MAX_NESTING_DEPTH` levels. An argument vector (Codex sends
``["/bin/bash", "-lc", "..."]``) is read word for word, with no shell splitting of its own.

Fail closed: unbalanced quoting, nesting past the bound, a command longer than
:data:`MAX_COMMAND_CHARS`, or a subcommand built at run time (``git $SUB``) is reported as
unparseable or reserved, never as clean. The reading over-approximates on purpose: a quoted
``';'`` counts as a separator and ``echo git push`` counts as a push. A false alarm costs an
allow option; a miss would cost a delivery.

What this scan cannot see (commands assembled at run time such as ``G=git; $G push``, aliases)
the certain reading refuses as opaque or reserved.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Iterator, Sequence
from typing import Final

from baton.runtime.permissions.findings import (
    CommandFinding,
    reserved_finding,
    unparseable_finding,
)

#: The longest command text that is parsed. Longer commands are reported unparseable: the
#: pure-Python lexer's cost grows with the text, and no real tool command comes near this.
MAX_COMMAND_CHARS: Final = 100_000

#: How many levels of ``sh -c``, ``eval`` and command substitution are read. Deeper nesting is
#: reported unparseable: it bounds recursion on adversarial input.
MAX_NESTING_DEPTH: Final = 8

#: Characters lexed in total for one command, all nesting levels together. Nested text is read
#: again at every level (a substitution inside ``sh -c`` twice), so adversarial nesting could
#: multiply the work; past this bound the command is reported unparseable.
MAX_SCAN_CHARS: Final = 400_000

#: git, gh, hub and script-runner words examined in one command. Each is checked against the
#: rest of its simple command, so their number multiplies the work; no real command has this
#: many, and past it the command is reported unparseable.
MAX_PROGRAM_WORDS: Final = 256

#: Programs whose arguments may be a script another shell runs: each later word of their
#: segment is read again as a script.
SCRIPT_RUNNERS: Final = frozenset(
    {
        "sh",
        "bash",
        "zsh",
        "dash",
        "ksh",
        "mksh",
        "ash",
        "fish",
        "busybox",
        "eval",
        "su",
        "runuser",
        "watch",
        "ssh",
        "script",
        "flock",
        "env",
        "parallel",
        "tmux",
        "screen",
    }
)

#: Programs that append run-time arguments to the command they start.
_ARGUMENT_FEEDERS: Final = frozenset({"xargs", "parallel"})

_WATCHED_PROGRAMS: Final = frozenset({"git", "gh", "hub"}) | SCRIPT_RUNNERS

#: A word that could hold more than one shell word or a substitution.
_SCRIPT_SIGNS: Final = re.compile(r"[\s;&|()<>`$]")

_PUNCTUATION: Final = "();<>|&\n"
_REDIRECTIONS: Final = frozenset({"<", ">", ">>", "<<", "<<<", ">&", "<&", "&>", "&>>", ">|", "<>"})
#: Redirections whose target word is fed to the command as text (a here-string): read as a script.
_HERE_STRING: Final = "<<<"

# --- git ------------------------------------------------------------------------------------

#: Git's global options that take the next word as their value.
_GIT_OPTIONS_WITH_VALUE: Final = frozenset(
    {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env"}
)
_GIT_REMOTE_CHANGES: Final = frozenset({"add", "set-url", "remove", "rm", "rename", "set-branches"})
#: The options and verbs that make `git config` only read: the one list, shared by the reserved
#: command scan (a read never changes a remote) and the execute rules (git_rules: a read is
#: granted).
GIT_CONFIG_READ_FLAGS: Final = frozenset(
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
GIT_CONFIG_READ_VERBS: Final = frozenset({"get", "list"})
_GIT_CONFIG_EDIT: Final = frozenset({"-e", "--edit", "edit"})
_GIT_CONFIG_REMOTE_PREFIXES: Final = ("remote.", "url.")

# --- gh and hub -----------------------------------------------------------------------------

_GH_PR_READS: Final = frozenset({"view", "list", "diff", "checks", "status", "checkout", "co"})
_GH_RELEASE_READS: Final = frozenset({"view", "list", "download", "verify", "verify-asset"})
_GH_REPO_READS: Final = frozenset({"view", "list", "clone", "gitignore", "license"})
_HUB_DELIVERY: Final = frozenset({"pull-request", "create", "delete", "fork"})
_HUB_RELEASE_READS: Final = frozenset({"list", "show", "download"})
_API_FIELD_FLAGS: Final = ("-f", "-F", "--field", "--raw-field")
_API_METHOD_FLAGS: Final = ("-X", "--method")


def scan_reserved(command: str | Sequence[str]) -> CommandFinding | None:
    """Why ``command`` may not be allowed, or ``None`` when it contains no reserved command.

    ``command`` is a shell command string or an argument vector (run without a shell). Never
    raises on agent input: anything it cannot read is an ``unparseable_command`` finding.
    """
    if isinstance(command, str):
        if len(command) > MAX_COMMAND_CHARS:
            return unparseable_finding(f"command longer than {MAX_COMMAND_CHARS} characters")
        return _Scanner().text(command, 0)
    argv = list(command)
    if sum(len(word) for word in argv) > MAX_COMMAND_CHARS:
        return unparseable_finding(f"command longer than {MAX_COMMAND_CHARS} characters")
    return _Scanner().segment(argv, 0)


def _is_punctuation(token: str) -> bool:
    return bool(token) and all(char in _PUNCTUATION for char in token)


def _lex(text: str) -> list[str]:
    lexer = shlex.shlex(text.replace("\\\n", " "), posix=True, punctuation_chars=_PUNCTUATION)
    lexer.whitespace_split = True
    lexer.whitespace = " \t\r"  # newline is a separator, not whitespace
    lexer.commenters = ""  # bash only comments at a word start; shlex would comment mid-word
    return list(lexer)


def _substitutions(word: str) -> Iterator[str]:
    """The scripts of the command substitutions in a text (``$(...)`` and backticks); an
    unclosed one runs to the end of the text."""
    if "`" in word:
        yield from word.split("`")[1::2]
    start = word.find("$(")
    while start != -1:
        depth, index = 1, start + 2
        while index < len(word) and depth:
            if word[index] == "(":
                depth += 1
            elif word[index] == ")":
                depth -= 1
            index += 1
        yield word[start + 2 : index - 1 if depth == 0 else index]
        # Nested substitutions are read when the outer one is: continue after it.
        start = word.find("$(", index)


class _Scanner:
    """One command's reading, with its share of :data:`MAX_SCAN_CHARS`."""

    def __init__(self) -> None:
        self.budget = MAX_SCAN_CHARS
        self.programs = MAX_PROGRAM_WORDS

    def text(self, text: str, depth: int) -> CommandFinding | None:
        """Read a shell command string."""
        if depth > MAX_NESTING_DEPTH:
            return unparseable_finding(f"scripts nested more than {MAX_NESTING_DEPTH} levels deep")
        self.budget -= len(text)
        if self.budget < 0:
            return unparseable_finding(f"reading the command took over {MAX_SCAN_CHARS} characters")
        try:
            tokens = _lex(text)
        except ValueError as exc:
            return unparseable_finding(f"the shell quoting cannot be read ({exc})")
        # Read from the raw text: a substitution runs inside double quotes too, and backticks
        # can span words. Inside single quotes it would not run; reading it only over-reports.
        for inner in _substitutions(text):
            finding = self.text(inner, depth + 1)
            if finding is not None:
                return finding
        for words, here_strings in _segments(tokens):
            for inner in here_strings:
                finding = self.text(inner, depth + 1)
                if finding is not None:
                    return finding
            finding = self.segment(words, depth)
            if finding is not None:
                return finding
        return None

    def segment(self, words: list[str], depth: int) -> CommandFinding | None:
        """Read one simple command's words (or an argument vector)."""
        git_config_env = fed_at_run_time = False
        rescanned_to = 0  # words before this index were already read again as scripts
        for index, word in enumerate(words):
            program = _program(word)
            if program in _WATCHED_PROGRAMS or program.startswith("git-"):
                self.programs -= 1
                if self.programs < 0:
                    return unparseable_finding(
                        f"more than {MAX_PROGRAM_WORDS} git, gh, hub or script-runner words"
                    )
                finding = self._program(words, index, program, git_config_env, fed_at_run_time)
                if finding is not None:
                    return finding
                if program in SCRIPT_RUNNERS:
                    for later in range(max(index + 1, rescanned_to), len(words)):
                        if _SCRIPT_SIGNS.search(words[later]) is None:
                            continue  # one plain word: already read where it stands
                        finding = self.text(words[later], depth + 1)
                        if finding is not None:
                            return finding
                    rescanned_to = len(words)
            if "=" in word and word.upper().startswith("GIT_CONFIG"):
                git_config_env = True
            if program in _ARGUMENT_FEEDERS:
                fed_at_run_time = True
        return None

    @staticmethod
    def _program(
        words: list[str], index: int, program: str, git_config_env: bool, fed: bool
    ) -> CommandFinding | None:
        if program in ("git", "hub"):
            return _check_git(words[index + 1 :], git_config_env, fed, hub=program == "hub")
        if program.startswith("git-") and len(program) > len("git-"):
            args = [program[len("git-") :], *words[index + 1 :]]
            return _check_git(args, git_config_env, fed, hub=False)
        if program == "gh":
            return _check_gh(words[index + 1 :], fed)
        return None


def _segments(tokens: list[str]) -> Iterator[tuple[list[str], list[str]]]:
    """Simple commands: words with redirections removed, plus their here-string texts."""
    words: list[str] = []
    here_strings: list[str] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token in _REDIRECTIONS:
            if words and words[-1].isdigit():
                words.pop()  # the file-descriptor number of ``2>``
            if index + 1 < len(tokens) and not _is_punctuation(tokens[index + 1]):
                if token == _HERE_STRING:
                    here_strings.append(tokens[index + 1])
                index += 1
        elif _is_punctuation(token):
            if words or here_strings:
                yield words, here_strings
            words, here_strings = [], []
        else:
            words.append(token)
        index += 1
    if words or here_strings:
        yield words, here_strings


def _program(word: str) -> str:
    # Lower-cased: on a case-insensitive file system ``GIT push`` runs git.
    return posixpath.basename(word).lower()


def _is_dynamic(word: str) -> bool:
    return "$" in word or "`" in word


def _positionals(words: list[str]) -> list[str]:
    return [word for word in words if not word.startswith("-")]


def _defines_alias(config: str) -> bool:
    return config.strip().lower().startswith("alias.")


def _check_git(
    args: list[str], git_config_env: bool, fed: bool, *, hub: bool
) -> CommandFinding | None:
    if git_config_env:
        return reserved_finding(
            "git-alias-injection", "git runs with GIT_CONFIG_* set on the command"
        )
    index = 0
    while index < len(args) and args[index].startswith("-"):
        option = args[index]
        value = args[index + 1] if index + 1 < len(args) else ""
        if option == "-c" and _defines_alias(value):
            return reserved_finding("git-alias-injection", f"git -c {value}")
        if option == "--config-env" and _defines_alias(value):
            return reserved_finding("git-alias-injection", f"git --config-env {value}")
        if option.startswith("--config-env=") and _defines_alias(option.partition("=")[2]):
            return reserved_finding("git-alias-injection", f"git {option}")
        index += 2 if option in _GIT_OPTIONS_WITH_VALUE else 1
    if index >= len(args):
        if fed:
            return reserved_finding(
                "git-dynamic-subcommand", "git arguments are supplied at run time"
            )
        return None
    subcommand, rest = args[index], args[index + 1 :]
    if _is_dynamic(subcommand):
        return reserved_finding("git-dynamic-subcommand", f"git subcommand {subcommand!r}")
    subcommand = subcommand.lower()
    first = next(iter(_positionals(rest)), "").lower()
    if subcommand == "push":
        return reserved_finding("git-push", show_command("git", args))
    if subcommand == "send-email":
        return reserved_finding("git-send-email", show_command("git", args))
    if subcommand == "svn" and first == "dcommit":
        return reserved_finding("git-svn-dcommit", show_command("git", args))
    if subcommand == "p4" and first == "submit":
        return reserved_finding("git-p4-submit", show_command("git", args))
    if subcommand == "update-ref":
        return reserved_finding("git-update-ref", show_command("git", args))
    if subcommand == "remote" and first in _GIT_REMOTE_CHANGES:
        return reserved_finding("git-remote-change", show_command("git", args))
    if subcommand == "config" and _config_changes_remote(rest):
        return reserved_finding("git-config-remote", show_command("git", args))
    if hub:
        return _check_hub(subcommand, rest, args)
    return None


def _config_changes_remote(rest: list[str]) -> bool:
    lowered = [word.lower() for word in rest]
    if any(word in _GIT_CONFIG_EDIT for word in lowered):
        return True
    positionals = _positionals(lowered)
    if not any(word.startswith(_GIT_CONFIG_REMOTE_PREFIXES) for word in positionals):
        return False
    if any(word in GIT_CONFIG_READ_FLAGS for word in lowered):
        return False
    if positionals and positionals[0] in GIT_CONFIG_READ_VERBS:
        return False
    # ``git config KEY`` with no option and one word reads the key.
    return not (len(positionals) == 1 and len(lowered) == 1)


def _check_hub(subcommand: str, rest: list[str], args: list[str]) -> CommandFinding | None:
    if subcommand in _HUB_DELIVERY:
        return reserved_finding("hub-delivery", show_command("hub", args))
    if subcommand == "release":
        verb = next(iter(_positionals(rest)), None)
        if verb is not None and verb.lower() not in _HUB_RELEASE_READS:
            return reserved_finding("hub-delivery", show_command("hub", args))
    if subcommand == "api" and api_writes(rest):
        return reserved_finding("gh-api-write", show_command("hub", args))
    return None


def _check_gh(args: list[str], fed: bool) -> CommandFinding | None:
    positionals = _positionals(args)
    if not positionals:
        if fed:
            return reserved_finding(
                "git-dynamic-subcommand", "gh arguments are supplied at run time"
            )
        return None
    group = positionals[0]
    if _is_dynamic(group):
        return reserved_finding("git-dynamic-subcommand", f"gh command {group!r}")
    group = group.lower()
    rest = args[args.index(positionals[0]) + 1 :]
    verbs = [word.lower() for word in _positionals(rest)]
    verb = verbs[0] if verbs else None
    allowlists = {"pr": _GH_PR_READS, "release": _GH_RELEASE_READS, "repo": _GH_REPO_READS}
    if group in allowlists:
        if verb is not None and (verb not in allowlists[group] or _is_dynamic(verb)):
            return reserved_finding(f"gh-{group}-write", show_command("gh", args))
        return None
    if group == "api" and api_writes(rest):
        return reserved_finding("gh-api-write", show_command("gh", args))
    # Flags may come before the verb here, and their values look like verbs: match anywhere.
    if group == "workflow" and "run" in verbs:
        return reserved_finding("gh-workflow-run", show_command("gh", args))
    if group == "alias" and ("set" in verbs or "import" in verbs):
        return reserved_finding("gh-alias-define", show_command("gh", args))
    return None


def api_writes(rest: list[str]) -> bool:
    """True when ``gh api`` / ``hub api`` arguments send data or use a non-GET method."""
    methods: list[str] = []
    fields: list[str] = []
    has_input = False
    index = 0
    while index < len(rest):
        word = rest[index]
        following = rest[index + 1] if index + 1 < len(rest) else ""
        if word in _API_METHOD_FLAGS:
            methods.append(following)
            index += 1
        elif word.startswith("--method="):
            methods.append(word.partition("=")[2])
        elif word.startswith("-X") and len(word) > 2:
            methods.append(word[2:])
        elif word in _API_FIELD_FLAGS:
            fields.append(following)
            index += 1
        elif word.startswith(("--field=", "--raw-field=")):
            fields.append(word.partition("=")[2])
        elif word.startswith(("-f", "-F")) and len(word) > 2:
            fields.append(word[2:])
        elif word == "--input" or word.startswith("--input="):
            has_input = True
        index += 1
    if has_input or any(method.upper() != "GET" for method in methods):
        return True
    endpoint = next(iter(_positionals(rest)), "").lower()
    if endpoint == "graphql":
        return any("mutation" in field.lower() or "@" in field for field in fields)
    return bool(fields) and not methods


def show_command(program: str, args: list[str]) -> str:
    return shlex.join([program, *args])[:200]
