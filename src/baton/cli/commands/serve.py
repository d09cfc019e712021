"""`baton serve [--port N] [--host ADDR] [--data-dir DIR] [--policy P] [--open]`: the runtime
as a long-lived local service with an authenticated HTTP API (docs/api.md).

Only this verb imports the service (Starlette, uvicorn): `import baton` and every other verb
start without them.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Final

from baton.cli.options import add_record_options
from baton.cli.store_access import add_store_option, store_url
from baton.errors import UsageError
from baton.service.context import ServiceSettings
from baton.service.feeds import QueueBounds
from baton.service.limits import (
    DEFAULT_ELICITATION_WAIT_SECONDS,
    DEFAULT_PERMISSION_WAIT_SECONDS,
    DEFAULT_SHUTDOWN_GRACE_SECONDS,
    SUBSCRIBER_QUEUE_BYTES,
    SUBSCRIBER_QUEUE_EVENTS,
)
from baton.service.runtime_file import DEFAULT_IDLE_STOP_SECONDS
from baton.service.server import ServeOptions, serve

#: The highest TCP port.
MAX_PORT: Final = 65535

EXAMPLES: Final = """examples:
  baton serve                          # a free port on 127.0.0.1; the URL is printed
  baton serve --port 8765 --open       # a fixed port, and open the browser
  baton serve --policy auto-edits      # runs that name no policy use auto-edits
  baton serve --store postgresql://baton@db/baton   # the fleet's shared store (docs/fleet.md)
  baton serve --status                 # is a service running on the data directory?
  baton serve --stop                   # stop it (gracefully) and wait
  curl -H "Authorization: Bearer $(jq -r .token ~/.local/share/baton/serve.json)" \\
       http://127.0.0.1:8765/api/v1/runs
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``serve`` verb."""
    parser = subparsers.add_parser(
        "serve",
        help="run the runtime as a local service with an HTTP API",
        description=(
            "Run one runtime for the data directory as a long-lived local service with an "
            "authenticated HTTP API (loopback only). The URL, pid and token are written to "
            "serve.json in the data directory (owner-only) for this user's CLI."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--port", type=_port, default=0, help="TCP port (default: a free one)")
    parser.add_argument(
        "--host", default="127.0.0.1", help="127.0.0.1 (default) or ::1; nothing else"
    )
    add_record_options(parser)
    parser.add_argument(
        "--policy",
        choices=("ask", "auto-edits", "full"),
        default="ask",
        help="permission policy of runs that name none (default ask: answered through the API)",
    )
    parser.add_argument(
        "--allow-agent-command",
        action="store_true",
        help="let API clients run ad-hoc agent commands (agentCommand), not only profiles",
    )
    parser.add_argument(
        "--permission-wait",
        type=_seconds,
        default=DEFAULT_PERMISSION_WAIT_SECONDS,
        metavar="SECONDS",
        help="how long a permission request waits for an answer when its turn has no budget "
        f"(default {DEFAULT_PERMISSION_WAIT_SECONDS:g}); then it is cancelled, no user available",
    )
    parser.add_argument(
        "--elicitation-wait",
        type=_seconds,
        default=DEFAULT_ELICITATION_WAIT_SECONDS,
        metavar="SECONDS",
        help="how long an agent's question (elicitation) waits for an answer "
        f"(default {DEFAULT_ELICITATION_WAIT_SECONDS:g}); then it is declined, no user available",
    )
    parser.add_argument(
        "--shutdown-grace",
        type=_seconds,
        default=DEFAULT_SHUTDOWN_GRACE_SECONDS,
        metavar="SECONDS",
        help="how long SIGTERM/SIGINT let running turns finish before cancelling them "
        f"(default {DEFAULT_SHUTDOWN_GRACE_SECONDS:g})",
    )
    parser.add_argument(
        "--sse-queue-events",
        type=_count,
        default=SUBSCRIBER_QUEUE_EVENTS,
        metavar="N",
        help=f"events a slow event-stream client may lag before it is dropped "
        f"(default {SUBSCRIBER_QUEUE_EVENTS})",
    )
    parser.add_argument(
        "--sse-queue-bytes",
        type=_count,
        default=SUBSCRIBER_QUEUE_BYTES,
        metavar="BYTES",
        help=f"bytes a slow event-stream client may lag (default {SUBSCRIBER_QUEUE_BYTES})",
    )
    parser.add_argument(
        "--idle-stop",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help="stop by itself after this long with nothing to do (nothing queued, running or "
        "waiting for an answer, no client); default: run until stopped (a service a session's "
        f"turn started in the background: [service] idle_stop, else {DEFAULT_IDLE_STOP_SECONDS:g})",
    )
    parser.add_argument("--open", action="store_true", help="open the service in a browser")
    control = parser.add_mutually_exclusive_group()
    control.add_argument(
        "--status",
        action="store_true",
        help="say whether a service runs on the data directory (exit 0 if so, 1 if not)",
    )
    control.add_argument(
        "--stop",
        action="store_true",
        help="stop the data directory's service (its graceful SIGTERM stop) and wait for it",
    )
    parser.add_argument("--json", action="store_true", help="with --status/--stop: one JSON object")
    parser.add_argument(
        "--config", "--config-file", metavar="FILE", dest="config_file", help="config file"
    )
    add_store_option(parser)
    parser.set_defaults(handler=run)


def _port(value: str) -> int:
    if not value.isdigit() or int(value) > MAX_PORT:
        raise argparse.ArgumentTypeError(f"{value!r} is not a TCP port (0-{MAX_PORT})")
    return int(value)


def _seconds(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        number = 0.0
    if not number > 0:
        raise argparse.ArgumentTypeError(f"{value!r} is not a positive number of seconds")
    return number


def _count(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"{value!r} is not a positive number")
    return int(value)


def run(args: argparse.Namespace) -> int:
    """Handle `baton serve` (and its ``--status`` and ``--stop``)."""
    if args.status or args.stop:
        from baton.cli.commands import serve_control
        from baton.store import resolve_data_dir

        data_dir = resolve_data_dir(args.data_dir)
        if args.status:
            return serve_control.status(data_dir, as_json=args.json)
        return serve_control.stop(data_dir, as_json=args.json)
    options = ServeOptions(
        host=args.host,
        port=args.port,
        data_dir=args.data_dir,
        store=store_url(args.store, args.config_file),
        config_file=args.config_file,
        settings=ServiceSettings(
            policy=args.policy,
            allow_agent_command=args.allow_agent_command,
            shutdown_grace=args.shutdown_grace,
        ),
        permission_wait=args.permission_wait,
        elicitation_wait=args.elicitation_wait,
        queue_bounds=QueueBounds(events=args.sse_queue_events, bytes=args.sse_queue_bytes),
        open_browser=args.open,
        idle_stop=args.idle_stop,
    )
    if 0 < args.port < 1024:
        raise UsageError("ports below 1024 need privileges Baton does not ask for")
    return asyncio.run(serve(options))
