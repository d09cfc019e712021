"""`baton batch run|resume|show|list|cancel|export`: many tasks across many agents
(docs/batches.md).

``run FILE`` records the batch (its spec and the spec's hash) and runs its cells, ``--jobs``
at a time, each in its own workspace; a terminal shows one progress line (done, running,
failed, cost, ETA); ``--json`` prints one line per cell as its run ends and a summary last.
``resume ID`` (also after the batch process was killed) starts only the cells that never
started; a cell whose run ended RECOVERY_REQUIRED is reported, and rerun only with
``--retry-ambiguous``. Exit: 0 when every cell that ran completed, 6 when one needs recovery,
1 when one failed or was interrupted, 2 for a bad spec or flag.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import IO, Any, Final

from baton.cli import exit_codes
from baton.cli.json_output import write_json
from baton.cli.options import add_record_options
from baton.cli.terminal import visible

EXAMPLES: Final = """examples:
  baton batch run eval.toml --jobs 4
  baton batch run eval.jsonl --json --max-cost 5
  baton batch resume batch-3f2a
  baton batch resume batch-3f2a --retry-ambiguous
  baton batch show batch-3f2a
  baton batch export batch-3f2a --format csv > results.csv
"""

#: Seconds between two redraws of the progress line at most (a burst of cell ends draws once).
PROGRESS_REDRAW_SECONDS: Final = 0.1


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``batch`` verb and its actions."""
    parser = subparsers.add_parser(
        "batch",
        help="run many tasks across many agents, resumably, and export the results",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    run = sub.add_parser("run", help="record a batch from a spec file and run it")
    run.add_argument("spec", metavar="FILE", help="the spec: TOML, or JSONL (.jsonl)")
    _run_options(run)
    resume = sub.add_parser("resume", help="start the cells of a batch that never started")
    resume.add_argument("batch", metavar="ID")
    _run_options(resume)
    resume.add_argument(
        "--retry-ambiguous",
        action="store_true",
        help="rerun the cells whose run ended RECOVERY_REQUIRED, as a new run on the cell",
    )
    show = sub.add_parser("show", help="one batch: its state and its results table")
    show.add_argument("batch", metavar="ID")
    add_record_options(show, json_help="the batch and its cells as JSON", store=True)
    listing = sub.add_parser("list", help="the batches, newest first")
    listing.add_argument("--limit", type=int, default=20, metavar="N")
    add_record_options(listing, json_help="one JSON object per batch", store=True)
    cancel = sub.add_parser("cancel", help="stop a batch: no cell starts, running ones stop")
    cancel.add_argument("batch", metavar="ID")
    add_record_options(cancel, json_help="the batch as JSON", store=True)
    export = sub.add_parser("export", help="the results, one row per cell")
    export.add_argument("batch", metavar="ID")
    export.add_argument("--format", choices=("jsonl", "csv"), default="jsonl")
    export.add_argument("--output", "-o", metavar="FILE", help="write here (default: stdout)")
    add_record_options(export, store=True)
    parser.set_defaults(handler=handle)


def _run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--jobs",
        "-j",
        type=_positive,
        default=None,
        metavar="N",
        help="cells at once (default: the cores)",
    )
    parser.add_argument(
        "--max-cost",
        type=_amount,
        default=None,
        metavar="AMOUNT",
        help="stop starting cells once the reported cost reaches AMOUNT (the agents' currency)",
    )
    parser.add_argument(
        "--fleet",
        nargs="?",
        const="default",
        default=None,
        metavar="QUEUE",
        help="queue the cells for the fleet's workers (on this queue, default: default) "
        "instead of running them here; needs --store postgresql://...",
    )
    add_record_options(
        parser, json_help="one JSON line per cell as its run ends, then a summary", store=True
    )


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return value


def _amount(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an amount: {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def handle(args: argparse.Namespace) -> int:
    """Dispatch one ``batch`` action."""
    action = args.action
    if action in ("run", "resume"):
        return asyncio.run(_run(args))
    return asyncio.run(_read(args))


def make_runtime(args: argparse.Namespace) -> Any:
    """The Runtime a batch verb runs in (the config file's profiles and bounds, as `run`)."""
    import os

    from baton.runtime.agents.config_file import load_config
    from baton.runtime.runtime import Runtime
    from baton.store.location import resolve_store

    config = load_config()
    return Runtime(
        data_dir=args.data_dir,
        store=resolve_store(args.store, os.environ, config.store_url).url,
        profiles=config.all_profiles(),
        config_overrides=dict(config.executables),
        idle_timeout=config.idle_timeout,
        workspace_root=config.workspace_root,
    )


async def _run(args: argparse.Namespace) -> int:
    from baton.batches.batch import Batch
    from baton.batches.spec import load_spec

    spec = load_spec(args.spec) if args.action == "run" else None
    async with make_runtime(args) as runtime:
        batch = Batch.create(runtime, spec) if spec is not None else Batch.open(runtime, args.batch)
        return await follow(batch, args, retry_ambiguous=getattr(args, "retry_ambiguous", False))


async def follow(batch: Any, args: argparse.Namespace, *, retry_ambiguous: bool = False) -> int:
    """Run ``batch`` with the verb's output: the progress line or JSON lines, then the
    table (text) or the summary (JSON). Returns the exit code. Shared by ``compare``."""
    from baton.batches.runner import CellEnd, Progress
    from baton.views.contract import SCHEMA_VERSION

    out, err = sys.stdout, sys.stderr
    tty = _isatty(err) and not args.json
    line = _ProgressLine(err) if tty else None
    if not args.json:
        print(f"batch {batch.id} · {len(batch.cells())} cells", file=err)

    def on_cell_end(end: CellEnd) -> None:
        if args.json:
            from baton.batches.results import cell_row

            write_json(out, {"type": "cell", "schemaVersion": SCHEMA_VERSION, **cell_row(end.cell)})

    def on_progress(progress: Progress) -> None:
        if line is not None:
            line.draw(progress)

    try:
        summary = await batch.run(
            jobs=args.jobs,
            max_cost=args.max_cost,
            retry_ambiguous=retry_ambiguous,
            on_cell_end=on_cell_end,
            on_progress=on_progress,
            fleet_queue=getattr(args, "fleet", None),
        )
    except asyncio.CancelledError:  # pragma: no cover - Ctrl-C reaches asyncio.run
        return exit_codes.INTERRUPTED
    if line is not None:
        line.close()
    if args.json:
        write_json(
            out,
            {
                "type": "batch",
                "schemaVersion": SCHEMA_VERSION,
                "batchId": summary.batch_id,
                "state": summary.state,
                "stopReason": summary.stop_reason,
                "counts": summary.counts,
                "cost": summary.cost,
                "ambiguous": summary.ambiguous,
                "started": summary.started,
                "wallMs": summary.wall_ms,
            },
        )
    else:
        out.write(batch.table())
        _summary_lines(err, summary, batch.id)
    return _exit_code(summary.counts)


def _exit_code(counts: dict[str, int]) -> int:
    if counts.get("RECOVERY_REQUIRED"):
        return exit_codes.RECOVERY_REQUIRED
    if counts.get("FAILED") or counts.get("INTERRUPTED") or counts.get("LOST"):
        return exit_codes.TURN_FAILED
    return exit_codes.OK


def _summary_lines(err: IO[str], summary: Any, batch_id: str) -> None:
    counts = ", ".join(f"{n} {state.lower()}" for state, n in sorted(summary.counts.items()))
    cost = ", ".join(f"{amount:g} {currency}" for currency, amount in summary.cost.items())
    print(
        f"batch {batch_id} {summary.state}: {counts}"
        + (f" · cost {cost}" if cost else " · cost unknown")
        + f" · {summary.wall_ms / 1000:.1f}s",
        file=err,
    )
    if summary.stop_reason:
        print(f"stopped: {visible(summary.stop_reason)}", file=err)
    if summary.ambiguous:
        cells = ", ".join(str(i) for i in summary.ambiguous)
        print(
            f"! cells {cells} ended RECOVERY_REQUIRED (not rerun): `baton recover RUN` each, or "
            f"`baton batch resume {batch_id} --retry-ambiguous`",
            file=err,
        )
    if "SKIPPED" in summary.counts or "PENDING" in summary.counts:
        print(f"resume with: baton batch resume {batch_id}", file=err)


def _isatty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (OSError, ValueError):
        return False


class _ProgressLine:
    """One self-redrawing line on a terminal: done, running, failed, cost, ETA."""

    def __init__(self, err: IO[str]) -> None:
        self.err = err
        self._last = 0.0

    def draw(self, progress: Any) -> None:
        import time

        now = time.monotonic()
        if now - self._last < PROGRESS_REDRAW_SECONDS and progress.done < progress.total:
            return
        self._last = now
        width = 20
        filled = int(width * progress.done / progress.total) if progress.total else width
        bar = "█" * filled + "░" * (width - filled)
        cost = ", ".join(f"{a:.4f} {c}" for c, a in progress.cost.items()) or "unknown"
        eta = progress.eta_seconds()
        eta_text = "…" if eta is None else f"{eta:.0f}s"
        self.err.write(
            f"\r\x1b[2K{bar} {progress.done}/{progress.total} done · {progress.running} running"
            f" · {progress.failed} failed · {progress.ambiguous} ambiguous · cost {cost}"
            f" · ETA {eta_text}"
        )
        self.err.flush()

    def close(self) -> None:
        self.err.write("\r\x1b[2K")
        self.err.flush()


async def _read(args: argparse.Namespace) -> int:
    from baton.batches.batch import Batch
    from baton.store.batches import BatchRecords
    from baton.views.batches import batch_view
    from baton.views.contract import SCHEMA_VERSION

    async with make_runtime(args) as runtime:
        if args.action == "list":
            records = BatchRecords(runtime.store).list_batches(limit=args.limit)
            for record in records:
                view = batch_view(runtime.store, record)
                if args.json:
                    write_json(sys.stdout, {"schemaVersion": SCHEMA_VERSION, **view})
                else:
                    counts = ", ".join(
                        f"{n} {s.lower()}" for s, n in sorted(view["counts"].items())
                    )
                    print(
                        f"{record.id}  {record.state:<9}  {record.created_at}  "
                        f"{visible(record.name or '-', 30)}  {counts}"
                    )
            return exit_codes.OK
        batch = Batch.open(runtime, args.batch)
        if args.action == "cancel":
            await batch.cancel()
            view = batch_view(runtime.store, batch.record)
            if args.json:
                write_json(sys.stdout, {"schemaVersion": SCHEMA_VERSION, **view})
            else:
                print(f"batch {batch.id} {view['state']}", file=sys.stderr)
            return exit_codes.OK
        if args.action == "export":
            text = batch.export(args.format)
            if args.output and args.output != "-":
                _write_file(args.output, text)
            else:
                sys.stdout.write(text)
            return exit_codes.OK
        view = batch_view(runtime.store, batch.record)
        if args.json:
            write_json(sys.stdout, {"schemaVersion": SCHEMA_VERSION, **view, "cells": batch.rows()})
            return exit_codes.OK
        print(
            f"batch {batch.id} {view['state']}"
            + (f" ({visible(view['stopReason'])})" if view["stopReason"] else "")
            + f" · spec {view['specHash'][:19]} · {view['createdAt']}"
        )
        sys.stdout.write(batch.table())
        ambiguous = [c.index for c in batch.cells() if c.state == "RECOVERY_REQUIRED"]
        if ambiguous:
            print(
                f"! cells {', '.join(map(str, ambiguous))} need recovery (not rerun)",
                file=sys.stderr,
            )
        return exit_codes.OK


def _write_file(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)
