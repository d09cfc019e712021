"""`baton recover RUN`: what is known about a RECOVERY_REQUIRED run, and the user's choices.

ACP stable v1 has no way to ask an agent what became of a prompt, so Baton never resubmits an
ambiguous prompt on its own. This verb shows the prompt, what was recorded of the turn (items,
permission decisions, the last journal entries of its agent process) and why it is ambiguous,
then does only what the user asks:

- ``--mark-failed``: settle the run as FAILED (the user's decision, recorded);
- ``--attach``: attach the provider session (resume, else load) to look; no prompt is sent;
- ``--new-prompt TEXT``: start a *new* prompt explicitly, in the attached provider session when
  the agent can attach it, as a new run. The ambiguous prompt is never resent.

Attaching starts the agent, so it needs the agent: ``--agent NAME`` (the run's profile by
default) or ``--agent-command``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

import orjson

from baton.cli import exit_codes
from baton.cli.commands.show import run_view
from baton.cli.store_access import open_store, plain
from baton.runtime.agents.launch import CUSTOM_PROFILE_ID
from baton.runtime.runtime import RunRequest, Runtime

#: Journal entries shown from the end of the run's agent process journal.
RECOVER_TAIL_RECORDS = 20


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``recover`` verb."""
    parser = subparsers.add_parser(
        "recover",
        help="inspect and settle a RECOVERY_REQUIRED run",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("run_id", metavar="RUN")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--mark-failed", action="store_true", help="settle the run as FAILED")
    action.add_argument("--attach", action="store_true", help="attach the provider session to look")
    action.add_argument("--new-prompt", metavar="TEXT", help="start a new prompt explicitly")
    parser.add_argument("--agent", metavar="NAME", help="the agent profile (default: the run's)")
    parser.add_argument("--agent-command", metavar='"CMD ARGS"', help="a custom agent command")
    parser.add_argument("--json", action="store_true", help="print what is known as JSON")
    parser.add_argument("--data-dir", metavar="DIR", help="Baton's data directory (or BATON_HOME)")
    parser.set_defaults(handler=run)


def _known(store: Any, journal: Any, run_id: str) -> dict[str, Any] | None:
    view = run_view(store, run_id)
    if view is None:
        return None
    tail: list[dict[str, Any]] = []
    server = view.get("server_instance_id")
    if server:
        try:
            records = journal.tail(server, RECOVER_TAIL_RECORDS)
        except Exception:
            records = []
        for record in records:
            tail.append(
                {
                    "sequence": record.sequence,
                    "direction": record.direction,
                    "kind": record.metadata.kind,
                    "method": record.metadata.method,
                    "id": record.metadata.id,
                }
            )
    view["journalTail"] = tail
    session = store.find_session(view["session_id"]) if view.get("session_id") else None
    view["session"] = plain(session) if session is not None else None
    view["serverInstance"] = plain(store.find_server_instance(server)) if server else None
    return view


def run(args: argparse.Namespace) -> int:
    """Handle `baton recover`."""
    with open_store(args.data_dir) as (store, journal):
        known = _known(store, journal, args.run_id)
        if known is None:
            print(f"baton: RUN_NOT_FOUND: no run {args.run_id!r}", file=sys.stderr)
            return exit_codes.USAGE
        status = known["status"]
        if args.mark_failed:
            if status != "RECOVERY_REQUIRED":
                print(f"baton: RUN_NOT_RECOVERABLE: run is {status}", file=sys.stderr)
                return exit_codes.USAGE
            asyncio.run(
                store.update_run_status(
                    args.run_id,
                    "FAILED",
                    expected="RECOVERY_REQUIRED",
                    error_code="MARKED_FAILED_BY_USER",
                    diagnostic="the user settled the ambiguous run as failed",
                )
            )
            print(f"run {args.run_id} marked FAILED")
            return exit_codes.OK
    if args.attach or args.new_prompt is not None:
        return _attach(args, known)
    _print_known(known, args.json)
    return exit_codes.OK


def _print_known(known: dict[str, Any], as_json: bool) -> None:
    if as_json:
        sys.stdout.buffer.write(orjson.dumps(known) + b"\n")
        return
    print(f"run        {known['id']} ({known['status']})")
    print(f"prompt     {known['prompt_text'][:500]}")
    print(f"why        {known['recovery_reason'] or known['diagnostic'] or '-'}")
    if known["prompt_ref"]:
        print("submitted  yes: the prompt was written to the agent (journal reference recorded)")
    else:
        print("submitted  not recorded")
    items = known["items"]
    print(f"items      {len(items)} materialized")
    for item in items:
        content = item["content"]
        text = content.get("text", "") if isinstance(content, dict) else ""
        print(f"  - {item['kind']}: {str(text)[:120]!r}")
    for interaction in known["interactions"]:
        print(f"permission {interaction['state']} choice={interaction['choice']}")
    print("journal    (stream text is masked in the journal; routing and status are kept)")
    for entry in known["journalTail"]:
        print(
            f"  #{entry['sequence']:<6} {entry['direction']:<8} {entry['kind']:<12} "
            f"{entry['method'] or '-'} {entry['id'] if entry['id'] is not None else ''}"
        )
    print()
    print("choices: --mark-failed | --attach (look) | --new-prompt TEXT (explicit)")
    print("Baton never resubmits the ambiguous prompt on its own.")


def _attach(args: argparse.Namespace, known: dict[str, Any]) -> int:
    session = known.get("session")
    if session is None or not session.get("provider_session_id"):
        print("baton: NO_PROVIDER_SESSION: the run never had a provider session", file=sys.stderr)
        return exit_codes.USAGE
    profile = (known.get("serverInstance") or {}).get("profile")
    agent = args.agent
    if args.agent_command is None and agent is None:
        if profile in (None, CUSTOM_PROFILE_ID):
            print(
                "baton: AGENT_REQUIRED: this run used an ad-hoc agent; pass --agent-command",
                file=sys.stderr,
            )
            return exit_codes.USAGE
        agent = profile
    request = RunRequest(
        prompt=args.new_prompt or "",
        agent=agent if args.agent_command is None else None,
        agent_command=args.agent_command,
        cwd=session["cwd"],
        attach_session=session["provider_session_id"],
        inspect_only=args.new_prompt is None,
    )

    async def go() -> int:
        async with Runtime(data_dir=args.data_dir) as runtime:
            result = await runtime.run(request)
        print(
            f"{result.status}: {result.message or result.stop_reason or ''} (run {result.run_id})"
        )
        if result.text:
            print(result.text)
        return result.exit_code

    return asyncio.run(go())
