"""The agent's stdout, timestamped on its way to Baton (bench/serve_concurrency.py).

``python bench/stamp_relay.py STAMPS -- AGENT ARGV...`` starts the agent with this process's
stdin and stderr, copies its stdout to this process's stdout block by block as it arrives,
and for every ``agent_message_chunk`` whose text is ``chunk K`` with K a multiple of
:data:`SAMPLE_EVERY` appends ``SESSION K MONOTONIC_SECONDS`` to the file STAMPS, the time the
block holding it left the agent (read here) and went on to Baton. CLOCK_MONOTONIC is one
clock for every process of the machine, so the benchmark compares these times with the
moments its SSE clients receive the same chunks.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from typing import Final

#: Every how many chunks one is timestamped.
SAMPLE_EVERY: Final = 100
#: Bytes read from the agent at a time.
READ_BYTES: Final = 1 << 16
#: A sampled chunk in the agent's output: its session and number.
_CHUNK: Final = re.compile(
    rb'"sessionId":"([^"]+)","update":\{"sessionUpdate":"agent_message_chunk","content":\{"type":"text","text":"chunk (\d*00)\\n"'
)


def main() -> int:
    stamps_path, separator, *argv = sys.argv[1:]
    assert separator == "--" and argv
    child = subprocess.Popen(argv, stdout=subprocess.PIPE)
    assert child.stdout is not None
    source = child.stdout.fileno()
    out = sys.stdout.fileno()
    carry = b""
    with open(stamps_path, "a", buffering=1) as stamps:
        while True:
            block = os.read(source, READ_BYTES)
            if not block:
                break
            view = memoryview(block)
            while view:
                written = os.write(out, view)
                view = view[written:]
            now = time.monotonic()
            text = carry + block
            cut = text.rfind(b"\n") + 1
            found = _CHUNK.findall(text, 0, cut)
            carry = text[cut:]
            if found:
                stamps.write("".join(f"{s.decode()} {int(k)} {now:.6f}\n" for s, k in found))
    return child.wait()


if __name__ == "__main__":
    raise SystemExit(main())
