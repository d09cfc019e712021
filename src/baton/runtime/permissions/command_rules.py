"""What the commands of a certainly-read shell command do, and whether Baton may grant them.

:mod:`.shell_reading` turns a command string into simple commands (or calls it opaque). This
module judges each simple command's words and finds the first reason not to grant:

- **Shells.** ``sh``, ``bash`` and ``dash`` with ``-c SCRIPT`` (and only the options
  :data:`.program_rules.SHELL_FLAGS`) have their script read by the same recognizer, up to
  :data:`.command_scan.MAX_NESTING_DEPTH` levels; a shell that reads its script from standard
  input is opaque; a shell running a script file runs a file like any other program. Other
  shells (``zsh``, ``ksh``, ``fish``, ``busybox``...) read another grammar: opaque.
- **Eval-like builtins and command runners** (:data:`.program_rules.EVAL_BUILTINS`,
  :data:`.program_rules.COMMAND_RUNNERS`) are opaque, and so is what
  :func:`.program_rules.judge_program` finds: inline interpreter code, ``find -exec``, awk and
  sed programs that may run commands, HTTP clients that may send data, command options of
  ``tar``, ``rsync``, ``scp``.
- **git, hub and gh** by allowlist (:mod:`.git_rules`).
- **Words** naming ``.git`` paths, startup files, or paths to programs named like git
  (:mod:`.word_rules`) are reserved.

``cd DIR`` is allowed; the local policy checks every ``cd`` and ``git -C`` directory against the
worktree (:attr:`Judgement.directories`). What no reading can see, and Baton does not claim to:
what a script *file* or a program does when it runs (``bash deliver.sh``, ``make``,
``pytest``); this is a rule on what Baton approves, not a sandbox.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from baton.runtime.permissions.command_scan import MAX_NESTING_DEPTH, MAX_SCAN_CHARS
from baton.runtime.permissions.findings import (
    CommandFinding,
    opaque_finding,
    unparseable_finding,
)
from baton.runtime.permissions.git_rules import judge_gh, judge_git
from baton.runtime.permissions.program_rules import (
    COMMAND_RUNNERS,
    EVAL_BUILTINS,
    OTHER_SHELLS,
    POSIX_SHELLS,
    SHELL_FLAGS,
    SHELL_LONG_OPTIONS,
    SHELL_SET_OPTIONS,
    is_interpreter,
    judge_program,
    names_standard_input,
    script_operands,
)
from baton.runtime.permissions.shell_reading import Opaque, SimpleCommand, read_script
from baton.runtime.permissions.word_rules import FILE_WRITERS, control_word

#: Arguments of one command kept for the file-system check (:attr:`Judgement.operands`); more
#: make the command opaque. It bounds the stat calls one request causes.
MAX_OPERANDS: Final = 256


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
    #: Every word and redirection target read, and the files run as programs or scripts: a
    #: file the same command line writes and then runs is a script Baton has not read.
    words: list[str] = field(default_factory=list)
    runs: list[str] = field(default_factory=list)

    def ran_written_script(self) -> CommandFinding | None:
        """Opaque when a file run as a program or script is named anywhere else in the
        command line (where it may be written: ``printf ... > d.sh && sh d.sh``)."""
        for run in self.runs:
            name = posixpath.basename(run.rstrip("/")) or run
            if sum(1 for word in self.words if name in word) > 1:
                return opaque_finding(f"{run[:80]!r} is run and named elsewhere in the command")
        return None

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
            finding = control_word(word, target=word in command.redirect_targets)
            if finding is not None:
                return finding
        self.words.extend(command.redirect_targets)
        for word in command.redirect_targets:
            finding = self.note_operand(word)
            if finding is not None:
                return finding
        return self.argv(command.words, depth)

    def argv(self, words: Sequence[str], depth: int) -> CommandFinding | None:
        if not words:
            return opaque_finding("an empty argument vector")
        if any("\x00" in word for word in words):
            return opaque_finding("a NUL character in an argument (a program would see it cut)")
        if "=" in words[0]:
            return opaque_finding(f"the program name {words[0][:80]!r} holds '='")
        program = posixpath.basename(words[0]).lower()
        args = list(words[1:])
        self.words.extend(words)
        runs_scripts = is_interpreter(program) or program in POSIX_SHELLS
        if "/" in words[0] and not runs_scripts:  # /bin/bash is the shell, not a script
            self.runs.append(words[0])
        if runs_scripts:
            operands = script_operands(args)
            if any(names_standard_input(word) for word in operands):
                return opaque_finding(f"{program} runs a script from its standard input")
            if operands and program not in POSIX_SHELLS:
                self.runs.append(operands[0])
        for index, word in enumerate(words):
            # The program word itself may be git; a copy's operands may not be named git.
            target = index > 0 and program in FILE_WRITERS
            finding = control_word(word, target=target, program=index == 0)
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
            return judge_git(program, args, self.directories)
        if program.startswith("git-") and len(program) > len("git-"):
            return judge_git("git", [program[len("git-") :], *args], self.directories)
        if program == "gh":
            return judge_gh(args)
        return judge_program(program, args)

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
        self.runs.append(args[index])
        return None  # a script file: a program like any other, unless written right here


def judge_script(text: str, *, depth: int = 0) -> Judgement:
    """Judge a shell command string (read by :func:`.shell_reading.read_script`)."""
    judge = _Judge()
    finding = judge.script(text, depth)
    if finding is None:
        finding = judge.ran_written_script()
    return Judgement(finding, tuple(judge.directories), tuple(judge.operands))


def judge_argv(argv: Sequence[str]) -> Judgement:
    """Judge an argument vector run without a shell (Codex's ``["/bin/bash", "-lc", ...]``)."""
    judge = _Judge()
    finding = judge.argv(argv, 0)
    if finding is None:
        finding = judge.ran_written_script()
    return Judgement(finding, tuple(judge.directories), tuple(judge.operands))
