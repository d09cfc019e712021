"""`baton doctor [PROFILE...] [--json] [--live] [--config FILE]`: which agents can run here.

For each profile (every built-in and config-file profile, or the ones named) it runs discovery
(the version command and the launch-contract probe of each candidate) and prints a table of
state, version, next action and executable, then each profile's diagnostics. ``--live`` also
starts every discovered agent, runs ``initialize`` and ``session/new`` in a temporary directory
within a budget, and shuts it down. ``--json`` prints one JSON object per profile per line
(the fields of :meth:`baton.runtime.agents.readiness.Readiness.to_json`, docs/profiles.md).

Exit code: with PROFILE names, 0 when every named profile can start, else the code of the
first one that cannot (5 not installed or incompatible, 4 authentication required or account
unsupported, 3 the live budget elapsed, 1 any other failure). Without names the report is
informational and exits 0. A config or usage error exits 2.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any, Final, TextIO

import orjson

from baton.cli import exit_codes
from baton.cli.terminal import visible
from baton.errors import UsageError
from baton.runtime.agents.config_file import UserConfig, load_config
from baton.runtime.agents.live_check import LIVE_ABSOLUTE_SECONDS, LIVE_IDLE_SECONDS
from baton.runtime.agents.readiness import (
    LIVE_BUDGET_EXPIRED,
    Readiness,
    ReadinessState,
)
from baton.views.readiness import check_profiles, select_profiles
from baton.wire.budget import TurnBudget

#: Longest version cell in the summary table; longer text is cut there (the details and --json
#: carry all of it). Keeps the table readable when a version command prints a long line.
MAX_CELL_CHARS: Final = 60

EXAMPLES: Final = """examples:
  baton doctor                       # every profile, informational (exit 0)
  baton doctor claude --live         # start it, create a session; exit 0 only if it can run
  baton doctor --json | jq -r 'select(.can_start) | .profile'
  baton doctor --config ./baton.toml my-agent"""

#: The exit code for each state of a named profile that cannot start.
_EXIT_FOR_STATE: Final[Mapping[ReadinessState, int]] = {
    ReadinessState.NOT_INSTALLED: exit_codes.NOT_INSTALLED,
    ReadinessState.INCOMPATIBLE: exit_codes.NOT_INSTALLED,
    ReadinessState.AUTHENTICATION_REQUIRED: exit_codes.AUTH_REQUIRED,
    ReadinessState.ACCOUNT_UNSUPPORTED: exit_codes.AUTH_REQUIRED,
    ReadinessState.FAILED: exit_codes.TURN_FAILED,
}


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``doctor`` verb."""
    parser = subparsers.add_parser(
        "doctor",
        help="check which agents are installed, compatible and signed in",
        description=(
            "Discover each profile's installed executable, prove its launch contract and "
            "report readiness. With --live, also start it and create a session."
        ),
        epilog=(__doc__.split("\n\n")[-1] if __doc__ else "") + "\n\n" + EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("profiles", nargs="*", metavar="PROFILE", help="profiles to check")
    parser.add_argument("--json", action="store_true", help="one JSON object per profile")
    parser.add_argument(
        "--live", action="store_true", help="start each discovered agent and create a session"
    )
    parser.add_argument("--config", metavar="FILE", help="the config file (default: BATON_CONFIG)")
    parser.add_argument(
        "--live-timeout",
        type=float,
        default=LIVE_ABSOLUTE_SECONDS,
        metavar="SECONDS",
        help=f"absolute bound of each live check (default {LIVE_ABSOLUTE_SECONDS:g})",
    )
    parser.set_defaults(handler=run)


def exit_code(results: Sequence[Readiness], named: bool) -> int:
    """The command's exit code (see the module docstring)."""
    if not named:
        return exit_codes.OK
    for result in results:
        if result.can_start:
            continue
        if result.state is ReadinessState.FAILED and LIVE_BUDGET_EXPIRED in result.codes:
            return exit_codes.BUDGET
        return _EXIT_FOR_STATE.get(result.state, exit_codes.TURN_FAILED)
    return exit_codes.OK


def run(args: argparse.Namespace) -> int:
    """The handler of `baton doctor`."""
    config = load_config(args.config)
    profiles = select_profiles(config, args.profiles)
    limit = float(args.live_timeout)
    if not limit > 0:
        raise UsageError("--live-timeout must be a positive number of seconds")
    budget = TurnBudget(idle=min(LIVE_IDLE_SECONDS, limit), absolute=limit)
    results = asyncio.run(
        check_profiles(profiles, config, parent_env=os.environ, live=args.live, budget=budget)
    )
    out = sys.stdout
    if args.json:
        write_json(results, out)
    else:
        write_table(results, out, config)
    return exit_code(results, bool(args.profiles))


# --- output --------------------------------------------------------------------------------


def write_json(results: Sequence[Readiness], out: TextIO) -> None:
    """One compact JSON object per profile, one per line."""
    for result in results:
        out.write(orjson.dumps(result.to_json()).decode() + "\n")
    out.flush()


def printable(text: str) -> str:
    """``text`` safe for a terminal (the terminal layer's one sanitizer, uncut): escape
    sequences from an agent, a NUL in a path, are shown as escapes instead of interpreted."""
    return visible(text, None)


def _cell(value: str | None) -> str:
    text = printable(value) if value else "-"
    return text if len(text) <= MAX_CELL_CHARS else text[: MAX_CELL_CHARS - 1] + "…"


def write_table(results: Sequence[Readiness], out: TextIO, config: UserConfig) -> None:
    """The summary table, then each profile's details."""
    header = ("PROFILE", "STATE", "VERSION", "NEXT", "EXECUTABLE")
    rows = [
        (
            r.profile,
            r.state.value,
            _cell(r.version or (r.agent.version if r.agent else None)),
            r.next_action.value if r.next_action else "-",
            printable(r.executable) if r.executable else "-",  # last column: never cut
        )
        for r in results
    ]
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
    for row in (header, *rows):
        cells = [cell.ljust(widths[i]) for i, cell in enumerate(row)]
        out.write("  ".join(cells).rstrip() + "\n")
    source = f"config: {config.path}" if config.path is not None else "config: none"
    out.write(f"\n{source}\n")
    for result in results:
        out.write("\n" + _details(result))
    out.flush()


def _details(result: Readiness) -> str:
    lines = [f"{result.profile} ({printable(result.display_name)}): {result.state.value}"]
    if result.launch_form is not None:
        origin = f" (from {result.source})" if result.source else ""
        lines.append(f"  launch: {printable(result.launch_form)}{origin}")
    if result.agent is not None:
        version = f" {result.agent.version}" if result.agent.version else ""
        lines.append(f"  agent: {printable(result.agent.name)}{printable(version)}")
    lines.append(f"  environment: {result.environment_contract}")
    checks: dict[str, Any] = result.checks.to_json()
    lines.append("  checks: " + " ".join(f"{k}={v}" for k, v in checks.items()))
    for method in result.auth_methods:
        lines.append(
            f"  auth method: {printable(method.id)} ({printable(method.name)}, {method.type})"
        )
    for diagnostic in result.diagnostics:
        lines.append(
            f"  {diagnostic.severity:<7} {diagnostic.code}: {printable(diagnostic.message)}"
        )
    if result.next_action is not None:
        lines.append(f"  next: {result.next_action.value}")
    return "\n".join(lines) + "\n"
