"""Flood benchmark: one turn of 200,000 agent_message_chunk notifications over a real OS pipe.

Three clients read the same agent's bytes in the same run:
- Baton's connection (baton.connection.Connection, no tap);
- the official ACP Python SDK client (agent-client-protocol, pinned, a bench-only dependency);
- a floor: a plain loop that reads the lines and JSON-decodes each one.

Each is timed from sending session/prompt to having its response, after every update was
received. The last line is ``ratio_vs_sdk=X ratio_vs_floor=Y`` (SDK time / Baton time; Baton time
/ floor time). Targets: ratio_vs_sdk >= 10, ratio_vs_floor <= 2.

Usage: python bench/flood.py [--updates N] [--repeat R]   (the best of R runs is reported)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson

AGENT = str(Path(__file__).with_name("flood_agent.py"))
#: The pipe reader's buffer for the asyncio clients: large enough that the pipe never stalls.
STREAM_LIMIT = 4 * 1024 * 1024
PROMPT = [{"type": "text", "text": "flood"}]


async def baton_turn(updates: int) -> float:
    from baton.connection import Connection

    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        AGENT,
        str(updates),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        limit=STREAM_LIMIT,
    )
    assert proc.stdin is not None and proc.stdout is not None
    conn = Connection(proc.stdout, proc.stdin)
    seen = 0

    def on_update(message: dict[str, Any], ref: object) -> None:
        nonlocal seen
        seen += 1

    conn.on_notification("session/update", on_update)
    conn.start()
    await conn.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    session = await conn.request("session/new", {"cwd": os.getcwd(), "mcpServers": []})
    started = time.perf_counter()
    request_id = await conn.send_request(
        "session/prompt", {"sessionId": session["sessionId"], "prompt": PROMPT}
    )
    result = await conn.await_response(request_id)
    elapsed = time.perf_counter() - started
    assert result["stopReason"] == "end_turn" and seen == updates, (result, seen)
    await conn.close()
    proc.kill()
    await proc.wait()
    return elapsed


async def sdk_turn(updates: int, delta_bytes: int = 0) -> float:
    import acp

    seen = 0

    class CountingClient:
        async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
            nonlocal seen
            seen += 1

        async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError("the flood agent never asks")

    async with acp.spawn_agent_process(
        CountingClient(),
        sys.executable,
        AGENT,
        str(updates),
        str(delta_bytes),
        transport_kwargs={"limit": STREAM_LIMIT},
    ) as (conn, _proc):
        await conn.initialize(protocol_version=1)
        session = await conn.new_session(cwd=os.getcwd(), mcp_servers=[])
        started = time.perf_counter()
        result = await conn.prompt(session_id=session.session_id, prompt=[acp.text_block("flood")])
        elapsed = time.perf_counter() - started
    assert result.stop_reason == "end_turn" and seen == updates, (result, seen)
    return elapsed


def floor_turn(updates: int, delta_bytes: int = 0) -> float:
    proc = subprocess.Popen(
        [sys.executable, AGENT, str(updates), str(delta_bytes)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        bufsize=STREAM_LIMIT,
    )
    assert proc.stdin is not None and proc.stdout is not None

    def ask(request_id: int, method: str, params: dict[str, Any]) -> None:
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        proc.stdin.write(orjson.dumps(message) + b"\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]

    ask(1, "initialize", {"protocolVersion": 1})
    proc.stdout.readline()
    ask(2, "session/new", {"cwd": os.getcwd(), "mcpServers": []})
    session = orjson.loads(proc.stdout.readline())["result"]["sessionId"]
    started = time.perf_counter()
    ask(3, "session/prompt", {"sessionId": session, "prompt": PROMPT})
    seen = 0
    loads = orjson.loads
    for line in proc.stdout:
        message = loads(line)
        if "id" in message:
            break
        seen += 1
    elapsed = time.perf_counter() - started
    assert seen == updates
    proc.stdin.close()  # EOF: the agent leaves its loop (and writes its report, if asked)
    proc.wait()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    times: dict[str, float] = {}
    for _ in range(args.repeat):
        for name, run in (
            ("floor", lambda: floor_turn(args.updates)),
            ("baton", lambda: asyncio.run(baton_turn(args.updates))),
            ("sdk", lambda: asyncio.run(sdk_turn(args.updates))),
        ):
            elapsed = run()
            times[name] = min(times.get(name, float("inf")), elapsed)
    print(f"updates={args.updates} (best of {args.repeat})")
    for name in ("floor", "baton", "sdk"):
        rate = args.updates / times[name]
        print(f"{name:>5}: {times[name]:.3f} s  ({rate:,.0f} updates/s)")
    print(
        f"ratio_vs_sdk={times['sdk'] / times['baton']:.2f} ratio_vs_floor={times['baton'] / times['floor']:.2f}"
    )


if __name__ == "__main__":
    main()
