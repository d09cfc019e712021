"""`baton steer SESSION TEXT`: add TEXT to the session's running turn, never by cancelling it.

Steering is ACP's vendor extension ``_session/steering`` (claude-agent-acp, codex-acp; see
docs/protocol.md, Steering): the text joins the turn that is running. It needs the process that
runs the turn, so it goes to the data directory's running `baton serve`, which answers with the
agent's outcome (``injected``, ``failed``...), also shown on the run's stream. Where the text
cannot be steered (no service runs, no turn is running, the agent does not advertise
steering) it is queued as the session's next turn, and Baton says so: through the service, the
queued prompt's run id; without one, the turn runs here, as `baton run --session SESSION TEXT`
would run it.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Final
from urllib.parse import quote

from baton.cli.json_output import write_json
from baton.cli.service_link import service_for
from baton.cli.terminal import visible
from baton.views.contract import document

EXAMPLES: Final = """examples:
  baton steer fix-login "also run the integration tests"
  baton steer fix-login "stop after the first failure" --json
"""

#: Why a text is queued when no service runs for the data directory.
NO_SERVICE_REASON: Final = (
    "no `baton serve` runs for this data directory, so no running turn can be reached"
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``steer`` verb."""
    parser = subparsers.add_parser(
        "steer",
        help="add text to a session's running turn (ACP steering), else queue it",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("session", metavar="SESSION", help="the session's name")
    parser.add_argument("text", metavar="TEXT", help="what to add to the running turn")
    parser.add_argument("--data-dir", metavar="DIR", help="Baton's data directory (or BATON_HOME)")
    parser.add_argument(
        "--no-server",
        action="store_true",
        help="do not use the data directory's running service (the text is then queued)",
    )
    parser.add_argument("--json", action="store_true", help="one JSON object")
    parser.set_defaults(handler=run)


def _say(args: argparse.Namespace, answer: dict[str, Any]) -> None:
    if args.json:
        write_json(sys.stdout, document({"session": args.session, **answer}))
        return
    outcome = answer.get("outcome")
    reason = answer.get("reason") or ""
    if outcome == "queued":
        print(
            f"not steered ({visible(str(reason), 200)}): queued as the next turn of "
            f"{visible(args.session, 80)}",
            file=sys.stderr,
        )
    else:
        tail = f" ({visible(str(reason), 200)})" if reason else ""
        print(f"steering: {visible(str(outcome), 64)}{tail}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    """Handle `baton steer`."""
    client = service_for(args.data_dir, no_server=args.no_server)
    if client is not None:
        answer = client.request(
            "POST", f"/api/v1/sessions/{quote(args.session, safe='')}/steer", {"text": args.text}
        )
        _say(args, answer)
        return 0
    _say(args, {"outcome": "queued", "reason": NO_SERVICE_REASON})
    from baton.cli.main import main

    data_dir = ["--data-dir", args.data_dir] if args.data_dir else []
    fmt = ["--format", "json"] if args.json else []
    return main(["run", "--session", args.session, "--no-server", *data_dir, *fmt, args.text])
