"""A run's feed: numbered frames, bounded subscriber queues, the drop marker."""

from __future__ import annotations

from baton.runtime.turns.events import RunEvent
from baton.service.feeds import DROPPED_EVENT, QueueBounds, RunFeed
from baton.service.limits import FEED_EVENTS, SUBSCRIBER_QUEUE_EVENTS


def text(n: int) -> RunEvent:
    return RunEvent("text", "run-1", {"text": f"delta {n}"})


def test_a_burst_as_large_as_the_feed_keeps_a_subscriber_that_has_not_run_yet() -> None:
    # One read of the agent's output publishes many events before any SSE writer runs: a
    # client that keeps up must not be dropped for that.
    assert SUBSCRIBER_QUEUE_EVENTS == FEED_EVENTS
    feed = RunFeed("run-1", QueueBounds())
    _, gap, subscription = feed.subscribe(0)
    assert subscription is not None and not gap
    for n in range(SUBSCRIBER_QUEUE_EVENTS):
        feed.publish(text(n))
    assert not subscription.dropped and feed.dropped == 0
    assert subscription.queue.qsize() == SUBSCRIBER_QUEUE_EVENTS


def test_the_event_bound_drops_at_cap_plus_one_with_a_marker() -> None:
    feed = RunFeed("run-1", QueueBounds(events=3, bytes=1 << 20))
    _, _, subscription = feed.subscribe(0)
    assert subscription is not None
    for n in range(3):  # cap: all kept
        feed.publish(text(n))
    assert not subscription.dropped
    feed.publish(text(3))  # cap + 1: dropped, queue replaced by the marker and the end
    assert subscription.dropped and feed.dropped == 1
    marker = subscription.queue.get_nowait()
    assert marker is not None and f"event: {DROPPED_EVENT}".encode() in marker
    assert subscription.queue.get_nowait() is None
    assert subscription not in feed.subscribers
    feed.publish(text(4))  # the run goes on without it
    assert feed.last_id == 5


def test_the_byte_bound_drops_a_subscriber_that_lags_in_bytes() -> None:
    probe = RunFeed("run-1", QueueBounds())
    probe.publish(text(0))
    one = len(probe.frames[0][1])
    feed = RunFeed("run-1", QueueBounds(events=1000, bytes=2 * one))
    _, _, subscription = feed.subscribe(0)
    assert subscription is not None
    feed.publish(text(0))
    feed.publish(text(1))  # exactly the byte bound
    assert not subscription.dropped
    feed.publish(text(2))
    assert subscription.dropped


def test_a_runs_early_events_wait_for_its_handle_then_reach_its_feed_in_order() -> None:
    # The runtime publishes run_started before start() returns the handle: the sink holds it
    # and opens nothing until the handle names the run (no id is read from an event).
    from baton.service.feeds import FeedBoard
    from baton.service.launcher import FeedSink, RunLauncher

    board = FeedBoard()
    launcher = RunLauncher(None, board)  # type: ignore[arg-type]
    results: list[RunEvent] = []
    launcher.on_result.append(results.append)
    sink = FeedSink(launcher)
    sink(RunEvent("run_started", "run-1", {}))
    sink(text(0))
    assert board.get("run-1") is None
    feed = board.open("run-1")
    sink.bind(feed)
    sink(RunEvent("result", "run-1", {"status": "COMPLETED"}))
    frames, _gap, _sub = feed.subscribe(0)
    kinds = [frame.split(b"\n", 2)[1] for frame in frames]
    assert kinds == [b"event: run_started", b"event: text", b"event: result"]
    assert [event.type for event in results] == ["result"]
