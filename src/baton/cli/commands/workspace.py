"""`baton workspace list|show|rm|gc|export`: the workspaces Baton created or used
(docs/workspaces.md).

``rm`` and ``gc`` never delete silently: a workspace in use by a running or RECOVERY_REQUIRED
run (or an ACTIVE session), or holding changes no turn recorded, is refused unless
``--force``; a ``dir`` workspace (your own directory) is only forgotten. ``export`` gets the
change out: ``--branch B`` commits the workspace's files on a branch of its repository,
``--patch FILE`` writes the whole change since the base (``-`` for stdout)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from baton.cli.json_output import write_json
from baton.cli.store_access import add_store_option, open_store
from baton.cli.terminal import visible
from baton.cli.workspace_options import NOT_A_SANDBOX
from baton.errors import UsageError
from baton.runtime.workspaces.lifecycle import (
    collect_workspaces,
    export_branch,
    export_patch,
    get_workspace,
    remove_workspace,
    workspace_state,
)

EXAMPLES = f"""examples:
  baton run --agent claude --workspace worktree "Fix the flaky test"
  baton workspace list
  baton workspace show run-3f2a9c01
  baton workspace export run-3f2a9c01 --branch fix-flaky-test
  baton workspace export run-3f2a9c01 --patch fix.patch
  baton workspace rm run-3f2a9c01
  baton workspace gc --dry-run

Not a sandbox: {NOT_A_SANDBOX}.
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``workspace`` verb and its subcommands."""
    parser = subparsers.add_parser(
        "workspace",
        help="list, show, remove and export workspaces",
        description="The workspaces (git worktrees, directories) Baton's runs used.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

    def common(child: argparse.ArgumentParser, *, json_flag: bool = True) -> None:
        child.add_argument("--data-dir", metavar="DIR", help="Baton's data directory")
        add_store_option(child)
        if json_flag:
            child.add_argument("--json", action="store_true", help="JSON output")

    listing = sub.add_parser("list", help="list the workspaces (newest first)")
    listing.add_argument("--all", action="store_true", help="removed ones too")
    common(listing)
    show = sub.add_parser("show", help="one workspace: where, base, runs, in use, changes")
    show.add_argument("name")
    common(show)
    rm = sub.add_parser("rm", help="remove a worktree (forget a directory)")
    rm.add_argument("name")
    rm.add_argument(
        "--force", action="store_true", help="remove even in use or holding unrecorded changes"
    )
    common(rm)
    gc = sub.add_parser("gc", help="remove the workspaces nothing needs any more")
    gc.add_argument(
        "--force",
        action="store_true",
        help="also those holding unrecorded changes (never one in use)",
    )
    gc.add_argument("--dry-run", action="store_true", help="say what would be removed")
    common(gc)
    export = sub.add_parser("export", help="get a workspace's change out")
    export.add_argument("name")
    target = export.add_mutually_exclusive_group(required=True)
    target.add_argument("--branch", metavar="B", help="commit its files on branch B")
    target.add_argument("--patch", metavar="FILE", help="write the patch since its base")
    export.add_argument("--force", action="store_true", help="with --branch: replace B")
    common(export)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Handle `baton workspace ACTION`."""
    environ = dict(os.environ)
    read_only = args.action in ("list", "show")
    with open_store(args.data_dir, read_only=read_only, store_flag=args.store) as (store, _j):
        if args.action == "list":
            records = store.list_workspaces(include_removed=args.all)
            rows: list[dict[str, Any]] = [r.to_json() for r in records]
            if args.json:
                for row in rows:
                    write_json(sys.stdout, row)
                return 0
            print(f"{'NAME':<28} {'KIND':<9} {'STATE':<8} {'SESSION':<16} {'HOST':<14} PATH")
            for row in rows:
                print(
                    f"{visible(row['name'], 28):<28} {row['kind']:<9} {row['state']:<8} "
                    f"{visible(row['session'] or '-', 16):<16} {visible(row['host'], 14):<14} "
                    f"{visible(row['path'], None)}"
                )
            return 0
        if args.action == "show":
            record = get_workspace(store, args.name)
            state = workspace_state(store, record, environ).to_json()
            state["runs"] = [run.run_id for run in store.workspace_runs(record.name)]
            if args.json:
                write_json(sys.stdout, state)
                return 0
            for key in (
                "name",
                "kind",
                "state",
                "path",
                "repository",
                "branch",
                "baseRef",
                "baseCommit",
                "session",
                "host",
                "createdAt",
            ):
                print(f"{key:<18} {visible(str(state.get(key) or '-'), None)}")
            held = ", ".join(f"{h['runId']} ({h['status']})" for h in state["heldBy"]) or "-"
            print(f"{'in use':<18} {'yes' if state['inUse'] else 'no'} (runs: {held})")
            unrecorded = state["unrecordedChanges"]
            print(f"{'unrecorded':<18} {'-' if unrecorded is None else unrecorded}")
            print(f"{'runs':<18} {', '.join(state['runs']) or '-'}")
            return 0
        if args.action == "rm":
            done = remove_workspace(store, args.name, environ, force=args.force)
            _say(
                args,
                done,
                f"removed {done['path']}"
                if done["removed"]
                else f"forgot {done['path']} (your directory is left as it is)",
            )
            return 0
        if args.action == "gc":
            done = collect_workspaces(store, environ, force=args.force, dry_run=args.dry_run)
            if args.json:
                write_json(sys.stdout, done)
                return 0
            for removed in done["removed"]:
                verb = "would remove" if removed.get("dryRun") else "removed"
                print(f"{verb} {removed['name']} ({visible(removed['path'], None)})")
            for kept in done["kept"]:
                print(f"kept {kept['name']}: {kept['reason']}")
            return 0
        if args.action == "export":
            if args.branch is not None:
                done = export_branch(store, args.name, args.branch, environ, force=args.force)
                _say(args, done, f"committed {done['commit'][:12]} on branch {done['branch']}")
                return 0
            patch = export_patch(store, args.name, environ)
            if args.patch == "-":
                sys.stdout.write(patch)
                return 0
            if os.path.lexists(args.patch):
                raise UsageError(f"{args.patch} exists; name a new file (or - for stdout)")
            with open(args.patch, "x", encoding="utf-8", errors="surrogateescape") as handle:
                handle.write(patch)
            _say(
                args,
                {"name": args.name, "patch": args.patch, "bytes": len(patch)},
                f"wrote {args.patch}",
            )
            return 0
    raise UsageError(f"unknown workspace action {args.action!r}")  # pragma: no cover


def _say(args: argparse.Namespace, done: dict[str, Any], text: str) -> None:
    if args.json:
        write_json(sys.stdout, done)
    else:
        print(text)
