"""``RunBuffer.add_texts`` is ``add_text`` of each delta in order: the same published groups,
items, stats, memory accounting, flush boundaries and evictions, whatever the batching."""

from __future__ import annotations

from dataclasses import astuple, dataclass, field
from itertools import pairwise
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from baton.redaction import SecretValues
from baton.runtime.turns.streaming import (
    STREAM_OUTPUT_FLUSH_BYTES,
    STREAM_OUTPUT_FLUSH_SECONDS,
    TEXT_UPDATES,
    Item,
    OutputGroup,
    RunBuffer,
    StreamMemory,
)

SECRET = "split-secret-Ty6Ui0Op4As8Df2Gh6Jk0"
SECRETS = SecretValues([SECRET])
MESSAGE = "agent_message_chunk"


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@dataclass
class World:
    """Two run buffers sharing one runtime-wide stream memory, on one clock."""

    limit: int
    clock: Clock = field(default_factory=Clock)
    items: list[list[Item]] = field(default_factory=lambda: [[], []])
    flushes: list[list[list[OutputGroup]]] = field(default_factory=lambda: [[], []])

    def __post_init__(self) -> None:
        self.memory = StreamMemory(limit=self.limit)
        self.buffers = [
            RunBuffer(
                f"run-{index}",
                items=self.items[index].extend,
                output=self.flushes[index].append,
                now=self.clock,
                memory=self.memory,
                secrets=SECRETS,
            )
            for index in range(2)
        ]

    def state(self) -> Any:
        """Everything observable, plus what is pending (groups, bytes) and the memory used."""
        pending = []
        for buffer in self.buffers:
            groups = [astuple(group) for group in buffer._pending]
            if groups:  # the last group's text still has its appended tail apart
                kind, part, text, events = groups[-1]
                groups[-1] = (kind, part, text + "".join(buffer._tail), events)
            pending.append((groups, buffer._pending_bytes, list(buffer._parts)))
        return (
            [[[astuple(g) for g in batch] for batch in flushes] for flushes in self.flushes],
            [[astuple(item) for item in items] for items in self.items],
            [astuple(buffer.stats) for buffer in self.buffers],
            self.memory.used,
            pending,
        )


# One step: ("feed", buffer, update kind, messageId, chunks of deltas, clock advances after
# each chunk), ("advance", seconds), ("flush_due", buffer) or ("event", buffer).
Step = tuple[Any, ...]


def run(steps: list[Step], limit: int, batched: bool) -> list[Any]:
    """Play ``steps`` on a fresh world, per delta or in batches; the states seen on the way."""
    world = World(limit)
    states = []
    for step in steps:
        if step[0] == "feed":
            _, index, kind, message_id, chunks, advances = step
            buffer = world.buffers[index]
            for chunk, advance in zip(chunks, advances, strict=True):
                if batched:
                    buffer.add_texts(kind, chunk, message_id)
                else:
                    for text in chunk:
                        buffer.add_text(kind, text, message_id)
                states.append(world.state())
                world.clock.now += advance
        elif step[0] == "advance":
            world.clock.now += step[1]
        elif step[0] == "flush_due":
            world.buffers[step[1]].flush_due()
        else:
            world.buffers[step[1]].add_event("tool_call", "tool ran")
        states.append(world.state())
    for buffer in world.buffers:
        buffer.close()
    states.append(world.state())
    return states


_PIECES = [SECRET[:cut] for cut in (1, 5, 13, 20, 33)] + [SECRET[cut:] for cut in (1, 5, 13, 20)]
_FRAGMENTS = [
    "",
    " ",
    "word ",
    "the key is ",
    SECRET,
    f"{SECRET} ",
    "Bearer ",
    "abcdefghijklmnop ",
    "sk-ant-api03-",
    "PLANTEDPLANTEDPLANTED ",
    *_PIECES,
]
_SIZES = [1, 10, 100, 999, 4096, 8191, 8192, 20_000, 32_768, 65_535, 65_536]

texts = st.one_of(
    st.sampled_from(_FRAGMENTS),
    st.builds(lambda char, size: char * size, st.sampled_from("xy "), st.sampled_from(_SIZES)),
)
advances = st.sampled_from([0.0, 0.0, 0.0, 0.01, STREAM_OUTPUT_FLUSH_SECONDS, 0.2])


@st.composite
def feed(draw: st.DrawFn) -> Step:
    deltas = draw(st.lists(texts, min_size=0, max_size=40))
    cuts = sorted(draw(st.lists(st.integers(0, len(deltas)), max_size=6)))
    bounds = [0, *cuts, len(deltas)]
    chunks = [deltas[a:b] for a, b in pairwise(bounds)]
    return (
        "feed",
        draw(st.integers(0, 1)),
        draw(st.sampled_from(sorted(TEXT_UPDATES))),
        draw(
            st.one_of(
                st.sampled_from([None, "m1", "m2"]),  # parts that come back often
                st.sampled_from(["", "m3", "m4", "m5", "m6", "m7", "m8", "m9"]),  # 8 live parts
            )
        ),
        chunks,
        [draw(advances) for _ in chunks],
    )


steps = st.lists(
    st.one_of(
        feed(),
        feed(),
        feed(),
        st.tuples(st.just("advance"), advances),
        st.tuples(st.just("flush_due"), st.integers(0, 1)),
        st.tuples(st.just("event"), st.integers(0, 1)),
    ),
    max_size=12,
)
limits = st.sampled_from([1, 40, 500, 5_000, 70_000, 150_000, 4 * 1024 * 1024])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=steps, limit=limits)
def test_batches_behave_exactly_like_single_deltas(steps: list[Step], limit: int) -> None:
    per_delta = run(steps, limit, batched=False)
    batched = run(steps, limit, batched=True)
    assert len(per_delta) == len(batched)
    for index, (expected, got) in enumerate(zip(per_delta, batched, strict=True)):
        assert got == expected, f"state {index} differs"


def test_a_secret_split_across_deltas_of_one_batch_is_redacted() -> None:
    pieces = ["the key is ", SECRET[:7], SECRET[7:19], SECRET[19:], " and more "]
    steps: list[Step] = [("feed", 0, MESSAGE, None, [pieces, pieces], [0.2, 0.0])]
    batched = run(steps, 4 * 1024 * 1024, batched=True)
    assert batched == run(steps, 4 * 1024 * 1024, batched=False)
    flushes, items, *_ = batched[-1]
    published = "".join(text for batch in flushes[0] for _, _, text, _ in batch)
    assert SECRET not in published
    assert published == items[0][0][1]["text"]
    assert published.count("[REDACTED") == 2


# --- explicit boundaries ------------------------------------------------------------------


def make(memory: StreamMemory) -> tuple[RunBuffer, Clock, list[Item], list[list[OutputGroup]]]:
    clock = Clock()
    items: list[Item] = []
    flushes: list[list[OutputGroup]] = []
    buffer = RunBuffer("run-1", items=items.extend, output=flushes.append, now=clock, memory=memory)
    return buffer, clock, items, flushes


def snapshot(
    buffer: RunBuffer, items: list[Item], flushes: list[list[OutputGroup]]
) -> tuple[Any, ...]:
    return (
        [[astuple(group) for group in batch] for batch in flushes],
        [astuple(item) for item in items],
        astuple(buffer.stats),
        buffer.memory.used,
        buffer._pending_bytes,
    )


def both(
    prelude: list[tuple[str, str | None]],
    batch: list[str],
    message_id: str | None = None,
    limit: int = 4 * 1024 * 1024,
) -> tuple[tuple[Any, ...], tuple[Any, ...], list[list[OutputGroup]]]:
    """Play ``prelude`` (single deltas) then ``batch`` on two buffers, per delta and batched;
    return both snapshots (taken before close) and the batched buffer's flushes."""
    results = []
    for batched in (False, True):
        buffer, _clock, items, flushes = make(StreamMemory(limit=limit))
        for text, prelude_id in prelude:
            buffer.add_text(MESSAGE, text, prelude_id)
        if batched:
            buffer.add_texts(MESSAGE, batch, message_id)
        else:
            for text in batch:
                buffer.add_text(MESSAGE, text, message_id)
        results.append((snapshot(buffer, items, flushes), flushes))
    return results[0][0], results[1][0], results[1][1]


# Every delta below ends with a space, so the redactor holds nothing back: what is pending is
# exactly what the flushes publish.


def word(char: str, size: int) -> str:
    """``size`` characters: ``char`` repeated, then a space."""
    return char * (size - 1) + " "


def test_a_batch_reaching_the_flush_bound_exactly_at_one_delta_flushes_there() -> None:
    # 6 pending bytes, then 64 deltas of 1000 and one that brings the total to exactly 64 KiB.
    last = STREAM_OUTPUT_FLUSH_BYTES - 6 - 64 * 1000
    batch = [word("y", 1000)] * 64 + [word("z", last)] + [word("w", 10)] * 3
    expected, got, flushes = both([("start ", None)], batch)
    assert got == expected
    ((group,),) = flushes  # one flush, right at the delta that reached the bound
    assert len(group.text) == STREAM_OUTPUT_FLUSH_BYTES
    assert group.events == 1 + 65
    assert got[4] == 30  # the three deltas after it are pending


def test_a_batch_one_byte_short_of_the_flush_bound_flushes_at_the_next_delta() -> None:
    last = STREAM_OUTPUT_FLUSH_BYTES - 6 - 64 * 1000 - 1
    batch = [word("y", 1000)] * 64 + [word("z", last)] + [word("w", 10)] * 3
    expected, got, flushes = both([("start ", None)], batch)
    assert got == expected
    ((group,),) = flushes
    assert len(group.text) == STREAM_OUTPUT_FLUSH_BYTES - 1 + 10
    assert group.events == 1 + 66
    assert got[4] == 20


def test_a_batch_of_deltas_each_over_the_flush_bound() -> None:
    batch = [
        word("a", STREAM_OUTPUT_FLUSH_BYTES),
        "",
        word("b", STREAM_OUTPUT_FLUSH_BYTES + 1),
        "c ",
    ]
    expected, got, flushes = both([("start ", None)], batch)
    assert got == expected
    assert [[group.events for group in batch] for batch in flushes] == [[2], [2]]
    assert got[4] == 2


def test_a_batch_crossing_the_memory_limit_evicts_the_oldest_part_at_that_delta() -> None:
    # The part "m1" holds 300 characters; the batch adds deltas of 100 to "m2". The seventh
    # brings the runtime to 1100 > 1000: "m1" is materialized then, not before or after.
    prelude: list[tuple[str, str | None]] = [(word("p", 300), "m1"), ("q ", "m2")]
    batch = [word("r", 98)] + [word("s", 100)] * 9
    expected, got, flushes = both(prelude, batch, "m2", limit=1000)
    assert got == expected
    _flushed, items, stats, used, pending = got
    assert items == [("text", {"text": word("p", 300)}, 1)]
    assert stats[3] == 1  # one eviction
    assert used == 1100 - 300 + 200
    assert pending == 200  # the two deltas after the eviction
    # The flush before the eviction published m1's text and m2's first nine deltas.
    groups = [(group.part, group.events) for batch in flushes for group in batch]
    assert groups == [("text:m1", 1), ("text:m2", 2 + 7)]


def test_a_batch_exactly_at_the_memory_limit_evicts_nothing() -> None:
    prelude: list[tuple[str, str | None]] = [(word("p", 300), "m1"), ("q ", "m2")]
    batch = [word("r", 98)] + [word("s", 100)] * 6
    expected, got, flushes = both(prelude, batch, "m2", limit=1000)
    assert got == expected
    assert got[2][3] == 0
    assert got[3] == 1000
    assert flushes == []


def test_a_batch_in_one_run_evicts_a_part_of_another_run() -> None:
    # The first run's part holds 600 characters; the second run's batch brings the runtime
    # to 1002 > 1000 at its fourth delta, which materializes the first run's (older) part.
    results = []
    for batched in (False, True):
        memory = StreamMemory(limit=1000)
        first, _c1, first_items, first_flushes = make(memory)
        second, _c2, second_items, second_flushes = make(memory)
        first.add_text(MESSAGE, word("a", 600))
        second.add_text(MESSAGE, "b ")
        batch = [word("c", 100)] * 6
        if batched:
            second.add_texts(MESSAGE, batch)
        else:
            for text in batch:
                second.add_text(MESSAGE, text)
        results.append(
            (
                snapshot(first, first_items, first_flushes),
                snapshot(second, second_items, second_flushes),
            )
        )
    assert results[0] == results[1]
    first_state, second_state = results[1]
    assert first_state[0] == [[("text", "run-1:text", word("a", 600), 1)]]
    assert first_state[1] == [("text", {"text": word("a", 600)}, 1)]
    assert first_state[2][3] == 1  # evicted
    assert second_state[0] == [] and second_state[1] == []
    assert second_state[3] == 2 + 600  # what is left in the runtime: the second run's text
    assert second_state[4] == 2 + 600


def test_a_batch_for_a_part_whose_group_is_not_the_last_pending_one() -> None:
    # m1's group is pending, then m2's: a batch for m1 opens a new group after m2's.
    prelude: list[tuple[str, str | None]] = [("one ", "m1"), ("two ", "m2")]
    expected, got, flushes = both(prelude, ["three ", "four ", "five "], "m1")
    assert got == expected
    results = []
    for batched in (False, True):
        buffer, _clock, items, flushes = make(StreamMemory())
        for text, message_id in prelude:
            buffer.add_text(MESSAGE, text, message_id)
        if batched:
            buffer.add_texts(MESSAGE, ["three ", "four ", "five "], "m1")
        else:
            for text in ["three ", "four ", "five "]:
                buffer.add_text(MESSAGE, text, "m1")
        buffer.close()
        results.append(snapshot(buffer, items, flushes))
    assert results[0] == results[1]
    flushed, items, *_ = results[1]
    assert flushed[0] == [
        ("text", "text:m1", "one ", 1),
        ("text", "text:m2", "two ", 1),
        ("text", "text:m1", "three four five ", 3),
    ]
    assert items == [("text", {"text": "one three four five "}, 4), ("text", {"text": "two "}, 1)]


def test_an_empty_batch_changes_nothing() -> None:
    expected, got, flushes = both([("start ", None)], [])
    assert got == expected
    assert flushes == [] and got[4] == 6


def test_a_batch_after_the_time_boundary_flushes_at_its_first_delta() -> None:
    results = []
    for batched in (False, True):
        buffer, clock, items, flushes = make(StreamMemory())
        buffer.add_text(MESSAGE, "start ")
        clock.now += STREAM_OUTPUT_FLUSH_SECONDS
        batch = ["one ", "two ", "three "]
        if batched:
            buffer.add_texts(MESSAGE, batch)
        else:
            for text in batch:
                buffer.add_text(MESSAGE, text)
        results.append(snapshot(buffer, items, flushes))
        assert [[g.text for g in b] for b in flushes] == [["start one "]]
    assert results[0] == results[1]


def test_memory_is_back_to_zero_once_every_part_is_materialized() -> None:
    memory = StreamMemory()
    buffer, _clock, items, _flushes = make(memory)
    buffer.add_texts(MESSAGE, ["Done", "."])  # the last word of a turn: held by the redactor
    buffer.flush_output()
    buffer.close()
    assert items == [Item("text", {"text": "Done."}, 2)]
    assert memory.used == 0
