"""`baton show RUN [--json]`: one run's record: status, stop reason, items, permission
decisions, skipped frames, protocol violations, and journal references."""

from __future__ import annotations

import argparse
import sys
from typing import Any

import orjson

from baton.cli import exit_codes
from baton.cli.store_access import open_store, plain


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``show`` verb."""
    parser = subparsers.add_parser("show", help="show one run")
    parser.add_argument("run_id", metavar="RUN")
    parser.add_argument("--json", action="store_true", help="the record as one JSON object")
    parser.add_argument("--data-dir", metavar="DIR", help="Baton's data directory (or BATON_HOME)")
    parser.set_defaults(handler=run)


def run_view(store: Any, run_id: str) -> dict[str, Any] | None:
    """The run with its items, interactions and observations, as JSON types."""
    record = store.find_run(run_id)
    if record is None:
        return None
    view: dict[str, Any] = plain(record)
    view["items"] = [plain(item) for item in store.list_items(run_id)]
    view["interactions"] = [plain(i) for i in store.list_interactions(run_id)]
    view["observations"] = [plain(o) for o in store.list_observations(run_id=run_id)]
    return view


def run(args: argparse.Namespace) -> int:
    """Handle `baton show`."""
    with open_store(args.data_dir) as (store, _journal):
        view = run_view(store, args.run_id)
    if view is None:
        print(
            f"baton: RUN_NOT_FOUND: no run {args.run_id!r}; `baton runs` lists them",
            file=sys.stderr,
        )
        return exit_codes.USAGE
    if args.json:
        sys.stdout.buffer.write(orjson.dumps(view) + b"\n")
        return 0
    print(f"run        {view['id']}")
    print(f"status     {view['status']}")
    print(f"stop       {view['stop_reason'] or '-'}")
    print(
        f"policy     {view['policy']}{' (unattended allowed by the user)' if view['unattended'] else ''}"
    )
    print(f"session    {view['session_id'] or '-'}")
    print(f"server     {view['server_instance_id'] or '-'}")
    if view["error_code"]:
        print(f"error      {view['error_code']}: {view['diagnostic'] or ''}")
    if view["recovery_reason"]:
        print(f"recovery   {view['recovery_reason']}")
    print(f"frames     {view['skipped_frames']} skipped, {view['violations']} protocol violations")
    print(f"prompt     {view['prompt_text'][:200]}")
    if view["prompt_ref"]:
        ref = view["prompt_ref"]
        print(f"journal    prompt at {ref.get('server')}#{ref.get('sequence')}")
    for item in view["items"]:
        content = item["content"]
        summary = content.get("text", "") if isinstance(content, dict) else ""
        if item["kind"] == "tool_call" and isinstance(content, dict):
            summary = (
                f"{content.get('kind')} {content.get('title') or ''} [{content.get('status')}]"
            )
        summary = str(summary).replace("\n", " ")[:100]
        print(
            f"item {item['seq']:<4} {item['kind']:<10} ({item['coalesced_events']} events) {summary}"
        )
    for interaction in view["interactions"]:
        print(
            f"permission {interaction['state']:<9} choice={interaction['choice']} "
            f"by={interaction['chosen_by']} {interaction['reason'] or ''}"
        )
    return 0
