"""`baton workers [--json]`: the fleet's workers with their host, heartbeat, queues,
concurrency and running turns (docs/fleet.md)."""

from __future__ import annotations

import argparse
import sys

from baton.cli.commands.submit import shared_store_url
from baton.cli.json_output import document, write_json
from baton.cli.store_access import add_store_option, plain

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
    from baton.store import ACTIVE_RUN_STATUSES, Store

    url = shared_store_url(args.store, args.config)
    with Store(url, read_only=True) as store:
        rows = []
        for worker in store.list_workers():
            running = (
                [r.id for r in store.list_runs(owner=worker.owner, status=ACTIVE_RUN_STATUSES)]
                if worker.state == "RUNNING"
                else []
            )
            rows.append((worker, running))
    if args.json:
        for worker, running in rows:
            write_json(sys.stdout, document({**plain(worker), "running": running}))
        return 0
    if not rows:
        print("no workers")
        return 0
    print(
        f"{'WORKER':<28} {'HOST':<16} {'STATE':<8} {'HEARTBEAT':<28} {'CONC':>4} {'RUN':>4}  QUEUES"
    )
    for worker, running in rows:
        print(
            f"{worker.name:<28} {worker.host:<16} {worker.state:<8} {worker.heartbeat_at:<28} "
            f"{worker.concurrency:>4} {len(running):>4}  {', '.join(worker.queues)}"
        )
    return 0
