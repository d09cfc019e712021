"""`baton`: the entry point. Parses the verb and hands over to its module."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from baton._version import __version__
from baton.cli import exit_codes
from baton.errors import BatonError

#: The verbs, each a module in baton.cli.commands with ``register(subparsers)``.
COMMANDS: tuple[str, ...] = ("run", "runs", "show", "recover", "doctor", "journal", "agent")


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser, every verb registered."""
    parser = argparse.ArgumentParser(
        prog="baton",
        description="Drive ACP coding agents safely, headlessly and durably.",
        epilog=exit_codes.EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"baton {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        module = importlib.import_module(f"baton.cli.commands.{name}")
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run `baton` with ``argv``; return the exit code."""
    parser = build_parser()
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
