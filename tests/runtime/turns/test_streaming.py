"""The per-run stream buffer at its bounds: flush boundaries, transitions, live parts, the
runtime-wide memory bound, bounded segments, and credentials split across deltas."""

from __future__ import annotations

from baton.redaction import SecretValues
from baton.runtime.turns.streaming import (
    MAX_BUFFERED_OUTPUT_GROUPS,
    MAX_LIVE_PARTS_PER_RUN,
    STREAM_OUTPUT_FLUSH_BYTES,
    STREAM_OUTPUT_FLUSH_SECONDS,
    STREAM_TEXT_SEGMENT_BYTES,
    Item,
    OutputGroup,
    RunBuffer,
    StreamMemory,
)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def make(memory: StreamMemory | None = None, secrets: SecretValues | None = None):  # type: ignore[no-untyped-def]
    clock = Clock()
    items: list[Item] = []
    flushes: list[list[OutputGroup]] = []
    buffer = RunBuffer(
        "run-1",
        items=items.extend,
        output=flushes.append,
        now=clock,
        memory=memory or StreamMemory(),
        secrets=secrets,
    )
    return buffer, clock, items, flushes


def published(flushes: list[list[OutputGroup]]) -> str:
    return "".join(group.text for batch in flushes for group in batch)


def test_512_deltas_are_one_item_and_coalesced_output() -> None:
    buffer, _clock, items, flushes = make()
    for index in range(512):
        buffer.add_text("agent_message_chunk", f"word{index} ")
    assert flushes == [], "nothing is published before a boundary"
    buffer.close()
    assert len(items) == 1
    assert items[0].coalesced_events == 512
    assert items[0].content["text"] == "".join(f"word{i} " for i in range(512))
    assert published(flushes) == items[0].content["text"]
    assert sum(group.events for batch in flushes for group in batch) == 512


def test_output_is_published_at_the_time_boundary() -> None:
    buffer, clock, _items, flushes = make()
    buffer.add_text("agent_message_chunk", "a ")
    assert flushes == []
    clock.now += STREAM_OUTPUT_FLUSH_SECONDS
    buffer.add_text("agent_message_chunk", "b ")
    assert published(flushes) == "a b "


def test_output_is_published_at_the_byte_boundary() -> None:
    buffer, _clock, _items, flushes = make()
    chunk = "x" * 1023 + " "
    for _ in range(STREAM_OUTPUT_FLUSH_BYTES // len(chunk) - 1):
        buffer.add_text("agent_message_chunk", chunk)
    assert flushes == []
    buffer.add_text("agent_message_chunk", chunk)
    assert len(flushes) == 1


def test_alternating_parts_force_a_flush_at_the_transition_bound() -> None:
    buffer, _clock, _items, flushes = make()
    kinds = ("agent_message_chunk", "agent_thought_chunk")
    for index in range(MAX_BUFFERED_OUTPUT_GROUPS - 1):
        buffer.add_text(kinds[index % 2], "t ")
    assert flushes == []
    buffer.add_text(kinds[(MAX_BUFFERED_OUTPUT_GROUPS - 1) % 2], "t ")
    assert len(flushes) == 1
    assert [g.kind for g in flushes[0]][:4] == ["text", "thought", "text", "thought"]


def test_at_most_eight_live_parts_per_run() -> None:
    buffer, _clock, items, _flushes = make()
    for index in range(MAX_LIVE_PARTS_PER_RUN):
        buffer.add_text("agent_message_chunk", f"part {index} ", message_id=f"m{index}")
    assert items == []
    buffer.add_text("agent_message_chunk", "ninth ", message_id="m-ninth")
    assert [item.content["text"] for item in items] == ["part 0 "]
    assert buffer.stats.evictions == 1


def test_the_runtime_wide_bound_materializes_the_oldest_part_anywhere() -> None:
    memory = StreamMemory(limit=4096)
    first, _c1, first_items, _f1 = make(memory)
    second, _c2, second_items, _f2 = make(memory)
    first.add_text("agent_message_chunk", "a" * 3000 + " ")
    first.flush_output()
    second.add_text("agent_message_chunk", "b" * 3000 + " ")
    second.flush_output()
    assert [i.content["text"][:1] for i in first_items] == ["a"], "the oldest part made room"
    assert second_items == []
    assert memory.used <= memory.limit


def test_text_is_kept_in_bounded_segments() -> None:
    buffer, _clock, items, _flushes = make()
    for _ in range(3000):
        buffer.add_text("agent_message_chunk", "tiny ")
    part = next(iter(buffer._parts.values()))
    buffer.flush_output()
    assert all(len(segment) <= STREAM_TEXT_SEGMENT_BYTES for segment in part.segments)
    buffer.close()
    assert items[0].content["text"] == "tiny " * 3000


def test_a_secret_split_across_deltas_never_reaches_output_or_items() -> None:
    secret = "split-secret-Ty6Ui0Op4As8Df2Gh6Jk0"
    buffer, clock, items, flushes = make(secrets=SecretValues([secret]))
    for cut in range(1, len(secret)):
        buffer.add_text("agent_message_chunk", f"key {secret[:cut]}")
        clock.now += STREAM_OUTPUT_FLUSH_SECONDS
        buffer.add_text("agent_message_chunk", f"{secret[cut:]} done ")
    buffer.close()
    assert secret not in published(flushes)
    assert secret not in items[0].content["text"]


def test_an_unresolved_prefix_at_the_end_becomes_a_marker() -> None:
    secret = "split-secret-Ty6Ui0Op4As8Df2Gh6Jk0"
    buffer, _clock, items, flushes = make(secrets=SecretValues([secret]))
    buffer.add_text("agent_message_chunk", "the key is " + secret[:12])
    buffer.close()
    assert secret[:12] not in items[0].content["text"]
    assert "REDACTED" in items[0].content["text"]
    assert secret[:12] not in published(flushes)


def events_by_kind(flushes: list[list[OutputGroup]]) -> list[tuple[str, str, int]]:
    return [(group.kind, group.text, group.events) for batch in flushes for group in batch]


def test_only_consecutive_deltas_merge_even_when_the_redactor_holds_text() -> None:
    # "E1" ends in a word the redactor holds (it could start a key shape): another part's
    # output must not overtake it (issue 16 item 10).
    buffer, clock, items, flushes = make()
    buffer.add_text("agent_message_chunk", "E1")
    clock.now += STREAM_OUTPUT_FLUSH_SECONDS
    buffer.add_text("agent_thought_chunk", "T1")
    clock.now += STREAM_OUTPUT_FLUSH_SECONDS
    buffer.add_text("agent_message_chunk", "E2")
    buffer.close()
    assert events_by_kind(flushes) == [("text", "E1", 1), ("thought", "T1", 1), ("text", "E2", 1)]
    # The part goes on: one item per part, whose count is the sum of its events' counts.
    assert [(i.kind, i.content["text"], i.coalesced_events) for i in items] == [
        ("text", "E1E2", 2),
        ("thought", "T1", 1),
    ]


def test_within_one_flush_the_order_of_parts_is_kept() -> None:
    buffer, _clock, _items, flushes = make()
    buffer.add_text("agent_message_chunk", "E1")
    buffer.add_text("agent_thought_chunk", "T1")
    buffer.add_text("agent_message_chunk", "E2")
    buffer.close()
    assert events_by_kind(flushes) == [("text", "E1", 1), ("thought", "T1", 1), ("text", "E2", 1)]


def test_held_deltas_are_counted_by_the_event_that_publishes_their_text() -> None:
    buffer, clock, items, flushes = make()
    for word in ("al", "pha", "bet"):
        buffer.add_text("agent_message_chunk", word)
        clock.now += STREAM_OUTPUT_FLUSH_SECONDS
    buffer.close()
    assert events_by_kind(flushes) == [("text", "alphabet", 3)]
    assert items[0].coalesced_events == 3


def test_a_release_before_another_event_publishes_the_held_text() -> None:
    buffer, _clock, _items, flushes = make()
    buffer.add_text("agent_message_chunk", "before")
    buffer.flush_output()
    assert flushes == [], "a word in progress is held"
    buffer.flush_output(release=True)
    assert events_by_kind(flushes) == [("text", "before", 1)]


def test_a_key_shape_cut_by_another_part_is_a_marker_not_provider_text() -> None:
    buffer, clock, items, flushes = make()
    buffer.add_text("agent_message_chunk", "token ghp_ABCDEFGHIJ")
    clock.now += STREAM_OUTPUT_FLUSH_SECONDS
    buffer.add_text("agent_thought_chunk", "hmm ")
    buffer.close()
    assert "ghp_ABCDEFGHIJ" not in published(flushes)
    assert "ghp_ABCDEFGHIJ" not in items[0].content["text"]
