"""The flood benchmark's library clients as whole processes, for bench/suite.py to measure
(start-up, imports and the turn, like ``baton run``): ``sdk`` is the official ACP Python SDK
client, ``floor`` the plain loop that only reads and parses the frames (both from
bench/flood.py), on bench/flood_agent.py's N updates of D-byte deltas.

Usage: python bench/flood_clients.py sdk|floor N D
"""

from __future__ import annotations

import asyncio
import sys

from flood import floor_turn, sdk_turn


def main() -> None:
    """Run one turn of the client named on the command line."""
    client, updates, delta = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    if client == "sdk":
        asyncio.run(sdk_turn(updates, delta))
    elif client == "floor":
        floor_turn(updates, delta)
    else:
        raise SystemExit(f"unknown client {client!r}: sdk or floor")


if __name__ == "__main__":
    main()
