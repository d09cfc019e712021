"""`baton inspect [--data-dir DIR] [--port N] [--host ADDR] [--no-browser]`: open the
inspector, the web page of `baton serve` (docs/inspector.md).

When a service already runs for the data directory, its page is opened (the browser gets the
one-time token in the URL, exchanged at once for a session cookie); otherwise a service is
started here, exactly as `baton serve --open` with the given options would, and runs until
SIGTERM or Ctrl-C.
"""

from __future__ import annotations

import argparse
import os
import webbrowser
from typing import Final

from baton.cli.commands import serve as serve_verb
from baton.cli.service_link import ServiceClient
from baton.runtime.runtime import data_dir_path
from baton.service.runtime_file import find_service

EXAMPLES: Final = """examples:
  baton inspect                        # open the running service's page, or start one
  baton inspect --port 8765            # start the service on a fixed port if none runs
  baton inspect --no-browser           # print the address instead of opening a browser
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``inspect`` verb."""
    parser = subparsers.add_parser(
        "inspect",
        help="open the inspector (the web page of baton serve), starting the service if needed",
        description=(
            "Open the inspector of the data directory's running service in a browser, or start "
            "the service (as `baton serve --open`) when none runs."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--data-dir", metavar="DIR", help="Baton's data directory (or BATON_HOME)")
    parser.add_argument(
        "--port", default="0", help="TCP port of a service started here (default: a free one)"
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="127.0.0.1 (default) or ::1 for a service started here"
    )
    parser.add_argument(
        "--no-browser",
        action="store_true",
        help="print the address (with its token on a terminal) instead of opening a browser",
    )
    parser.set_defaults(handler=run)


def serve_arguments(args: argparse.Namespace) -> argparse.Namespace:
    """`baton serve`'s arguments for the service this verb starts: its defaults, the given
    port, host and data directory, and ``--open`` unless ``--no-browser``."""
    parser = argparse.ArgumentParser(prog="baton", add_help=False)
    serve_verb.register(parser.add_subparsers())
    argv = ["serve", "--port", str(args.port), "--host", args.host]
    if args.data_dir is not None:
        argv += ["--data-dir", args.data_dir]
    if not args.no_browser:
        argv.append("--open")
    return parser.parse_args(argv)


def run(args: argparse.Namespace) -> int:
    """Handle `baton inspect`."""
    data_dir = data_dir_path(args.data_dir, os.environ)
    running = find_service(data_dir) if data_dir.is_dir() else None
    if running is None:
        started: int = serve_verb.run(serve_arguments(args))
        return started
    print(f"baton inspect: the service of {data_dir} runs at {running.url}/", flush=True)
    # A fresh login code for the URL (single-use, short-lived), never the API token.
    issued = ServiceClient(running).request("POST", "/api/v1/login-codes")
    with_code = f"{running.url}{issued['path']}"
    if args.no_browser:
        print(f"baton inspect: open {with_code} (good once, for five minutes)", flush=True)
        return 0
    webbrowser.open(with_code)
    return 0
