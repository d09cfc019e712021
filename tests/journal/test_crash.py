"""Crash safety: SIGKILL an appending process at random points, reopen, check everything.

Each round starts a child that reopens the same journal and appends (inbound batched, outbound
synced, with rotations) while reporting every record it knows is durable; the parent kills it
with SIGKILL after a random delay, then reopens the journal: the partial last line (if any) is
repaired, every reported record must be there with its hash, the sequence chain must be intact
from 1, and the next child must continue exactly after the last complete record.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sys
from pathlib import Path

from baton.journal import Journal

CHILD = Path(__file__).with_name("crash_child.py")
ROUNDS = 20
WAIT = 30.0


async def _round(directory: Path, seed: int, rng: random.Random) -> tuple[int, dict[int, str]]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(CHILD),
        str(directory),
        str(seed),
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert process.stdout is not None
    first = await asyncio.wait_for(process.stdout.readline(), WAIT)
    assert first.startswith(b"open "), first
    opened_at = int(first.split()[1])
    await asyncio.sleep(rng.uniform(0.005, 0.15))
    process.send_signal(signal.SIGKILL)
    rest = await asyncio.wait_for(process.stdout.read(), WAIT)
    await asyncio.wait_for(process.wait(), WAIT)
    assert process.returncode == -signal.SIGKILL
    durable: dict[int, str] = {}
    for line in rest.decode().splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "S":  # the last line may be cut short by the kill
            durable[int(parts[1])] = parts[2]
    return opened_at, durable


async def test_sigkill_at_random_points_loses_nothing_synced(tmp_path: Path) -> None:
    rng = random.Random(20240517)
    journal = Journal(tmp_path / "journals")
    expected_open = 0
    all_durable: dict[int, str] = {}
    repaired_rounds = 0
    for round_number in range(ROUNDS):
        opened_at, durable = await _round(journal.directory, round_number, rng)
        assert opened_at == expected_open, f"round {round_number} did not continue the sequence"
        all_durable.update(durable)

        server = await journal.open_server("crash-1")  # repairs a torn last line
        repaired_rounds += server.repaired_bytes > 0
        last = server.last_sequence
        await server.close()

        report = journal.verify("crash-1")  # every hash, the chain from 1, no partial tail
        assert report.first_sequence in (None, 1)
        assert report.last_sequence == (last or None)
        assert report.partial_tail_bytes == 0
        assert not durable or max(durable) <= last
        expected_open = last

    hashes = {record.sequence: record.sha256 for record in journal.records("crash-1")}
    assert all_durable, "the children reported no durable record at all"
    for sequence, digest in all_durable.items():
        assert hashes.get(sequence) == digest, f"durable record {sequence} was lost"
    # The child's slow-disk shim makes about half the kills land inside a record line: the
    # repair path really ran (twenty rounds without one would mean the test tests nothing).
    assert repaired_rounds >= 1
