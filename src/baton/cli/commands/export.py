"""`baton export RUN|SESSION|BATCH --format atif|acp-jsonl [-o FILE]`: a run, a session or a
batch as trajectories for evaluation (docs/trajectories.md): ATIF (Harbor's Agent Trajectory
Interchange Format: one JSON document, or for a batch one document per run, one per line) or
the normalized events one per line.

Read from the store (which holds redacted text), so on a shared store any host exports any
run. A name that is a session exports its turns, oldest first; otherwise it is a run id or a
unique prefix of one."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable
from pathlib import Path

import orjson

from baton.cli.store_access import add_store_option, open_store
from baton.errors import UsageError
from baton.views.trajectory import (
    EXPORT_FORMATS,
    acp_jsonl_lines,
    export_trajectory,
    resolve_export_target,
    run_trajectories,
)

EXAMPLES = """examples:
  baton export run-3f2a9c01 --format atif -o trajectory.json
  baton export fix-login --format atif          # a session: every turn, oldest first
  baton export 3f2a --format acp-jsonl > acp-events.jsonl
  baton export batch-1a2b --format atif > trajectories.jsonl   # a batch: one per run
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``export`` verb."""
    parser = subparsers.add_parser(
        "export",
        help="export a run, session or batch as trajectories (ATIF or the events as JSON lines)",
        description="Export a run, a session's turns or a batch's runs as ATIF trajectories "
        "(Harbor's Agent Trajectory Interchange Format; a batch gives one per run, one per "
        "line) or as their normalized events, one JSON object per line.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "target", metavar="RUN|SESSION|BATCH", help="a run id (or prefix), a session or a batch id"
    )
    parser.add_argument(
        "--format",
        choices=EXPORT_FORMATS,
        default="atif",
        help="atif (one JSON document, the default) or acp-jsonl (one event per line)",
    )
    parser.add_argument(
        "-o", "--output", metavar="FILE", help="write to FILE (replaced whole) instead of stdout"
    )
    parser.add_argument("--data-dir", metavar="DIR", help="Baton's data directory")
    add_store_option(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Handle `baton export`."""
    with open_store(args.data_dir, read_only=True, store_flag=args.store) as (store, _journal):
        target = resolve_export_target(store, args.target)
        chunks: Iterable[bytes]
        if args.format == "atif" and target.kind == "batch":
            # One ATIF document per run of the batch, one per line (a trial each, as Harbor
            # writes a trajectory per trial).
            chunks = [
                orjson.dumps(document) + b"\n"
                for document in run_trajectories(store, [run.id for run in target.runs])
            ]
        elif args.format == "atif":
            document = export_trajectory(store, target)
            chunks = [orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n"]
        else:
            chunks = list(acp_jsonl_lines(store, target.runs))
    if args.output:
        _write_file(Path(args.output), chunks)
    else:
        for chunk in chunks:
            sys.stdout.buffer.write(chunk)
        sys.stdout.flush()
    return 0


def _write_file(path: Path, chunks: Iterable[bytes]) -> None:
    """Write beside ``path`` and rename over it: a reader never sees half an export."""
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        with partial.open("wb") as out:
            for chunk in chunks:
                out.write(chunk)
        partial.replace(path)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from exc
