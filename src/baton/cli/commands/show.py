"""`baton show RUN [--json]`: one run's record: status, stop reason, the agent, items,
permission decisions (granted, denied, cancelled), skipped frames, protocol violations, what
the agent process left (its exit and last stderr lines) and journal references."""

from __future__ import annotations

import argparse
import sys
from typing import Any, Final
from urllib.parse import quote

from baton.cli.json_output import write_json
from baton.cli.options import READ_HERE_HELP, add_record_options
from baton.cli.service_link import service_for
from baton.cli.store_access import open_store, store_url
from baton.cli.terminal import visible
from baton.cli.usage_view import usage_text
from baton.cli.workspace_view import counts_line, file_lines, unreported_lines
from baton.runtime.workspaces.tracking import ITEM_KIND, summary_of
from baton.views.contract import document, uncamel
from baton.views.runs import run_view

#: Characters of the prompt `show` prints (the JSON has all of it).
SHOW_PROMPT_CHARS: Final = 200
#: Characters of one item's summary line.
ITEM_SUMMARY_CHARS: Final = 100
#: Lines of the agent process's diagnostics (its stderr tail) shown.
DIAGNOSTIC_LINES: Final = 12

EXAMPLES: Final = """examples:
  baton show run-3f2a9c01d2e4b5f6
  baton show 3f2a              # a unique prefix is enough
  baton show 3f2a --json | jq .permissionOutcomes
"""


def choice_text(choice: object) -> str:
    """A permission's chosen option id as shown, ``-`` when none was chosen (cancelled)."""
    return "-" if choice is None else visible(str(choice), 80)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``show`` verb."""
    parser = subparsers.add_parser(
        "show",
        help="show one run",
        description="Show one run's record (a run id or a unique prefix of one).",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("run_id", metavar="RUN")
    add_record_options(
        parser,
        json_help="the record as one JSON object",
        no_server_help=READ_HERE_HELP,
        store=True,
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Handle `baton show`: through the data directory's running service when there is one
    (unless ``--no-server``), else from the store in this process; the same record either
    way."""
    # A shared store named by --store is read here: the local service serves its own store.
    client = service_for(
        args.data_dir, no_server=args.no_server or store_url(args.store) is not None
    )
    if client is not None:
        shown = client.request("GET", f"/api/v1/runs/{quote(args.run_id, safe='')}")
    else:
        with open_store(args.data_dir, read_only=True, store_flag=args.store) as (store, _journal):
            shown = document(run_view(store, args.run_id))
    if args.json:
        write_json(sys.stdout, shown)
        return 0
    print_view(uncamel(shown))
    return 0


def _multiline(label: str, text: str) -> None:
    lines = visible(text, None, newlines=True).splitlines() or [""]
    if len(lines) > DIAGNOSTIC_LINES:
        lines = ["…", *lines[-DIAGNOSTIC_LINES:]]
    print(f"{label:<10} {lines[0]}")
    for line in lines[1:]:
        print(f"{'':<10} {line}")


def print_view(view: dict[str, Any]) -> None:
    """The human form of :func:`~baton.views.runs.run_view`."""
    print(f"run        {view['id']}")
    print(f"status     {view['status']}")
    print(f"stop       {view['stop_reason'] or '-'}")
    print(f"agent      {visible(view['agent'] or '-')}")
    print(f"cwd        {visible(view['cwd'] or '-', None)}")
    print(f"host       {visible(view.get('host') or '-', None)}")
    unattended = " (unattended allowed by the user)" if view["unattended"] else ""
    print(f"policy     {view['policy']}{unattended}")
    print(f"session    {view['session_id'] or '-'}")
    print(f"server     {view['server_instance_id'] or '-'}")
    if view["duration_seconds"] is not None:
        print(f"time       {view['duration_seconds']:.1f}s")
    if view["error_code"]:
        _multiline("error", f"{view['error_code']}: {view['diagnostic'] or ''}")
    if view["recovery_reason"]:
        _multiline("recovery", view["recovery_reason"])
    server = view.get("server_instance")
    if server and server.get("diagnostics") and server.get("state") in ("FAILED", "LOST"):
        _multiline("agent", f"{server['state']}: {server['diagnostics']}")
    print(f"frames     {view['skipped_frames']} skipped, {view['violations']} protocol violations")
    print(f"prompt     {visible(view['prompt_text'], SHOW_PROMPT_CHARS)}")
    if view["prompt_ref"]:
        ref = view["prompt_ref"]
        print(f"journal    prompt at {ref.get('server')}#{ref.get('sequence')}")
    usage = next((i["content"] for i in view["items"] if i["kind"] == "usage"), None)
    if isinstance(usage, dict) and usage_text(usage):
        print(f"usage      {usage_text(usage)}")
    counts = view["permission_outcomes"]
    if view["interactions"]:
        print(
            f"permissions {counts['granted']} granted, {counts['denied']} denied, "
            f"{counts['cancelled']} cancelled"
        )
    for item in view["items"]:
        content = item["content"]
        summary = content.get("text", "") if isinstance(content, dict) else ""
        if item["kind"] == "tool_call" and isinstance(content, dict):
            summary = (
                f"{content.get('kind')} {content.get('title') or ''} [{content.get('status')}]"
            )
            if content.get("name"):
                summary += f" ({content['name']})"
            if content.get("parentToolCallId"):
                summary = f"↳ {summary} (in {content['parentToolCallId']})"
        elif item["kind"] == "notice" and isinstance(content, dict):
            summary = f"[{content.get('severity')}] {content.get('title') or ''}"
            if content.get("description"):
                summary += f" — {content['description']}"
        elif item["kind"] == "compaction" and isinstance(content, dict):
            summary = (
                f"[{content.get('status')}] {content.get('summary') or content.get('error') or ''}"
            )
        elif item["kind"] == "usage" and isinstance(content, dict):
            summary = usage_text(content) or ""
        elif item["kind"] == ITEM_KIND and isinstance(content, dict):
            summary = content.get("error") or counts_line(summary_of(content))
        count = item["coalesced_events"]
        print(
            f"item {item['seq']:<4} {item['kind']:<10} ({count} {'event' if count == 1 else 'events'}) "
            f"{visible(str(summary).replace(chr(10), ' '), ITEM_SUMMARY_CHARS)}"
        )
    changes = view.get("workspace_changes")
    if changes and "error" not in changes:
        print(counts_line(changes))
        for line in file_lines(changes.get("files") or []):
            print(line)
        for line in unreported_lines(changes):
            print(line)
    for interaction in view["interactions"]:
        print(
            f"permission {interaction['state']:<9} choice={choice_text(interaction['choice'])} "
            f"by={interaction['chosen_by']} {visible(interaction['reason'] or '', 200)}"
        )
    for observation in view["observations"]:
        payload = observation.get("payload")
        if observation.get("kind") == "BATON_RESOLUTION" and isinstance(payload, dict):
            recovery = payload.get("recovery")
            if isinstance(recovery, dict) and recovery.get("runId"):
                print(f"recovered  by {recovery.get('action')}: run {recovery.get('runId')}")
            elif isinstance(recovery, dict) and recovery.get("of"):
                print(f"recovers   run {recovery.get('of')} ({recovery.get('action')})")
