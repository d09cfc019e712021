"""The durability tap: the one interface through which a connection records every frame.

The connection awaits :meth:`Tap.record_inbound` for inbound frames *before* it acts on them
(skipped lines included, as a marker) and :meth:`Tap.record_outbound` for each outbound frame
*before* it is written. What the tap returns (a journal reference, in practice) is handed to
whoever receives the message. If the tap raises, the connection closes: no unrecorded message
gets through.

A tap chooses how it records internally: the journal's tap takes a run of streamed
notifications in one synchronous batch append when it can and falls back to awaited appends
when it cannot; the connection does not know or care.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

from baton.wire.jsonrpc import Message, Skipped, Violation

RefT = TypeVar("RefT")
RefT_co = TypeVar("RefT_co", covariant=True)

#: What an inbound frame is besides a valid message: a skipped line (``messages`` holds None)
#: or a violation (journaled with its kind).
Mark = Skipped | Violation | None


class Tap(Protocol[RefT_co]):
    """Records every frame at the boundary and returns a reference to each record."""

    async def record_inbound(
        self, raws: Sequence[bytes], messages: Sequence[Message | None], mark: Mark = None
    ) -> Sequence[RefT_co]:
        """Record inbound frames read together (``messages[i]`` parsed from ``raws[i]``; None
        for a skipped line, which comes alone with its ``mark``); return one reference per
        frame, in order, before any of them is acted on."""
        ...

    async def record_outbound(self, raw: bytes, message: Message) -> RefT_co:
        """Record an outbound frame before it is written (durably: it may change the agent's
        state); return its reference."""
        ...
