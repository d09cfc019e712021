"""`baton worker [--queue Q ...] [--concurrency N]`: run the fleet's queued turns on this host
(docs/fleet.md) until SIGTERM or Ctrl-C (running turns finish first). It prints a line when
it starts, one when each job starts and ends (the run, its session, how it ended, its error),
and one when it stops (the jobs it ran, counted by how they ended), all on stderr."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections import Counter
from typing import TYPE_CHECKING, Final

from baton.cli import exit_codes
from baton.cli.commands.submit import shared_store_url
from baton.cli.store_access import add_store_option
from baton.cli.terminal import visible

if TYPE_CHECKING:
    from baton.fleet.worker import JobReport

EXAMPLES: Final = """examples:
  baton worker --store postgresql://baton@db/baton
  baton worker --queue gpu-hosts --queue default --concurrency 4
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``worker`` verb."""
    from baton.fleet.limits import (
        HEARTBEAT_SECONDS,
        LEASE_SECONDS,
        MAX_CONCURRENCY,
        SHUTDOWN_GRACE_SECONDS,
    )

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
    parser.add_argument(
        "--shutdown-timeout",
        type=_seconds,
        default=SHUTDOWN_GRACE_SECONDS,
        metavar="SECONDS",
        help="after SIGTERM, how long running turns have to finish before they are interrupted "
        f"and settled (a second SIGTERM does it at once; default {SHUTDOWN_GRACE_SECONDS:g})",
    )
    parser.add_argument(
        "--engine-schema-from",
        metavar="RELEASE",
        help="the procrastinate release that installed the job engine's schema in a store made "
        "before Baton recorded it (asked for by ENGINE_SCHEMA_UNKNOWN); migrated from there",
    )
    parser.add_argument("--config", metavar="FILE", help="the config file ([store] url)")
    add_store_option(parser)
    parser.set_defaults(handler=run)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}")
    return value


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
        shutdown_seconds=args.shutdown_timeout,
        engine_schema_from=args.engine_schema_from,
    )
    lines = JobLines(settings.name)
    worker = FleetWorker(settings, on_job=lines)
    print(
        f"baton worker {settings.name}: queues {', '.join(settings.queues)}, "
        f"concurrency {settings.concurrency}",
        file=sys.stderr,
        flush=True,
    )
    try:
        asyncio.run(worker.run())
    finally:
        print(lines.stopped_line(worker.lost, worker.fenced_reason), file=sys.stderr, flush=True)
    # Fenced (declared lost, or a write refused): its running turns were settled
    # RECOVERY_REQUIRED by the other workers.
    return exit_codes.WORKER_FENCED if worker.lost else exit_codes.OK


class JobLines:
    """The worker's line per job start and end on stderr, and the counts its stop line says."""

    def __init__(self, name: str) -> None:
        self.name = name
        #: Ended jobs by how their run ended (``skipped``: not this worker's to run).
        self.ended: Counter[str] = Counter()

    def __call__(self, report: JobReport) -> None:
        session = f" (session {visible(report.session, 64)})" if report.session else ""
        if report.phase == "started":
            line = f"▶ {report.run_id}{session} started"
        elif report.skipped:
            self.ended["skipped"] += 1
            line = f"· {report.run_id} skipped (cancelled, settled, or its session's host runs it)"
        else:
            status = report.status or "UNKNOWN"
            self.ended[status] += 1
            line = f"■ {report.run_id}{session} {status}"
            if report.duration_ms:
                line += f" in {report.duration_ms / 1000:.1f}s"
            if report.error_code:
                line += f" ({visible(report.error_code, 60)})"
            if report.message and status != "COMPLETED":
                line += f": {visible(report.message, 300)}"
        print(f"baton worker {self.name}: {line}", file=sys.stderr, flush=True)

    def stopped_line(self, lost: bool, reason: str | None = None) -> str:
        """The last line: how the worker stopped (fenced off: RUN_CLAIM_LOST and why) and the
        jobs it ran, by outcome."""
        total = sum(count for status, count in self.ended.items() if status != "skipped")
        counts = ", ".join(
            f"{count} {status.lower()}" for status, count in sorted(self.ended.items())
        )
        how = (
            "RUN_CLAIM_LOST: stopped, its turns were settled by another worker while it was "
            f"paused or cut off from the store ({reason or 'declared lost'})"
            if lost
            else "stopped"
        )
        jobs = f"{total} job{'s' if total != 1 else ''} run" + (f" ({counts})" if counts else "")
        return f"baton worker {self.name}: {how}: {jobs}"
