"""Child process of test_crash.py: appends to a journal until it is killed.

Usage: ``python crash_child.py JOURNAL_DIR SEED``. Prints to stdout (unbuffered, one line per
event): ``open N`` once the journal is open at last sequence N, then ``S SEQ SHA256`` for every
record it knows to be durable (an outbound append returned, or a flush covered it). Journal
writes go through a short-write shim that simulates a slow disk.
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
import time
from pathlib import Path

from baton.journal import Journal, JournalLimits

#: Small segments so kills also land around rotations; a large total so nothing is pruned.
LIMITS = JournalLimits(
    max_segment_bytes=48 * 1024, max_total_bytes=1 << 30, sync_interval_seconds=0.005
)
#: Mostly small records; now and then a large one, which a SIGKILL can cut mid-write.
PAYLOAD_SIZES = (10, 200, 2_000, 30_000, 10, 200, 2_000, 1_500_000)


#: A slow disk: every journal write stores at most this many bytes, then pauses, so kills
#: often land inside a record line (and the writer's short-write loop is exercised).
SHORT_WRITE_BYTES = 4096
SHORT_WRITE_PAUSE_SECONDS = 0.0002
_real_write = os.write


def _short_writev(fd: int, buffers: list[bytes | memoryview]) -> int:
    """The journal's ``writev``, storing at most SHORT_WRITE_BYTES of the buffers' bytes."""
    data = b"".join(bytes(buffer) for buffer in buffers)
    written = _real_write(fd, data[:SHORT_WRITE_BYTES])
    time.sleep(SHORT_WRITE_PAUSE_SECONDS)
    return written


def _say(line: str) -> None:
    _real_write(1, (line + "\n").encode())


async def main(directory: Path, seed: int) -> None:
    os.writev = _short_writev  # type: ignore[assignment]
    journal = Journal(directory)
    server = await journal.open_server("crash-1", limits=LIMITS)
    _say(f"open {server.last_sequence}")
    rng = random.Random(seed)
    pending: dict[int, str] = {}
    while True:
        pad = "z" * rng.choice(PAYLOAD_SIZES)
        message = {"jsonrpc": "2.0", "method": "_test/fill", "params": {"pad": pad}}
        direction = "outbound" if rng.random() < 0.2 else "inbound"
        ref = await server.append(direction, message, input_bytes=len(pad) + 64)
        pending[ref.sequence] = ref.sha256
        if direction == "inbound" and rng.random() < 0.1:
            await server.flush()
        durable = server.synced_sequence
        for sequence in sorted(s for s in pending if s <= durable):
            _say(f"S {sequence} {pending.pop(sequence)}")


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), int(sys.argv[2])))
