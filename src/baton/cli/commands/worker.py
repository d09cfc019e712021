"""`baton worker [--queue Q ...] [--concurrency N]`: run the fleet's queued turns on this host
(docs/fleet.md) until SIGTERM or Ctrl-C (running turns finish first)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from typing import Final

from baton.cli import exit_codes
from baton.cli.commands.submit import shared_store_url
from baton.cli.store_access import add_store_option

EXAMPLES: Final = """examples:
  baton worker --store postgresql://baton@db/baton
  baton worker --queue gpu-hosts --queue default --concurrency 4
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``worker`` verb."""
    from baton.fleet.limits import HEARTBEAT_SECONDS, LEASE_SECONDS, MAX_CONCURRENCY

    parser = subparsers.add_parser(
        "worker",
        help="run the fleet's queued turns on this host",
        description="Run queued turns from the fleet's shared store with this host's agents.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--queue",
        action="append",
        metavar="Q",
        help="a queue to read (repeatable; default: default)",
    )
    parser.add_argument(
        "--concurrency",
        type=int,
        default=1,
        choices=range(1, MAX_CONCURRENCY + 1),
        metavar="N",
        help=f"turns run at once (1-{MAX_CONCURRENCY}, default 1)",
    )
    parser.add_argument("--name", help="the worker's name (default: HOST-PID)")
    parser.add_argument("--data-dir", metavar="DIR", help="this host's data directory (journals)")
    parser.add_argument("--workdir", metavar="DIR", help="working directory of turns without --cwd")
    parser.add_argument(
        "--heartbeat",
        type=float,
        default=HEARTBEAT_SECONDS,
        metavar="SECONDS",
        help=argparse.SUPPRESS,
    )
    parser.add_argument(
        "--lease",
        type=float,
        default=LEASE_SECONDS,
        metavar="SECONDS",
        help=f"a worker silent this long is lost and its turns settled (default {LEASE_SECONDS:g})",
    )
    parser.add_argument("--config", metavar="FILE", help="the config file ([store] url)")
    add_store_option(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Handle `baton worker`."""
    from baton.fleet.worker import FleetWorker, WorkerSettings, default_worker_name, queues_of

    url = shared_store_url(args.store, args.config)
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="baton worker: %(message)s"
    )
    settings = WorkerSettings(
        url=url,
        name=args.name or default_worker_name(),
        queues=queues_of(args.queue),
        concurrency=args.concurrency,
        data_dir=args.data_dir,
        workdir=args.workdir,
        heartbeat_seconds=args.heartbeat,
        lease_seconds=args.lease,
    )
    worker = FleetWorker(settings)
    print(
        f"baton worker {settings.name}: queues {', '.join(settings.queues)}, "
        f"concurrency {settings.concurrency}",
        file=sys.stderr,
        flush=True,
    )
    asyncio.run(worker.run())
    if worker.lost:
        # Fenced: its running turns were settled RECOVERY_REQUIRED by the other workers.
        print(
            f"baton worker {settings.name}: RUN_CLAIM_LOST: stopped, its turns were settled "
            f"by another worker while it was paused or cut off from the store "
            f"({worker.fenced_reason})",
            file=sys.stderr,
            flush=True,
        )
        return exit_codes.WORKER_FENCED
    return exit_codes.OK
