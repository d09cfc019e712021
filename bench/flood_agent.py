"""A minimal ACP agent for the flood benchmarks: answers initialize and session/new, and on
session/prompt writes N pre-serialized agent_message_chunk notifications, then end_turn.

Standalone (stdlib + orjson) so every client under test talks to exactly the same bytes.
Usage: flood_agent.py N [DELTA_BYTES [REPORT]]   (each delta's text padded to DELTA_BYTES, ~25
by default)

When REPORT (or, without it, the environment's ``BENCH_AGENT_REPORT``: Baton gives an agent
only its profile's environment, so a benchmark of ``baton run`` names the file on the command
line) names a file, the agent writes its own CPU seconds and the flood's wire bytes there
(``cpu_seconds wire_bytes``) after it answered the prompt, so a benchmark that measures a
client's whole process (children included) can subtract the agent's share.
"""

from __future__ import annotations

import os
import resource
import sys

import orjson

WRITE_SLICE = 1024 * 1024


def build_flood(session_id: str, count: int, delta_bytes: int = 0) -> bytes:
    """The N update lines, serialized once before the clock starts, into one buffer (orjson
    over-allocates each result, so keeping 200,000 of them would cost the agent ~900 MB)."""
    blob = bytearray()
    dumps = orjson.dumps
    for index in range(count):
        update = {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": session_id,
                "update": {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": _text(index, delta_bytes)},
                },
            },
        }
        blob += dumps(update, option=orjson.OPT_APPEND_NEWLINE)
    return bytes(blob)


def _text(index: int, delta_bytes: int) -> str:
    text = f"chunk {index} of the flood "
    if len(text) < delta_bytes:
        text += "lorem ipsum dolor sit amet " * (delta_bytes // 27 + 1)
        text = text[:delta_bytes]
    return text


def _report(wire_bytes: int) -> None:
    path = sys.argv[3] if len(sys.argv) > 3 else os.environ.get("BENCH_AGENT_REPORT")
    if path:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        with open(path, "w") as handle:
            handle.write(f"{usage.ru_utime + usage.ru_stime} {wire_bytes}\n")


def main() -> None:
    count = int(sys.argv[1])
    delta_bytes = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    session_id = "flood-session"
    flood = build_flood(session_id, count, delta_bytes)
    out = sys.stdout.buffer
    for raw in sys.stdin.buffer:
        if not raw.strip():
            continue
        message = orjson.loads(raw)
        method = message.get("method")
        if "id" not in message or method is None:
            continue
        if method == "initialize":
            result: object = {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}
        elif method == "session/new":
            result = {"sessionId": session_id}
        elif method == "session/prompt":
            view = memoryview(flood)
            for start in range(0, len(flood), WRITE_SLICE):
                out.write(view[start : start + WRITE_SLICE])
            result = {"stopReason": "end_turn"}
            out.write(orjson.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}))
            out.write(b"\n")
            out.flush()
            _report(len(flood))
            continue
        else:
            out.write(
                orjson.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": message["id"],
                        "error": {"code": -32601, "message": "no"},
                    }
                )
                + b"\n"
            )
            out.flush()
            continue
        out.write(orjson.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + b"\n")
        out.flush()


if __name__ == "__main__":
    main()
