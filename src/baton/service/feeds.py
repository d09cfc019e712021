"""Each run's event feed: numbered events, a bounded memory of them, bounded subscribers.

A run's events (the same :class:`~baton.runtime.turns.events.RunEvent` objects `baton run
--json` prints) are numbered 1, 2, 3... in the order the runtime emitted them and encoded once
as Server-Sent Event frames (``id``, ``event`` = the type, ``data`` = the JSON object). The feed
keeps its newest :data:`~baton.service.limits.FEED_EVENTS` frames (and at most
:data:`~baton.service.limits.FEED_BYTES`) so a client reconnecting with ``Last-Event-ID`` gets
exactly what it missed; an id older than that is a *gap*, which the SSE route fills from the
store.

Publishing never waits: each subscriber has a queue bounded in events and bytes, and a
subscriber whose queue is full is dropped on the spot (its queue is cleared and replaced by a
``dropped`` marker and the end of its stream). A slow client therefore costs the run nothing;
it reconnects with the last id it received.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Any, Final

import orjson

from baton.runtime.turns.events import RunEvent
from baton.service.limits import (
    FEED_BYTES,
    FEED_EVENTS,
    FINISHED_FEEDS,
    SUBSCRIBER_QUEUE_BYTES,
    SUBSCRIBER_QUEUE_EVENTS,
)

#: The event type of the marker a dropped subscriber gets last.
DROPPED_EVENT: Final = "dropped"


def sse_frame(data: dict[str, Any], *, event: str, event_id: int | None = None) -> bytes:
    """One Server-Sent Event frame (compact JSON on one ``data`` line)."""
    head = b"" if event_id is None else b"id: %d\n" % event_id
    return head + b"event: " + event.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"


@dataclass(frozen=True)
class QueueBounds:
    """How far one subscriber may fall behind before it is dropped."""

    events: int = SUBSCRIBER_QUEUE_EVENTS
    bytes: int = SUBSCRIBER_QUEUE_BYTES


@dataclass(eq=False)
class Subscription:
    """One SSE client's queue of frames; ``None`` ends its stream."""

    bounds: QueueBounds
    queue: asyncio.Queue[bytes | None] = field(default_factory=asyncio.Queue)
    queued_bytes: int = 0
    dropped: bool = False
    #: Whether this client may answer the run's questions (False: a CLI without a terminal
    #: that follows the run it sent, ``?answers=none``): see :meth:`RunFeed.answering`.
    answers: bool = True

    def offer(self, frame: bytes) -> bool:
        """Queue ``frame``; False when the subscriber is too far behind (not queued)."""
        if (
            self.queue.qsize() >= self.bounds.events
            or self.queued_bytes + len(frame) > self.bounds.bytes
        ):
            return False
        self.queue.put_nowait(frame)
        self.queued_bytes += len(frame)
        return True

    def taken(self, frame: bytes) -> None:
        """Account for ``frame`` leaving the queue (written to the client)."""
        self.queued_bytes -= len(frame)

    def drop(self, marker: bytes) -> None:
        """Replace everything queued by ``marker`` and the end of the stream."""
        self.dropped = True
        while not self.queue.empty():
            self.queue.get_nowait()
        self.queued_bytes = 0
        self.queue.put_nowait(marker)
        self.queue.put_nowait(None)

    def end(self) -> None:
        """The run ended: the stream ends after what is queued."""
        self.queue.put_nowait(None)


class RunFeed:
    """One run's numbered events and its live subscribers."""

    def __init__(self, run_id: str, bounds: QueueBounds) -> None:
        self.run_id = run_id
        self.bounds = bounds
        self.frames: deque[tuple[int, bytes]] = deque()
        self.frame_bytes = 0
        self.last_id = 0
        self.finished = False
        self.subscribers: set[Subscription] = set()
        #: Subscribers dropped for falling behind (for the API's counters and the benchmark).
        self.dropped = 0

    @property
    def first_id(self) -> int:
        """The oldest id still held (``last_id + 1`` when none is)."""
        return self.frames[0][0] if self.frames else self.last_id + 1

    def publish(self, event: RunEvent) -> int:
        """Number, keep and fan out one event; never waits. Returns its id."""
        self.last_id += 1
        frame = sse_frame(event.to_dict(), event=event.type, event_id=self.last_id)
        self.frames.append((self.last_id, frame))
        self.frame_bytes += len(frame)
        while len(self.frames) > FEED_EVENTS or (
            self.frame_bytes > FEED_BYTES and len(self.frames) > 1
        ):
            _, old = self.frames.popleft()
            self.frame_bytes -= len(old)
        for subscriber in list(self.subscribers):
            if not subscriber.offer(frame):
                self.subscribers.discard(subscriber)
                self.dropped += 1
                marker = {
                    "type": DROPPED_EVENT,
                    "runId": self.run_id,
                    "reason": "the client fell too far behind; reconnect with Last-Event-ID",
                }
                subscriber.drop(sse_frame(marker, event=DROPPED_EVENT))
        return self.last_id

    def finish(self) -> None:
        """The run ended: every subscriber's stream ends after its queue."""
        self.finished = True
        for subscriber in self.subscribers:
            subscriber.end()
        self.subscribers.clear()

    def subscribe(
        self, after: int, *, answers: bool = True
    ) -> tuple[list[bytes], bool, Subscription | None]:
        """The frames after id ``after``, whether ids between were lost (a gap: the caller
        fills it from the store), and a live subscription (None once the run finished);
        ``answers`` False: the subscriber says it cannot answer the run's questions."""
        gap = after + 1 < self.first_id
        backlog = [frame for event_id, frame in self.frames if event_id > after]
        if self.finished:
            return backlog, gap, None
        subscription = Subscription(self.bounds, answers=answers)
        self.subscribers.add(subscription)
        return backlog, gap, subscription

    def answering(self) -> int:
        """How many live subscribers could answer the run's questions (an inspector's run
        page, an API client following the run): those that did not say ``?answers=none``."""
        return sum(1 for subscriber in self.subscribers if subscriber.answers)

    def unsubscribe(self, subscription: Subscription) -> None:
        """Forget a subscriber whose client went away."""
        self.subscribers.discard(subscription)


class FeedBoard:
    """The feeds of the runs this service started: live ones, and the newest finished."""

    def __init__(self, bounds: QueueBounds | None = None) -> None:
        self.bounds = bounds or QueueBounds()
        self.live: dict[str, RunFeed] = {}
        self.finished: OrderedDict[str, RunFeed] = OrderedDict()

    def open(self, run_id: str) -> RunFeed:
        """A new live feed for ``run_id``."""
        feed = RunFeed(run_id, self.bounds)
        self.live[run_id] = feed
        return feed

    def close(self, feed: RunFeed) -> None:
        """``feed``'s run ended: keep it among the newest finished."""
        feed.finish()
        self.live.pop(feed.run_id, None)
        self.finished[feed.run_id] = feed
        while len(self.finished) > FINISHED_FEEDS:
            self.finished.popitem(last=False)

    def get(self, run_id: str) -> RunFeed | None:
        """The feed of ``run_id`` when this service still holds it."""
        return self.live.get(run_id) or self.finished.get(run_id)
