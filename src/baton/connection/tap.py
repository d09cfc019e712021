"""The durability tap: an awaited hook that sees every frame at the boundary.

The connection awaits ``tap.record`` for each inbound frame *before* it is dispatched (skipped
lines included, as a marker) and for each outbound frame *before* it is written. Whatever the tap
returns (a journal reference, in practice) is handed to the handler that receives the message.
If the tap raises, the connection closes: no unrecorded message gets through.

A tap may also offer ``record_nowait(raw, message) -> object | None`` for valid inbound
notifications: it records the frame synchronously and returns the reference, or returns None
having recorded nothing, and the connection then awaits ``record`` as usual. It saves the
coroutines of the awaited path on the bulk of a turn (the journal's tap implements it).

And ``record_batch_nowait(raws, messages) -> Sequence[object] | None`` for consecutive valid
inbound notifications read together: it records a leading part of them (all, or up to one it
cannot take at once) and returns their references in order, before any of them is
dispatched; or it records none and returns None. The connection records a frame the tap did
not take on its own (then offers the rest again), and after a None records the rest one by
one, each before it is dispatched.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from baton.wire.jsonrpc import Message, Skipped, Violation

Direction = Literal["inbound", "outbound"]


@dataclass(slots=True)  # not frozen: a frozen init costs 3x as much, once per frame
class TapFrame:
    """One frame at the boundary. Exactly one of ``message`` and ``skipped`` is set."""

    direction: Direction
    raw: bytes
    message: Message | None
    skipped: Skipped | None = None
    violation: Violation | None = None


class Tap(Protocol):
    """Receives every frame at the boundary; may return a reference to the durable record."""

    async def record(self, frame: TapFrame) -> object: ...
