"""Property: split a stream anywhere, cancel reads at any moment, get out exactly what went in."""

from __future__ import annotations

import asyncio
import itertools
import random

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from baton.connection.reader import FrameReader


class ChunkedReader:
    """Delivers a byte string in given pieces, yielding to the loop a given number of times
    before each piece (the moments at which a read can be cancelled)."""

    def __init__(self, data: bytes, cuts: list[int], pauses: list[int]) -> None:
        bounds = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
        self.pieces = [data[a:b] for a, b in itertools.pairwise(bounds)]
        self.pauses = pauses or [0]
        self.index = 0
        self.delivered = 0

    async def read(self, n: int = -1) -> bytes:
        for _ in range(self.pauses[self.index % len(self.pauses)]):
            await asyncio.sleep(0)
        if self.index >= len(self.pieces):
            return b""
        piece = self.pieces[self.index]
        if 0 < n < len(piece):
            self.pieces[self.index] = piece[n:]
            piece = piece[:n]
        else:
            self.index += 1
        self.delivered += len(piece)
        return piece


frames_strategy = st.lists(
    st.dictionaries(
        st.text(min_size=1, max_size=5),
        st.one_of(
            st.integers(min_value=-(2**63), max_value=2**63 - 1),
            st.text(max_size=40),
            st.booleans(),
            st.none(),
        ),
        max_size=4,
    ),
    min_size=1,
    max_size=30,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    frames=frames_strategy,
    cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=40),
    pauses=st.lists(st.integers(min_value=0, max_value=3), max_size=10),
    cancel_seed=st.integers(min_value=0, max_value=2**32),
    crlf=st.booleans(),
)
def test_cancelled_reads_lose_nothing(
    frames: list[dict[str, object]],
    cuts: list[int],
    pauses: list[int],
    cancel_seed: int,
    crlf: bool,
) -> None:
    ending = b"\r\n" if crlf else b"\n"
    encoded = [orjson.dumps(frame) for frame in frames]
    stream = b"".join(line + ending for line in encoded)
    rng = random.Random(cancel_seed)

    async def consume() -> list[bytes]:
        reader = FrameReader(
            ChunkedReader(stream, cuts, pauses), max_frame_bytes=1024 * 1024, chunk=7
        )
        out: list[bytes] = []
        while True:
            task = asyncio.ensure_future(reader.read_line())
            # Cancel at a random number of loop iterations into the read.
            for _ in range(rng.randint(0, 4)):
                if task.done():
                    break
                await asyncio.sleep(0)
            if not task.done() and rng.random() < 0.5:
                task.cancel()
                try:
                    await task
                except asyncio.CancelledError:
                    continue
                # The read finished just before the cancel landed: keep its line.
            line = await task
            if line is None:
                return out
            out.append(line)

    assert asyncio.run(consume()) == encoded
