"""`baton submit [--queue Q] --agent A | --agent-command CMD [--session NAME] ... PROMPT`:
queue one turn on the fleet (a shared PostgreSQL store; docs/fleet.md) and print its run id
(QUEUED). ``--wait`` follows the run to its end: its events as `baton run` prints them
(``--json``: one JSON object per line), and the run's exit code."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import Final

from baton.cli.json_output import write_json
from baton.cli.store_access import add_store_option, store_url
from baton.cli.terminal import visible
from baton.cli.workspace_options import add_workspace_options, workspace_ask
from baton.errors import ConfigurationError
from baton.views.contract import document

EXAMPLES: Final = """examples:
  baton submit --store postgresql://baton@db/baton --agent claude "Fix the failing test"
  baton submit --queue gpu-hosts --agent codex --wait "Explain this repository"
  baton submit --session review-42 --agent claude "Now check the docs"   # same host as before
  BATON_STORE=postgresql://baton@db/baton baton submit --idempotency-key ci-123 --agent claude "..."
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``submit`` verb."""
    parser = subparsers.add_parser(
        "submit",
        help="queue a turn for the fleet's workers",
        description="Queue one turn on the fleet's shared store and print its run id (QUEUED).",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("prompt", help="the prompt text")
    agent = parser.add_mutually_exclusive_group(required=True)
    agent.add_argument("--agent", metavar="PROFILE", help="the agent profile the worker runs")
    agent.add_argument("--agent-command", metavar="CMD", help="an ad-hoc ACP agent command")
    parser.add_argument("--queue", default="default", help="the queue (default: default)")
    parser.add_argument(
        "--session", metavar="NAME", help="a named session: its turns run in order on one host"
    )
    parser.add_argument("--cwd", metavar="DIR", help="the working directory on the worker's host")
    add_workspace_options(parser)
    parser.add_argument("--policy", default="ask", choices=("ask", "auto-edits", "full"))
    parser.add_argument("--allow-unattended", action="store_true")
    parser.add_argument("--mode")
    parser.add_argument("--model")
    parser.add_argument("--effort")
    parser.add_argument("--timeout", type=float, metavar="SECONDS")
    parser.add_argument("--idle-timeout", type=float, metavar="SECONDS")
    parser.add_argument(
        "--idempotency-key", metavar="KEY", help="a second submission with KEY is the same run"
    )
    parser.add_argument("--wait", action="store_true", help="follow the run to its end")
    parser.add_argument("--json", action="store_true", help="JSON output")
    parser.add_argument("--config", metavar="FILE", help="the config file ([store] url)")
    add_store_option(parser)
    parser.set_defaults(handler=run)


def shared_store_url(flag: str | None, config: str | None) -> str:
    """The fleet's store URL; CONFIG_ERROR when none is set (the queue needs PostgreSQL)."""
    url = store_url(flag, config)
    if url is None:
        raise ConfigurationError(
            "the queue needs a shared store: --store postgresql://..., BATON_STORE, or the "
            "config file's [store] url"
        )
    return url


def _worker_workspace(value: str | None) -> str | None:
    """``--workspace`` for a worker: a directory is made absolute, not resolved (it names a
    path on the worker's host); a sandbox setting is refused here."""
    if value in (None, "none", "worktree", "danger-full-access"):
        return workspace_ask(value)
    workspace_ask(value)  # EXECUTION_SETTING_UNSUPPORTED for a sandbox setting
    return os.path.abspath(str(value))


def run(args: argparse.Namespace) -> int:
    """Handle `baton submit`."""
    from baton.fleet.queued import TurnSubmission, submit
    from baton.runtime.runtime import RunResult

    url = shared_store_url(args.store, args.config)
    cwd = os.path.abspath(args.cwd) if args.cwd else None
    submission = TurnSubmission(
        prompt=args.prompt,
        agent=args.agent,
        agent_command=args.agent_command,
        session=args.session,
        queue=args.queue,
        cwd=cwd,
        policy=args.policy,
        allow_unattended=args.allow_unattended,
        mode=args.mode,
        model=args.model,
        effort=args.effort,
        idle_timeout=args.idle_timeout,
        timeout=args.timeout,
        idempotency_key=args.idempotency_key,
        workspace=_worker_workspace(args.workspace),
        base=args.base,
        require_clean=args.require_clean,
    )

    async def go() -> int:
        queued = await submit(url, submission)
        if args.json:
            write_json(
                sys.stdout,
                document({"runId": queued.run_id, "status": "QUEUED", "created": queued.created}),
            )
        else:
            print(queued.run_id, flush=True)
        if not args.wait:
            return 0
        exit_code = 1
        async for event in queued.events():
            if args.json:
                sys.stdout.buffer.write(event.to_json() + b"\n")
                sys.stdout.flush()
            elif event.type == "text":
                sys.stdout.write(visible(str(event.data.get("text", "")), None))
                sys.stdout.flush()
            if event.type == "result":
                exit_code = RunResult.from_event(event).exit_code
                if not args.json:
                    status = event.data.get("status")
                    code = event.data.get("errorCode")
                    print(f"\n{status}" + (f" ({code})" if code else ""), file=sys.stderr)
        return exit_code

    return asyncio.run(go())
