"""`baton runs [--status S] [--limit N] [--json] [--store URL]`: the run records, newest first.

The text listing gets a HOST column (the host of the Baton process that owns each run, whose
disk holds its journal) whenever it reads a shared store (``--store``, BATON_STORE or the
config file's ``[store] url``) or its rows name more than one host; a one-host listing of
the data directory's own store leaves it out (every row would say the same)."""

from __future__ import annotations

import argparse
import sys
from typing import Any, Final
from urllib.parse import urlencode

from baton.cli.json_output import write_json
from baton.cli.service_link import ServiceClient, service_for
from baton.cli.store_access import add_store_option, open_store, store_url
from baton.cli.terminal import visible
from baton.errors import DataDirNotFound
from baton.store.database import MAX_LIST_ROWS
from baton.store.models import RUN_STATUSES
from baton.views.runs import run_rows

#: Characters of the prompt shown per row (`baton show` prints more).
PROMPT_COLUMN_CHARS: Final = 40
#: Characters of the working directory shown per row (its end, the informative part).
CWD_COLUMN_CHARS: Final = 30
#: Characters of the host shown per row.
HOST_COLUMN_CHARS: Final = 16

EXAMPLES: Final = """examples:
  baton runs
  baton runs --limit 5
  baton runs --status recovery_required
  baton runs --status cancelled --store postgresql://baton@db/baton
  baton runs --json | jq -r .runId
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``runs`` verb."""
    parser = subparsers.add_parser(
        "runs",
        help="list runs",
        description="List run records, newest first.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--status",
        type=str.upper,
        choices=sorted(RUN_STATUSES),
        metavar="STATUS",
        help="only runs in this status (e.g. recovery_required)",
    )
    parser.add_argument(
        "--limit", type=_limit, metavar="N", help="only the N newest runs (a positive number)"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per run")
    parser.add_argument("--data-dir", metavar="DIR", help="Baton's data directory (or BATON_HOME)")
    parser.add_argument(
        "--no-server",
        action="store_true",
        help="read the store in this process even when a `baton serve` runs on the data directory",
    )
    add_store_option(parser)
    parser.set_defaults(handler=run)


def _limit(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number <= 0:
        raise argparse.ArgumentTypeError(f"{value!r} is not a positive number")
    return number


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m{rest:02d}s"


def _cut_left(text: str, width: int) -> str:
    return text if len(text) <= width else "…" + text[-(width - 1) :]


def _rows_from_service(client: ServiceClient, args: argparse.Namespace) -> list[dict[str, Any]]:
    query: dict[str, Any] = {"limit": args.limit or MAX_LIST_ROWS}
    if args.status is not None:
        query["status"] = args.status
    rows: list[dict[str, Any]] = client.request("GET", "/api/v1/runs?" + urlencode(query))["runs"]
    return rows


def _rows_in_process(args: argparse.Namespace) -> list[dict[str, Any]]:
    try:
        with open_store(args.data_dir, read_only=True, store_flag=args.store) as (store, _journal):
            runs = store.list_runs(status=args.status, limit=args.limit or MAX_LIST_ROWS)
            return run_rows(store, runs)
    except DataDirNotFound as exc:
        # Nothing ran here yet: an empty listing (scripts see no lines), said on stderr, and
        # nothing is created (issue 16).
        print(f"baton: {exc.message}", file=sys.stderr)
        return []


def show_host_column(rows: list[dict[str, Any]], *, shared: bool) -> bool:
    """Whether the text listing names each run's host: on a shared store, or when the rows
    hold runs of more than one host."""
    return shared or len({row.get("host") for row in rows}) > 1


def run(args: argparse.Namespace) -> int:
    """Handle `baton runs`: through the data directory's running service when there is one
    (unless ``--no-server``), else from the store in this process; the same rows either way."""
    shared = store_url(args.store) is not None
    client = service_for(args.data_dir, no_server=args.no_server or shared)
    rows = _rows_from_service(client, args) if client is not None else _rows_in_process(args)
    if client is not None and not args.json:
        # The service may serve a shared store (`baton serve --store`): its description says.
        shared = bool(client.request("GET", "/api/v1").get("sharedStore"))
    if args.json:
        for row in rows:
            write_json(sys.stdout, row)
        return 0
    if not rows:
        print("no runs")
        return 0
    out = sys.stdout
    with_host = show_host_column(rows, shared=shared)
    host_header = f"{'HOST':<{HOST_COLUMN_CHARS}} " if with_host else ""
    # Questions waiting for a person: a column only when some run has one.
    with_waiting = any(row.get("pendingQuestions") for row in rows)
    waiting_header = f"{'WAITING':>7} " if with_waiting else ""
    out.write(
        f"{'RUN':<24} {'STATUS':<18} {waiting_header}{'STOP':<10} {'AGENT':<8} {host_header}"
        f"{'TIME':>7}  {'CWD':<{CWD_COLUMN_CHARS}}  PROMPT\n"
    )
    for row in rows:
        prompt = visible(row["promptText"].replace("\n", " "), PROMPT_COLUMN_CHARS)
        cwd = _cut_left(visible(row["cwd"] or "-", None), CWD_COLUMN_CHARS)
        host = ""
        if with_host:
            host = f"{visible(row.get('host') or '-', HOST_COLUMN_CHARS):<{HOST_COLUMN_CHARS}} "
        waiting = f"{row.get('pendingQuestions') or '-':>7} " if with_waiting else ""
        out.write(
            f"{row['runId']:<24} {row['status']:<18} {waiting}{row['stopReason'] or '-':<10} "
            f"{visible(row['agent'] or '-', 8):<8} {host}"
            f"{_duration(row['durationSeconds']):>7}  {cwd:<{CWD_COLUMN_CHARS}}  {prompt}\n"
        )
    out.flush()
    return 0
