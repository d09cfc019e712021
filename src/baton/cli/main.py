"""`baton`: the entry point. Parses the verb and hands over to its module.

Verbs are registered lazily: the parser imports only the module of the verb being run (the
others are listed by name and one-line help), so `baton --version` and `baton runs` do not pay
for the runtime, asyncio or the permission prompt. `--version` and `-V` are answered before
argparse is even imported.
"""

from __future__ import annotations

import sys

from baton._version import DISTRIBUTION, __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from typing import NoReturn

#: The verbs: name -> (module with ``register(subparsers)``, one-line help). The help here is
#: what `baton --help` lists without importing the module; each module repeats it.
VERBS: dict[str, tuple[str, str]] = {
    "run": ("baton.cli.commands.run", "run one prompt against an agent"),
    "runs": ("baton.cli.commands.runs", "list runs"),
    "show": ("baton.cli.commands.show", "show one run"),
    "session": (
        "baton.cli.commands.session",
        "create, show and close named sessions (conversations)",
    ),
    "sessions": ("baton.cli.commands.sessions", "list named sessions"),
    "recover": ("baton.cli.commands.recover", "inspect and settle a RECOVERY_REQUIRED run"),
    "doctor": (
        "baton.cli.commands.doctor",
        "check which agents are installed, compatible and signed in",
    ),
    "journal": ("baton.cli.commands.journal", "show or verify the protocol journal"),
    "serve": ("baton.cli.commands.serve", "run the runtime as a local service with an HTTP API"),
    "inspect": (
        "baton.cli.commands.inspect",
        "open the inspector (the web page of baton serve), starting the service if needed",
    ),
    "submit": ("baton.cli.commands.submit", "queue a turn for the fleet's workers"),
    "cancel": (
        "baton.cli.commands.cancel",
        "cancel a queued or running run (a fleet run from any host)",
    ),
    "worker": ("baton.cli.commands.worker", "run the fleet's queued turns on this host"),
    "workers": ("baton.cli.commands.workers", "list the fleet's workers"),
    "workspace": ("baton.cli.commands.workspace", "list, show, remove and export workspaces"),
    "diff": ("baton.cli.commands.diff", "print a run's or session's workspace changes as a patch"),
    "export": (
        "baton.cli.commands.export",
        "export a run or session as a trajectory (ATIF or the events as JSON lines)",
    ),
    "agent": ("baton.cli.commands.agent", "run a bundled ACP agent on stdin/stdout"),
    "logout": ("baton.cli.commands.logout", "sign out of an agent (ACP logout, where advertised)"),
    "steer": (
        "baton.cli.commands.steer",
        "add text to a session's running turn (ACP steering), else queue it",
    ),
    "batch": (
        "baton.cli.commands.batch",
        "run many tasks across many agents, resumably, and export the results",
    ),
    "compare": (
        "baton.cli.commands.compare",
        "run one prompt across several agents, each in its own workspace, side by side",
    ),
    "completion": (
        "baton.cli.commands.completion",
        "print a shell completion script (bash, zsh, fish)",
    ),
}
#: Kept for callers that iterate the verbs.
COMMANDS: tuple[str, ...] = tuple(VERBS)

#: Allocations between two young-generation collections in the ``baton`` process (CPython's
#: default is 700). A streamed turn allocates a few dicts per delta that die within one read
#: of the agent's output; at the default, a 200,000-update turn runs about 600 young, 55
#: middle and 4 full collections (about 100 ms of a 0.7 s turn); at this threshold, about 50,
#: 5 and none. Garbage in reference cycles waits at most this many allocations longer.
CLI_YOUNG_GC_THRESHOLD = 7000

_VERSION_FLAGS = ("--version", "-V")
_TOP_EXAMPLES = """examples:
  baton run --agent claude "Explain this repository"
  baton run --agent-command "baton agent scripted" "echo hi" --json
  baton runs --limit 5
  baton show run-3f2a            # any unique prefix of a run id
  baton doctor claude --live
"""


def verb_of(argv: Sequence[str]) -> str | None:
    """The verb ``argv`` names (its first word that is not an option), if it is one."""
    for word in argv:
        if word == "--":
            return None
        if not word.startswith("-"):
            return word if word in VERBS else None
    return None


def build_parser(verb: str | None = "*") -> argparse.ArgumentParser:
    """The argument parser. ``verb`` is registered in full (its module imported); the others
    are listed only. ``"*"`` (the default) registers every verb (completion, tests)."""
    import argparse
    import importlib

    from baton.cli import exit_codes

    parser = _parser_class()(
        prog="baton",
        description="Drive ACP coding agents safely, headlessly and durably.",
        epilog=_TOP_EXAMPLES + "\n" + exit_codes.EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from baton.cli.version import VersionAction

    parser.add_argument("-V", "--version", action=VersionAction)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in VERBS.items():
        if verb == "*" or name == verb:
            importlib.import_module(module_name).register(subparsers)
            _remember_parser(subparsers.choices[name])
        else:
            subparsers.add_parser(name, help=help_text, add_help=False)
    return parser


class ArgumentsRefused(SystemExit):
    """argparse refused the command line (exit 2). A :class:`SystemExit`, as argparse's own
    refusal is, so callers that expect that keep working; :func:`main` catches it to add the
    JSON error line when ``--json`` was asked for."""

    def __init__(self, message: str) -> None:
        super().__init__(2)
        self.message = message


def _parser_class() -> type[argparse.ArgumentParser]:
    """argparse's parser class for Baton, built on first use (the fast paths of this module
    never import argparse)."""
    import argparse

    from baton.errors import bounded_message

    class Parser(argparse.ArgumentParser):
        """argparse's parser, whose usage errors raise :class:`ArgumentsRefused` after printing
        what argparse prints (the usage line and ``PROG: error: MESSAGE`` on stderr). Every
        subparser is of this class too (argparse gives subparsers their parent's class)."""

        def error(self, message: str) -> NoReturn:
            # What was typed is echoed bounded: "invalid choice: '<100 KB>'" stays one line.
            message = bounded_message(message)
            self.print_usage(sys.stderr)
            print(f"{self.prog}: error: {message}", file=sys.stderr)
            raise ArgumentsRefused(f"{self.prog}: {message}")

    return Parser


def _json_error(code: str, message: str, exit_code: int) -> None:
    """The contract's JSON error line on stdout (imported only when a verb failed)."""
    from baton.cli.json_output import write_json
    from baton.views.contract import error_document

    write_json(sys.stdout, error_document(code, message, exit_code))


def _remember_parser(parser: argparse.ArgumentParser) -> None:
    """Record on every (sub)parser which parser reports its usage errors."""
    import argparse

    parser.set_defaults(verb_parser=parser)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                _remember_parser(child)


def main(
    argv: Sequence[str] | None = None, *, parser: argparse.ArgumentParser | None = None
) -> int:
    """Run `baton` with ``argv``; return the exit code."""
    from baton.cli import exit_codes
    from baton.cli.json_output import json_requested
    from baton.cli.terminal import error_line
    from baton.errors import BatonError

    words = list(sys.argv[1:] if argv is None else argv)
    as_json = json_requested(words)
    parser = parser or build_parser(verb_of(words))
    try:
        args, extra = parser.parse_known_args(words)
        if extra:
            reporter = getattr(args, "verb_parser", None) or parser
            reporter.error(f"unrecognized arguments: {' '.join(extra)}")
    except ArgumentsRefused as refused:
        if as_json:
            _json_error("USAGE_ERROR", refused.message, exit_codes.USAGE)
        return exit_codes.USAGE
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return exit_codes.USAGE
    try:
        code = int(handler(args))
        sys.stdout.flush()
    except BrokenPipeError:
        return reader_gone()
    except BatonError as exc:
        print(error_line(exc), file=sys.stderr)
        code = exit_codes.of_error(exc)
        if as_json:
            _json_error(exc.code, exc.message, code)
        return code
    except KeyboardInterrupt:
        return exit_codes.INTERRUPTED
    return code


def reader_gone() -> int:
    """Standard output's reader went away (``baton runs | head -1``): stop quietly, like
    other Unix tools, and exit :data:`~baton.cli.exit_codes.PIPE_CLOSED`. Later writes (and the
    interpreter's final flush) go to /dev/null instead of raising again."""
    import os

    from baton.cli import exit_codes

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
    return exit_codes.PIPE_CLOSED


def tune_collector() -> None:
    """The garbage collector's policy for a ``baton`` process (the console script calls this;
    the library and in-process callers of :func:`main` keep their own). Everything imported
    so far lives as long as the process, so it is frozen out of every later collection;
    young collections run every :data:`CLI_YOUNG_GC_THRESHOLD` allocations."""
    import gc

    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(CLI_YOUNG_GC_THRESHOLD, middle, old)


def version_line() -> str:
    """``baton --version``'s line (the same as :func:`baton.cli.version.version_line`, without
    importing that module's argparse and importlib.metadata)."""
    return f"baton {__version__} (distribution {DISTRIBUTION})"


def maybe_claimed() -> bool:
    """Whether another distribution might install the ``baton`` import package: a
    ``baton-*.dist-info`` or ``baton*.egg-info`` other than Baton's own in a ``sys.path``
    directory (one directory listing each). When it might, ``--version`` takes the full path
    (:class:`baton.cli.version.VersionAction`), which reads every distribution's metadata
    (0.3-0.6 s) and warns precisely."""
    import os

    ours = DISTRIBUTION.replace("-", "_").lower()
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            lowered = name.lower()
            if not lowered.startswith("baton") or lowered.startswith(ours):
                continue
            if lowered.endswith((".dist-info", ".egg-info")):
                return True
    return False


def entry() -> int:
    """The ``baton`` console script: answer ``--version`` at once (unless another distribution
    may claim the ``baton`` package), else import the verb's module, tune the collector, run."""
    words = sys.argv[1:]
    if len(words) == 1 and words[0] in _VERSION_FLAGS and not maybe_claimed():
        sys.stdout.write(version_line() + "\n")
        return 0
    parser = build_parser(verb_of(words))
    tune_collector()
    return main(words, parser=parser)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(entry())
