"""`baton journal`: show and verify the durable protocol journal.

``baton journal show (RUN | SERVER) [--json]`` prints a run's server instance journal (found
through the run store) or a server instance's journal: one line per record with its sequence,
direction, kind, method, id and the redacted raw text cut to :data:`SHOW_RAW_CHARS`; with
``--json``, each record as one JSON object per line.

``baton journal verify [RUN | SERVER] [--all] [--json]`` re-validates every record, hash and
the sequence chain, and every journal reference the store cites; it exits 0 when all is good and
:data:`VERIFY_FAILED` naming the first bad record otherwise. With ``--json`` it prints one
object: ``{"ok", "servers": [{"serverInstanceId", "records", "segments", "firstSequence",
"lastSequence", "partialTailBytes"}], "citedReferences", "prunedReferences", "error",
"schemaVersion"}``.

A RUN may be given by a unique prefix of its id.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Final

import orjson

from baton.cli import exit_codes
from baton.cli.json_output import write_json
from baton.cli.store_access import add_store_option, store_url
from baton.cli.terminal import visible
from baton.errors import (
    JournalCorrupt,
    JournalEntryPruned,
    JournalOnOtherHost,
    RecordNotFound,
    RunNotFound,
)
from baton.journal import Journal, JournalRecord
from baton.journal.directory import JOURNALS_DIRNAME
from baton.store import STORE_FILENAME, Store, existing_data_dir, resolve_data_dir
from baton.store.owner import current_host, owner_host
from baton.views.contract import SCHEMA_VERSION, document
from baton.views.run_ids import resolve_run

#: Characters of a record's raw text shown per line by `journal show` (``--json`` shows all).
SHOW_RAW_CHARS: Final = 160
#: Exit code of `journal verify` when a record is bad (the generic failure code).
VERIFY_FAILED: Final = exit_codes.TURN_FAILED

EXAMPLES: Final = """examples:
  baton journal show run-3f2a9c01            # the run's agent process journal
  baton journal show 3f2a --json | jq .metadata.method
  baton journal verify --all
  baton journal verify 3f2a --json
"""


def register(subparsers: Any) -> None:
    """Add `baton journal` with its `show` and `verify` subcommands."""
    parser = subparsers.add_parser(
        "journal",
        help="show or verify the protocol journal",
        description="Show or verify the durable, redacted protocol journal.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    verbs = parser.add_subparsers(dest="journal_command", metavar="SUBCOMMAND")
    parser.set_defaults(handler=lambda _args: _usage(parser))

    show = verbs.add_parser(
        "show",
        help="print the journal of a run or a server instance",
        description="Print the journal entries (redacted) of a run's server instance or of a "
        "server instance, in sequence order.",
    )
    show.add_argument("target", metavar="RUN|SERVER", help="a run id or a server instance id")
    show.add_argument("--json", action="store_true", help="one JSON record per line")
    _data_dir_option(show)
    add_store_option(show)
    show.set_defaults(handler=_show)

    verify = verbs.add_parser(
        "verify",
        help="re-validate records, hashes, the sequence chain and cited references",
        description="Re-validate every record and hash, the sequence chain, and the journal "
        f"references the run store cites. Exits 0 when all is good, {VERIFY_FAILED} naming the "
        "first bad record otherwise.",
    )
    verify.add_argument(
        "target", metavar="RUN|SERVER", nargs="?", help="a run id or a server instance id"
    )
    verify.add_argument("--all", action="store_true", help="every journal in the data directory")
    verify.add_argument("--json", action="store_true", help="the verification as one JSON object")
    _data_dir_option(verify)
    verify.set_defaults(handler=_verify)


def _data_dir_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data-dir",
        metavar="DIR",
        help="Baton's data directory (default: $BATON_HOME, else the platform's user data dir)",
    )


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return exit_codes.USAGE


def _data_dir(args: argparse.Namespace) -> Path:
    return existing_data_dir(resolve_data_dir(args.data_dir))


def _open_store(data: Path) -> Store | None:
    # Read-only: `journal show` and `verify` work on a read-only data directory and create
    # nothing (no database, no WAL file).
    return Store.open_read_only(data) if (data / STORE_FILENAME).exists() else None


def _servers_of(target: str, journal: Journal, store: Store | None) -> tuple[list[str], str | None]:
    """The server instances ``target`` names, and the run id when it is a run."""
    if store is not None:
        try:
            run = resolve_run(store, target)
        except RunNotFound:
            run = None
        if run is not None:
            if run.server_instance_id is None:
                raise RecordNotFound(f"run {run.id} has not started on a server instance yet")
            host = owner_host(run.owner)
            if (
                run.server_instance_id not in journal.servers()
                and host is not None
                and host != current_host()
            ):
                raise JournalOnOtherHost(
                    f"run {run.id} ran on host {host}: its journal (server instance "
                    f"{run.server_instance_id}) is in that host's data directory; run "
                    "`baton journal show` there"
                )
            return [run.server_instance_id], run.id
    if target in journal.servers():
        return [target], None
    if store is not None and store.find_server_instance(target) is not None:
        raise RecordNotFound(f"server instance {target} has no journal")
    raise RecordNotFound(f"no run or server instance {target!r}")


def _line(record: JournalRecord) -> str:
    meta = record.metadata
    raw = record.raw if len(record.raw) <= SHOW_RAW_CHARS else record.raw[:SHOW_RAW_CHARS] + "…"
    arrow = "in " if record.direction == "inbound" else "out"
    request_id = "-" if meta.id is None else str(meta.id)
    return (
        f"{record.sequence:>8}  {arrow}  {meta.kind:<12}  {meta.method or '-':<28}  "
        f"{request_id:<6}  {raw}"
    )


def _show(args: argparse.Namespace) -> int:
    shared = store_url(args.store)
    if shared is not None:
        # A shared store: this host may hold no journal at all (a submitting host).
        directory = resolve_data_dir(args.data_dir) / JOURNALS_DIRNAME
        journal = Journal(directory, read_only=True)
        store: Store | None = Store(shared, read_only=True)
    else:
        data = _data_dir(args)
        journal = Journal.open_read_only(data)
        store = _open_store(data)
    try:
        servers, _run = _servers_of(args.target, journal, store)
    finally:
        if store is not None:
            store.close()
    out = sys.stdout
    try:
        for server in servers:
            if not args.json:
                out.write(f"# server instance {server}\n")
            for record in journal.records(server):
                if args.json:
                    line = {**record.to_dict(), "schemaVersion": SCHEMA_VERSION}
                    out.write(orjson.dumps(line).decode() + "\n")
                else:
                    out.write(visible(_line(record), None) + "\n")
        out.flush()
    except BrokenPipeError:
        # The reader went away (`| head`): stop quietly, like other Unix tools.
        from baton.cli.main import reader_gone

        return reader_gone()
    return exit_codes.OK


def _verify(args: argparse.Namespace) -> int:
    if not args.all and args.target is None:
        print("baton journal verify: name a RUN or SERVER, or pass --all", file=sys.stderr)
        return exit_codes.USAGE
    data = _data_dir(args)
    journal = Journal.open_read_only(data)
    store = _open_store(data)
    try:
        if args.all:
            servers = journal.servers()
            cited = store.cited_refs() if store is not None else []
        else:
            servers, run_id = _servers_of(args.target, journal, store)
            cited = store.cited_refs(run_id) if store is not None and run_id else []
            if store is not None and run_id is None:
                cited = [(label, ref) for label, ref in store.cited_refs() if ref.server in servers]
    finally:
        if store is not None:
            store.close()
    reports: list[dict[str, Any]] = []
    pruned = 0
    error: str | None = None
    try:
        for server in servers:
            report = journal.verify(server)
            reports.append(
                {
                    "server_instance_id": server,
                    "records": report.records,
                    "segments": len(report.segments),
                    "first_sequence": report.first_sequence,
                    "last_sequence": report.last_sequence,
                    "partial_tail_bytes": report.partial_tail_bytes,
                }
            )
            if not args.json:
                _print_report(reports[-1])
        for label, ref in cited:
            try:
                journal.read(ref)
            except JournalEntryPruned:
                pruned += 1
            except JournalCorrupt as exc:
                raise JournalCorrupt(exc.record, f"{exc.problem} (cited by {label})") from exc
    except JournalCorrupt as exc:
        error = str(exc)
    if args.json:
        write_json(
            sys.stdout,
            document(
                {
                    "ok": error is None,
                    "servers": reports,
                    "cited_references": len(cited) - pruned,
                    "pruned_references": pruned,
                    "error": error,
                }
            ),
        )
        return exit_codes.OK if error is None else VERIFY_FAILED
    if error is not None:
        sys.stdout.flush()
        print(f"baton journal verify: {visible(error, None)}", file=sys.stderr)
        return VERIFY_FAILED
    if cited:
        extra = f", {pruned} pruned by retention" if pruned else ""
        print(f"cited references: {len(cited) - pruned} ok{extra}")
    if not servers and not cited:
        print("no journals to verify")
    return exit_codes.OK


def _print_report(report: dict[str, Any]) -> None:
    span = (
        "no records"
        if report["first_sequence"] is None
        else f"sequences {report['first_sequence']}-{report['last_sequence']}"
    )
    note = (
        f"; {report['partial_tail_bytes']} bytes of an unfinished last line"
        if report["partial_tail_bytes"]
        else ""
    )
    segments = report["segments"]
    print(
        f"{report['server_instance_id']}: ok, {report['records']} "
        f"{'record' if report['records'] == 1 else 'records'} in {segments} "
        f"{'segment' if segments == 1 else 'segments'} ({span}){note}"
    )
