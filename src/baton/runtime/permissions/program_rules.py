"""What programs other than git and gh do with their arguments: the shells, builtins and
programs whose run Baton cannot read, and the options that make a harmless program run a
command. See :mod:`.command_rules` for how they are used.
"""

from __future__ import annotations

import re
from typing import Final

from baton.runtime.permissions.findings import CommandFinding, opaque_finding

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


def has_option(word: str, options: tuple[str, ...]) -> bool:
    """True when ``word`` is one of ``options``, with its value after ``=``, or a short one with
    its value attached (``-xCMD``)."""
    for option in options:
        if word == option or word.startswith(option + "="):
            return True
        # A short option with its value attached (``-xCMD``).
        if len(option) == 2 and option[0] == "-" and word.startswith(option) and word[1:2] != "-":
            return True
    return False


def is_interpreter(program: str) -> bool:
    """True for a program of :data:`INLINE_CODE_OPTIONS` (``python3.11`` is ``python``)."""
    match = _INTERPRETER_NAME.match(program)
    base = match.group(1) if match else program
    return program in INLINE_CODE_OPTIONS or base in INLINE_CODE_OPTIONS


def script_operands(args: list[str]) -> list[str]:
    """The words a shell or an interpreter may run as a program file: every operand that is
    not an option, and the module after ``-m``."""
    found: list[str] = []
    for index, word in enumerate(args):
        if not word.startswith("-") or word == "-":
            found.append(word)
        elif word == "-m" and index + 1 < len(args):
            found.append(args[index + 1])
    return found


def names_standard_input(word: str) -> bool:
    """True for a file name that is the program's own standard input (``/dev/stdin``,
    ``/dev/fd/0``, ``/proc/self/fd/0``, ``-``): a script fed by the command line itself."""
    return word == "-" or word.startswith(("/dev/", "/proc/"))


def judge_program(program: str, args: list[str]) -> CommandFinding | None:
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
        if any(has_option(word, _AWK_OPAQUE_OPTIONS) for word in args):
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
    if any(has_option(word, options) for word in args):
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
        if has_option(word, writes):
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
