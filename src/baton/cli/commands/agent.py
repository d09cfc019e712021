"""`baton agent scripted [FLAGS]`: run a bundled ACP agent on this process's stdin and stdout.

The agent speaks ACP v1 on stdin and stdout and logs on stderr; a client (Baton itself, in
demos, tests and benchmarks) starts it as a subprocess. docs/scripted-agent.md describes the
command language of its prompts and every flag.
"""

from __future__ import annotations

import argparse
from typing import Any, Final

from baton.agents.scripted import add_arguments, options_from_namespace, run
from baton.agents.scripted.app import DESCRIPTION

EXAMPLES: Final = """examples:
  baton run --agent-command "baton agent scripted" "echo hi; stream 3"
  baton run --agent-command "baton agent scripted --profile claude" "write a.txt hello"
  baton agent scripted --help        # its flags; docs/scripted-agent.md has its commands
"""


def register(subparsers: Any) -> None:
    """Add ``agent`` and its ``scripted`` subcommand."""
    parser = subparsers.add_parser(
        "agent",
        help="run a bundled ACP agent on stdin/stdout",
        description="Run an ACP agent bundled with Baton, speaking JSON-RPC on stdin/stdout.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    agents = parser.add_subparsers(dest="agent_name", metavar="AGENT", required=True)
    scripted = agents.add_parser(
        "scripted",
        help="the deterministic scripted agent (demos, tests, benchmarks)",
        description=DESCRIPTION,
    )
    add_arguments(scripted)
    scripted.set_defaults(handler=_run_scripted)


def _run_scripted(args: argparse.Namespace) -> int:
    return run(options_from_namespace(args))
