"""`baton`: the entry point. Parses the verb and hands over to its module."""

from __future__ import annotations

import argparse
import gc
import importlib
import sys
from collections.abc import Sequence
from typing import Final

from baton.cli import exit_codes
from baton.cli.version import VersionAction
from baton.errors import BatonError

#: The verbs, each a module in baton.cli.commands with ``register(subparsers)``.
COMMANDS: tuple[str, ...] = ("run", "runs", "show", "recover", "doctor", "journal", "agent")


#: Allocations between two young-generation collections in the ``baton`` process (CPython's
#: default is 700). A streamed turn allocates a few dicts per delta that die within one read
#: of the agent's output; at the default, a 200,000-update turn runs about 600 young, 55
#: middle and 4 full collections (about 100 ms of a 0.7 s turn); at this threshold, about 50,
#: 5 and none. Garbage in reference cycles waits at most this many allocations longer.
CLI_YOUNG_GC_THRESHOLD: Final = 7000


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser, every verb registered."""
    parser = argparse.ArgumentParser(
        prog="baton",
        description="Drive ACP coding agents safely, headlessly and durably.",
        epilog=exit_codes.EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=VersionAction)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        module = importlib.import_module(f"baton.cli.commands.{name}")
        module.register(subparsers)
    return parser


def main(
    argv: Sequence[str] | None = None, *, parser: argparse.ArgumentParser | None = None
) -> int:
    """Run `baton` with ``argv``; return the exit code."""
    parser = parser or build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return exit_codes.USAGE
    try:
        code = handler(args)
    except BatonError as exc:
        print(f"baton: {exc}", file=sys.stderr)
        return exit_codes.USAGE if exc.fault == "caller" else exit_codes.TURN_FAILED
    except KeyboardInterrupt:
        return exit_codes.INTERRUPTED
    return int(code)


def tune_collector() -> None:
    """The garbage collector's policy for a ``baton`` process (the console script calls this;
    the library and in-process callers of :func:`main` keep their own). Everything imported
    so far lives as long as the process, so it is frozen out of every later collection;
    young collections run every :data:`CLI_YOUNG_GC_THRESHOLD` allocations."""
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(CLI_YOUNG_GC_THRESHOLD, middle, old)


def entry() -> int:
    """The ``baton`` console script: import every verb, tune the collector, run."""
    parser = build_parser()
    tune_collector()
    return main(parser=parser)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(entry())
