"""`baton workers [--json]`: the fleet's workers with their host, heartbeat, queues,
concurrency and running turns (docs/fleet.md)."""

from __future__ import annotations

import argparse
import sys

from baton.cli.commands.submit import shared_store_url
from baton.cli.json_output import write_json
from baton.cli.store_access import add_store_option
from baton.views.workers import worker_rows

EXAMPLES = """examples:
  baton workers --store postgresql://baton@db/baton
  BATON_STORE=postgresql://baton@db/baton baton workers --json
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``workers`` verb."""
    parser = subparsers.add_parser(
        "workers",
        help="list the fleet's workers",
        description="List the fleet's workers: host, state, heartbeat, queues, running turns.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per worker")
    parser.add_argument("--config", metavar="FILE", help="the config file ([store] url)")
    add_store_option(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Handle `baton workers`."""
    from baton.store import Store

    url = shared_store_url(args.store, args.config)
    with Store(url, read_only=True) as store:
        rows = worker_rows(store)
    if args.json:
        for row in rows:
            write_json(sys.stdout, row)
        return 0
    if not rows:
        print("no workers")
        return 0
    print(
        f"{'WORKER':<28} {'HOST':<16} {'STATE':<8} {'HEARTBEAT':<28} {'CONC':>4} {'RUN':>4}  QUEUES"
    )
    for row in rows:
        print(
            f"{row['name']:<28} {row['host']:<16} {row['state']:<8} {row['heartbeatAt']:<28} "
            f"{row['concurrency']:>4} {len(row['running']):>4}  {', '.join(row['queues'])}"
        )
    return 0
