"""`baton logout (--agent NAME | --agent-command CMD) [--json]`: end an agent's sign-in.

Sends ACP ``logout`` to the agent, only because you asked for it here: Baton never logs out on
its own. The agent must advertise ``auth.logout``; otherwise nothing is sent beyond
``initialize`` and the command fails with CAPABILITY_NOT_ADVERTISED (exit 2).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Final

from baton.cli.json_output import write_json
from baton.cli.terminal import error_line, visible
from baton.errors import BatonError
from baton.runtime.runtime import Runtime
from baton.views.contract import document

EXAMPLES: Final = """examples:
  baton logout --agent codex
  baton logout --agent-command "my-acp-agent --stdio" --json
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``logout`` verb."""
    parser = subparsers.add_parser(
        "logout",
        help="sign out of an agent (ACP logout, where advertised)",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    agent = parser.add_mutually_exclusive_group(required=True)
    agent.add_argument("--agent", metavar="NAME", help="a profile: claude, codex, cursor, ...")
    agent.add_argument(
        "--agent-command", metavar='"CMD ARGS"', help="a custom ACP agent command (no shell)"
    )
    parser.add_argument(
        "--env", action="append", default=[], metavar="KEY", help="pass this variable (repeatable)"
    )
    parser.add_argument("--data-dir", metavar="DIR", help="Baton's data directory (or BATON_HOME)")
    parser.add_argument("--json", action="store_true", help="one JSON object")
    parser.set_defaults(handler=run)


async def _logout(args: argparse.Namespace) -> None:
    async with Runtime(data_dir=args.data_dir) as runtime:
        await runtime.logout(
            agent=args.agent, agent_command=args.agent_command, env_keys=tuple(args.env)
        )


def run(args: argparse.Namespace) -> int:
    """Handle `baton logout`."""
    who = args.agent or "the agent"
    try:
        asyncio.run(_logout(args))
    except BatonError as exc:
        code = 2 if exc.fault == "caller" else 1
        if args.json:
            write_json(
                sys.stdout,
                document({"ok": False, "error_code": exc.code, "message": exc.message}),
            )
        print(error_line(exc), file=sys.stderr)
        return code
    if args.json:
        write_json(sys.stdout, document({"ok": True, "agent": args.agent}))
    else:
        print(f"logged out of {visible(who, 80)}", file=sys.stderr)
    return 0
