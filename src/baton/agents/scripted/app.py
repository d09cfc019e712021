"""Entry points: ``python -m baton.agents.scripted [FLAGS]`` and ``baton agent scripted``."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from typing import Final

from baton.agents.scripted.agent import ScriptedAgent
from baton.agents.scripted.options import AgentOptions, add_arguments, options_from_namespace
from baton.agents.scripted.streams import RawWriter, stderr_fd, stdin_fd, stdout_fd
from baton.errors import ConfigurationError

#: Exit code for bad flags (argparse's own).
EXIT_USAGE: Final = 2

#: Exit code after Ctrl-C.
EXIT_INTERRUPTED: Final = 130

DESCRIPTION: Final = (
    "A deterministic ACP v1 agent: JSON-RPC on stdin and stdout, logs on stderr. Each prompt "
    "is a script of commands (echo, stream, write, shell, wait_for_cancel, garbage, crash...) "
    "or plain text to echo. See docs/scripted-agent.md."
)


def build_parser(prog: str = "python -m baton.agents.scripted") -> argparse.ArgumentParser:
    """The agent's argument parser."""
    parser = argparse.ArgumentParser(prog=prog, description=DESCRIPTION)
    add_arguments(parser)
    return parser


async def serve(options: AgentOptions, input_fd: int, output_fd: int, error_fd: int) -> int:
    """Run the agent on these descriptors until it exits; return its exit code."""
    if options.startup_delay > 0:
        # A real adapter's start-up (claude-agent-acp: seconds before it answers anything):
        # nothing is read before it ends, so the client's initialize waits it out.
        await asyncio.sleep(options.startup_delay)
    agent = ScriptedAgent(options, RawWriter(output_fd), RawWriter(error_fd))
    return await agent.serve(input_fd)


def run(options: AgentOptions) -> int:
    """Run the agent on the process's stdin, stdout and stderr; return its exit code."""
    try:
        return asyncio.run(serve(options, stdin_fd(), stdout_fd(), stderr_fd()))
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` and run the agent; return its exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        options = options_from_namespace(args)
    except ConfigurationError as exc:
        print(f"scripted-agent: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return run(options)
