"""`baton recover RUN`: what is known about a RECOVERY_REQUIRED run, and the user's choices.

ACP stable v1 has no way to ask an agent what became of a prompt, so Baton never resubmits an
ambiguous prompt on its own. This verb shows the prompt, what was recorded of the turn (the text
streamed before the loss, items, permission decisions, the last journal entries of its agent
process) and why it is ambiguous, then does only what the user asks:

- ``--mark-failed``: settle the run as FAILED (the user's decision, recorded);
- ``--attach``: attach the provider session (resume, else load) to look; no prompt is sent;
- ``--new-prompt TEXT``: start a *new* prompt explicitly, in the attached provider session when
  the agent can attach it, as a new run. The ambiguous prompt is never resent.

The new run of ``--attach`` or ``--new-prompt`` is linked to the original (both ``baton show``
outputs name the other); the original stays RECOVERY_REQUIRED until ``--mark-failed``.

Attaching starts the agent: the run's own agent by default (its profile, or the ad-hoc command
the run recorded), else ``--agent NAME`` or ``--agent-command``. A run that is not
RECOVERY_REQUIRED has nothing to recover: it is shown, and the choices are refused.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import Any, Final

from baton.cli import exit_codes
from baton.cli.commands.show import choice_text
from baton.cli.json_output import write_json
from baton.cli.options import add_record_options
from baton.cli.store_access import open_store
from baton.cli.terminal import plain_help, visible
from baton.errors import BatonError, RunNotRecoverable, UsageError
from baton.redaction import redact_text
from baton.runtime.runtime import Runtime
from baton.runtime.workspaces.tracking import WorkspaceTracker
from baton.store import Store
from baton.views.contract import document, plain
from baton.views.recovery import attach_request, note_recovery, recovery_view

#: Characters of the text streamed before the loss shown (its end; `baton show --json` and the
#: store keep all of it).
STREAMED_TEXT_CHARS: Final = 2000

EXAMPLES: Final = """examples:
  baton runs --status recovery_required
  baton recover run-3f2a9c01              # what is known, and the choices
  baton recover 3f2a --attach             # look at the provider session; nothing is sent
  baton recover 3f2a --new-prompt "Check whether the migration ran; do not rerun it"
  baton recover 3f2a --mark-failed        # settle it
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``recover`` verb."""
    parser = subparsers.add_parser(
        "recover",
        help="inspect and settle a RECOVERY_REQUIRED run",
        description=plain_help(__doc__ or ""),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("run_id", metavar="RUN", help="a run id, or a unique prefix of one")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--mark-failed", action="store_true", help="settle the run as FAILED")
    action.add_argument("--attach", action="store_true", help="attach the provider session to look")
    action.add_argument("--new-prompt", metavar="TEXT", help="start a new prompt explicitly")
    parser.add_argument("--agent", metavar="NAME", help="the agent profile (default: the run's)")
    parser.add_argument(
        "--agent-command", metavar='"CMD ARGS"', help="a custom agent command (default: the run's)"
    )
    add_record_options(parser, json_help="print what is known as JSON")
    parser.set_defaults(handler=run)


def _compare_workspace(store: Store, run_id: str) -> dict[str, Any] | None:
    """The run's workspace compared again now that its outcome is being recovered (the
    agent may have changed files after Baton lost the turn): a new ``workspace_changes``
    item when its state differs from the one recorded (docs/workspaces.md)."""
    # The worktree root is not needed to compare an existing workspace.
    tracker = WorkspaceTracker("", os.environ)
    try:
        return asyncio.run(tracker.compare_at_recover(store, run_id, redact_text))
    except (BatonError, OSError) as exc:
        print(f"baton: the workspace was not compared: {exc}", file=sys.stderr)
        return None


def run(args: argparse.Namespace) -> int:
    """Handle `baton recover`."""
    acting = args.mark_failed or args.attach or args.new_prompt is not None
    if args.new_prompt is not None and not args.new_prompt.strip():
        raise UsageError("--new-prompt needs the text of the new prompt")
    with open_store(args.data_dir) as (store, journal):
        known = recovery_view(store, journal, args.run_id)
        run_id = known["id"]
        if known["recoverable"]:
            compared = _compare_workspace(store, run_id)
            if compared is not None:
                known = recovery_view(store, journal, run_id)
        if acting and not known["recoverable"]:
            raise RunNotRecoverable(
                f"run {run_id} is {known['status']}, not RECOVERY_REQUIRED: nothing to recover"
                f" (`baton show {run_id}` shows it)"
            )
        if args.mark_failed:
            asyncio.run(
                store.update_run_status(
                    run_id,
                    "FAILED",
                    expected="RECOVERY_REQUIRED",
                    error_code="MARKED_FAILED_BY_USER",
                    diagnostic="the user settled the ambiguous run as failed",
                )
            )
            print(f"run {run_id} marked FAILED")
            return exit_codes.OK
    if args.attach or args.new_prompt is not None:
        return _attach(args, known)
    _print_known(known, args.json)
    return exit_codes.OK


def _print_known(known: dict[str, Any], as_json: bool) -> None:
    if as_json:
        write_json(sys.stdout, document(known))
        return
    run_id = known["id"]
    print(f"run        {run_id} ({known['status']})")
    print(f"prompt     {visible(known['prompt_text'], 500)}")
    conversation = known.get("conversation")
    if conversation is not None:
        print(f"session    {visible(conversation['name'], 200)} (its agent attaches)")
    print(f"why        {visible(known['recovery_reason'] or known['diagnostic'] or '-', None)}")
    if known["prompt_ref"]:
        print("submitted  yes: the prompt was written to the agent (journal reference recorded)")
    else:
        print("submitted  not recorded")
    text = known["streamed_text"]
    if text:
        cut = len(text) > STREAMED_TEXT_CHARS
        shown = visible(text[-STREAMED_TEXT_CHARS:], None, newlines=True)
        print("streamed   the agent's reply before the loss" + (" (its end):" if cut else ":"))
        for line in shown.splitlines():
            print(f"  | {line}")
    items = known["items"]
    print(f"items      {len(items)} materialized")
    for item in items:
        if item["kind"] == "text":
            continue
        content = item["content"]
        summary = ""
        if isinstance(content, dict):
            summary = str(content.get("title") or content.get("text") or "")
        print(f"  - {item['kind']}: {visible(summary, 120)}")
    for interaction in known["interactions"]:
        print(f"permission {interaction['state']} choice={choice_text(interaction['choice'])}")
    print("journal    (stream text is masked in the journal; routing and status are kept)")
    if known.get("journal_incomplete"):
        why = known.get("journal_incomplete_reason") or "damaged"
        print(
            f"  incomplete: the journal could not be read to the prompt's answer ({why}); "
            "the items it completed stop where the reading stopped"
        )
    for entry in known["journal_tail"]:
        print(
            f"  #{entry['sequence']:<6} {entry['direction']:<8} {entry['kind']:<12} "
            f"{entry['method'] or '-'} {entry['id'] if entry['id'] is not None else ''}"
        )
    print()
    if not known["recoverable"]:
        print(f"run {run_id} is {known['status']}: there is nothing to recover.")
        return
    print("choices:")
    print(f"  baton recover {run_id} --mark-failed          settle it as failed")
    print(f"  baton recover {run_id} --attach               look at the provider session")
    print(f'  baton recover {run_id} --new-prompt "TEXT"    send a new prompt (a new run)')
    print("Baton never resubmits the ambiguous prompt on its own.")


def _attach(args: argparse.Namespace, known: dict[str, Any]) -> int:
    run_id = known["id"]
    action = "attach" if args.new_prompt is None else "new_prompt"
    request = attach_request(
        known, agent=args.agent, agent_command=args.agent_command, new_prompt=args.new_prompt
    )

    async def go() -> int:
        async with Runtime(data_dir=args.data_dir) as runtime:
            result = await runtime.run(request)
            assert runtime.store is not None
            await note_recovery(runtime.store, run_id, result.run_id, action)
        if args.json:
            write_json(
                sys.stdout,
                document({**plain(result.to_event().to_dict()), "text": result.text, "of": run_id}),
            )
            return result.exit_code
        detail = visible(result.message or result.stop_reason or "", None)
        print(f"{result.status}: {detail} (run {result.run_id}, recovering {run_id})")
        if result.text:
            print(visible(result.text, None, newlines=True))
        print(
            f"run {run_id} stays RECOVERY_REQUIRED until you settle it: "
            f"`baton recover {run_id} --mark-failed`"
        )
        return result.exit_code

    return asyncio.run(go())
