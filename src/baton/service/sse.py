"""The Server-Sent Events response of a run's feed.

The stream is: what the client missed (a ``replay`` event with the store's record of the run
when ids were lost, then the retained frames after its ``Last-Event-ID``), then live frames
until the run ends (the stream closes after ``result``) or the client falls too far behind
(a ``dropped`` marker, then the close). Quiet streams carry a comment line every
:data:`~baton.service.limits.SSE_KEEPALIVE_SECONDS`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Final

from starlette.responses import StreamingResponse

from baton.service.feeds import RunFeed, Subscription
from baton.service.limits import SSE_KEEPALIVE_SECONDS

#: The comment line sent on a quiet stream.
KEEPALIVE_FRAME: Final = b": keepalive\n\n"
#: Bytes of queued frames joined into one write.
WRITE_BATCH_BYTES: Final = 256 * 1024
#: Response headers of every stream: never cached, never buffered by a proxy.
STREAM_HEADERS: Final = {"cache-control": "no-store", "x-accel-buffering": "no"}


async def _frames(
    first: Sequence[bytes], feed: RunFeed | None, subscription: Subscription | None
) -> AsyncIterator[bytes]:
    try:
        for ready in first:
            yield ready
        if subscription is None:
            return
        while True:
            try:
                frame: bytes | None = await asyncio.wait_for(
                    subscription.queue.get(), SSE_KEEPALIVE_SECONDS
                )
            except TimeoutError:
                yield KEEPALIVE_FRAME
                continue
            if frame is None:
                return
            subscription.taken(frame)
            batch = [frame]
            size = len(frame)
            # Frames already queued go out in one write (fewer sends, fewer wakeups).
            while size < WRITE_BATCH_BYTES and not subscription.queue.empty():
                more = subscription.queue.get_nowait()
                if more is None:
                    yield b"".join(batch)
                    return
                subscription.taken(more)
                batch.append(more)
                size += len(more)
            yield b"".join(batch)
    finally:
        if feed is not None and subscription is not None:
            feed.unsubscribe(subscription)


def event_stream(
    first: Sequence[bytes], feed: RunFeed | None, subscription: Subscription | None
) -> StreamingResponse:
    """The response: ``first`` frames, then the subscription's until its end."""
    return StreamingResponse(
        _frames(first, feed, subscription),
        media_type="text/event-stream",
        headers=STREAM_HEADERS,
    )
