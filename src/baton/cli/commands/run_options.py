"""The options of `baton run` (its argparse block and the parsers of its bounds), apart
from the verb's orchestration (:mod:`baton.cli.commands.run`) and its text printer
(:mod:`baton.cli.run_text`)."""

from __future__ import annotations

import argparse
import math
from typing import Final, Literal

from baton.cli import exit_codes
from baton.cli.options import add_record_options
from baton.cli.workspace_options import add_workspace_options
from baton.runtime.conversations.turn_queue import DEFAULT_WAIT_SECONDS
from baton.runtime.permissions.policies import POLICIES
from baton.wire.budget import BOUND_OFF, DEFAULT_IDLE_TIMEOUT_SECONDS
from baton.wire.version import PROTOCOL_CHOICES

EXAMPLES: Final = """examples:
  baton run --agent claude "Explain this repository"
  baton run --agent claude --mode acceptEdits "Fix the failing test"   # Claude's own edit mode
  baton run --agent-command "baton agent scripted" "echo hi; stream 3" --json
  echo "Summarize CHANGES.md" | baton run --agent codex -
  baton run --agent codex --policy auto-edits --fail-on-denied --timeout 600 "Fix lint"
"""


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """Add `baton run`'s arguments and options to ``parser``."""
    parser.add_argument("prompt", metavar="PROMPT", help="the prompt, or - to read it from stdin")
    agent = parser.add_mutually_exclusive_group()
    agent.add_argument("--agent", metavar="NAME", help="a profile: claude, codex, cursor, ...")
    agent.add_argument(
        "--agent-command",
        metavar='"CMD ARGS"',
        help="a custom ACP agent command (split like a shell; no shell is used)",
    )
    agent.add_argument(
        "--session",
        metavar="NAME",
        help="the next turn of this named session (`baton session new`); its agent, cwd and "
        "settings are the session's. Runs in the data directory's `baton serve` when one runs",
    )
    parser.add_argument(
        "--no-server",
        action="store_true",
        help="with --session: run the turn in this process even when a `baton serve` runs",
    )
    parser.add_argument(
        "--steer",
        action="store_true",
        help="with --session: add the prompt to the session's running turn (`baton steer`), "
        "else queue it as the next turn",
    )
    parser.add_argument(
        "--continue",
        action="store_true",
        dest="continue_latest",
        help="the next turn of the most recently used session of this cwd and agent",
    )
    parser.add_argument(
        "--create",
        action="store_true",
        help="with --continue: when this cwd and agent have no open session, create one "
        "(named for you, printed) and run the prompt as its first turn",
    )
    parser.add_argument(
        "--no-wait",
        action="store_true",
        help=f"with a session: fail SESSION_BUSY (exit {exit_codes.SESSION_BUSY}) instead of "
        "waiting while another turn of it runs",
    )
    parser.add_argument(
        "--wait-timeout",
        type=bound,
        default=DEFAULT_WAIT_SECONDS,
        metavar="SECONDS|off",
        help=f"with a session: how long to wait for a running turn (default {DEFAULT_WAIT_SECONDS:g})",
    )
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="KEY",
        help="pass this environment variable to an --agent-command agent (repeatable)",
    )
    parser.add_argument("--cwd", metavar="DIR", help="the session's working directory (default: .)")
    parser.add_argument(
        "--policy",
        choices=POLICIES,
        default="ask",
        help="how permission requests are answered (default: ask)",
    )
    parser.add_argument(
        "--allow-unattended",
        action="store_true",
        help="let an --agent-command agent use auto-edits and full (recorded on the run)",
    )
    parser.add_argument(
        "--fail-on-denied",
        action="store_true",
        help=f"exit {exit_codes.PERMISSION_NOT_GRANTED} when the turn completed but a permission "
        "was denied or cancelled (nobody allowed it)",
    )
    add_workspace_options(parser)
    parser.add_argument(
        "--fail-on-unreported",
        action="store_true",
        help=f"exit {exit_codes.UNREPORTED_CHANGES} when the turn completed but changed a "
        "workspace file no tool call or permission reported",
    )
    parser.add_argument(
        "--lane",
        choices=("default", "review"),
        default="default",
        help="the process lane: review is grok's read-only sandboxed process (edits refused)",
    )
    parser.add_argument(
        "--protocol",
        choices=PROTOCOL_CHOICES,
        default=None,
        help="the ACP version to offer and accept: auto (offer 1, or 2 where the profile "
        "declares v2 support; accept 1 or 2), 1 or 2 (default: the profile's, auto unless "
        "pinned)",
    )
    parser.add_argument("--mode", metavar="ID", help="the session mode (exact id)")
    parser.add_argument("--model", metavar="ID", help="the model (exact advertised id)")
    parser.add_argument(
        "--effort", metavar="LEVEL", help="reasoning effort (matched, sent as advertised)"
    )
    parser.add_argument(
        "--set-option",
        "--option",
        action="append",
        default=[],
        metavar="ID=VALUE",
        dest="option_values",
        help="set a session config option (repeatable)",
    )
    parser.add_argument(
        "--tools", metavar="FILE", help="trusted MCP stdio server declarations (JSON)"
    )
    parser.add_argument(
        "--attach", action="append", default=[], metavar="FILE", help="attach a file (repeatable)"
    )
    parser.add_argument(
        "--add-dir",
        action="append",
        default=[],
        metavar="DIR",
        dest="add_dirs",
        help="an additional workspace root (an existing directory; repeatable); needs the "
        "agent's sessionCapabilities.additionalDirectories",
    )
    prompts = parser.add_mutually_exclusive_group()
    prompts.add_argument(
        "--system-prompt",
        metavar="TEXT|@FILE",
        help="replace the agent's default instructions (unstable ACP; needs "
        "sessionCapabilities.systemPrompt.mode.override)",
    )
    prompts.add_argument(
        "--append-system-prompt",
        metavar="TEXT|@FILE",
        help="add to the agent's instructions (unstable ACP; needs sessionCapabilities.systemPrompt)",
    )
    parser.add_argument(
        "--idle-timeout",
        type=idle_bound,
        metavar="SECONDS|off",
        help=(
            "the turn's idle bound: seconds without any message from the agent (a positive "
            f"number, or off; default: the profile's, the config file's, else "
            f"{DEFAULT_IDLE_TIMEOUT_SECONDS:g})"
        ),
    )
    parser.add_argument(
        "--timeout",
        type=bound,
        metavar="SECONDS|off",
        help="the turn's absolute bound (a positive number of seconds, or off)",
    )
    add_record_options(parser, store=True)
    parser.add_argument(
        "--config",
        "--config-file",
        metavar="FILE",
        dest="config_file",
        help="Baton's config file (or BATON_CONFIG)",
    )
    output = parser.add_mutually_exclusive_group()
    output.add_argument(
        "--json", action="store_const", const="json", dest="format", help="one JSON event per line"
    )
    output.add_argument(
        "--format", choices=("text", "json"), help="output format (--json is --format json)"
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="also show the agent's stderr (redacted) as it arrives",
    )
    parser.add_argument("--network", default="enabled", help=argparse.SUPPRESS)
    parser.add_argument("--reviewer", default="user", help=argparse.SUPPRESS)


def bound(value: str) -> float | None:
    """A time bound: a positive, finite number of seconds, or ``off`` (None: no bound)."""
    if value.strip().lower() == BOUND_OFF:
        return None
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not (seconds > 0 and math.isfinite(seconds)):
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a positive number of seconds (or {BOUND_OFF})"
        )
    return seconds


def idle_bound(value: str) -> float | Literal["off"]:
    """An idle bound: a positive, finite number of seconds, or ``off`` (kept as ``"off"``:
    it overrides the profile's, the config file's and the default bound)."""
    seconds = bound(value)
    return BOUND_OFF if seconds is None else seconds
