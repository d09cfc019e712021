"""`baton diff RUN|SESSION [--turn|--base] [--partial]`: the recorded changes of a run (or a
session's last run) as a patch in git's format, which `git apply` takes (docs/workspaces.md).

Read from the store, so on a shared store any host prints it. ``--turn`` (a run's default):
what the turn changed; ``--base`` (a session's default): everything since the workspace's
base. A patch a bound cut is refused (WORKSPACE_DIFF_INCOMPLETE) unless ``--partial``."""

from __future__ import annotations

import argparse
import sys

from baton.cli.store_access import add_store_option, open_store
from baton.runtime.workspaces.recorded import Side, changes_for, is_session, recorded_patch
from baton.views.run_ids import resolve_run

EXAMPLES = """examples:
  baton diff run-3f2a9c01 > turn.patch && git apply turn.patch
  baton diff fix-login --base | git apply --check
  baton diff 3f2a --partial        # print even a diff a bound cut (each cut is marked)
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``diff`` verb."""
    parser = subparsers.add_parser(
        "diff",
        help="print a run's or session's workspace changes as a patch",
        description="Print the recorded workspace changes of a run, or of a session's last "
        "run, as a patch in git's format (git apply takes it).",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("target", metavar="RUN|SESSION", help="a run id (or prefix) or a session")
    side = parser.add_mutually_exclusive_group()
    side.add_argument(
        "--turn",
        action="store_const",
        const="turn",
        dest="side",
        help="the turn's own changes (a run's default)",
    )
    side.add_argument(
        "--base",
        action="store_const",
        const="base",
        dest="side",
        help="everything since the workspace's base (a session's default)",
    )
    parser.add_argument(
        "--partial",
        action="store_true",
        help="print a patch a bound cut (each cut diff ends with a marker)",
    )
    parser.add_argument("--data-dir", metavar="DIR", help="Baton's data directory")
    add_store_option(parser)
    parser.set_defaults(handler=run, side=None)


def run(args: argparse.Namespace) -> int:
    """Handle `baton diff`."""
    with open_store(args.data_dir, read_only=True, store_flag=args.store) as (store, _journal):
        target = args.target
        session = is_session(store, target)
        if not session:
            target = resolve_run(store, target).id
        changes = changes_for(store, target)
        side: Side = args.side or ("base" if session else "turn")
        sys.stdout.write(recorded_patch(changes, side, partial=args.partial))
    return 0
