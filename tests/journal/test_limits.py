"""The journal's bounds and their validation."""

from __future__ import annotations

import pytest

from baton.errors import ConfigurationError
from baton.journal.limits import (
    DEFAULT_LIMITS,
    MAX_ENTRY_BYTES,
    MAX_RECORD_BYTES,
    MAX_SEGMENT_BYTES,
    MAX_TOTAL_BYTES,
    RECORD_OVERHEAD_BYTES,
    SYNC_BATCH_BYTES,
    SYNC_INTERVAL_SECONDS,
    JournalLimits,
)


def test_defaults_are_the_documented_values() -> None:
    assert MAX_ENTRY_BYTES == 24 * 1024 * 1024
    assert MAX_SEGMENT_BYTES == 64 * 1024 * 1024
    assert MAX_TOTAL_BYTES == 256 * 1024 * 1024
    assert SYNC_BATCH_BYTES == 1024 * 1024
    assert SYNC_INTERVAL_SECONDS == 0.1
    assert DEFAULT_LIMITS.max_record_bytes == MAX_RECORD_BYTES
    assert MAX_RECORD_BYTES == 2 * MAX_ENTRY_BYTES + RECORD_OVERHEAD_BYTES
    # The largest record always fits in a fresh segment.
    assert MAX_RECORD_BYTES + 1 <= MAX_SEGMENT_BYTES


def test_entry_bound_may_be_lowered_not_raised() -> None:
    assert JournalLimits(max_entry_bytes=MAX_ENTRY_BYTES).max_entry_bytes == MAX_ENTRY_BYTES
    assert JournalLimits(max_entry_bytes=1).max_entry_bytes == 1
    with pytest.raises(ConfigurationError):
        JournalLimits(max_entry_bytes=MAX_ENTRY_BYTES + 1)
    with pytest.raises(ConfigurationError):
        JournalLimits(max_entry_bytes=0)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_segment_bytes": 0},
        {"max_total_bytes": 0},
        {"sync_batch_bytes": 0},
        {"max_segment_bytes": 100, "max_total_bytes": 99},
        {"sync_batch_bytes": 100, "max_unsynced_bytes": 99},
        {"sync_interval_seconds": 0},
    ],
)
def test_inconsistent_limits_are_refused(kwargs: dict[str, float]) -> None:
    with pytest.raises(ConfigurationError):
        JournalLimits(**kwargs)  # type: ignore[arg-type]
