"""`baton runs [--status S] [--json]`: the run records, newest last."""

from __future__ import annotations

import argparse
import sys

import orjson

from baton.cli.store_access import open_store, plain
from baton.store.models import RUN_STATUSES


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``runs`` verb."""
    parser = subparsers.add_parser("runs", help="list runs")
    parser.add_argument(
        "--status",
        type=str.upper,
        choices=sorted(RUN_STATUSES),
        metavar="STATUS",
        help="only runs in this status (e.g. recovery_required)",
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per run")
    parser.add_argument("--data-dir", metavar="DIR", help="Baton's data directory (or BATON_HOME)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Handle `baton runs`."""
    with open_store(args.data_dir) as (store, _journal):
        runs = store.list_runs(status=args.status)
        if args.json:
            for record in runs:
                sys.stdout.buffer.write(orjson.dumps(plain(record)) + b"\n")
            sys.stdout.flush()
            return 0
        if not runs:
            print("no runs")
            return 0
        print(f"{'RUN':<24} {'STATUS':<18} {'STOP':<12} {'POLICY':<10} {'CREATED':<26} PROMPT")
        for record in runs:
            prompt = record.prompt_text.replace("\n", " ")[:40]
            print(
                f"{record.id:<24} {record.status:<18} {record.stop_reason or '-':<12} "
                f"{record.policy:<10} {record.created_at:<26} {prompt}"
            )
    return 0
