"""The one timestamp format of Baton's durable records (journal ``recordedAt``, store rows).

ISO 8601 in UTC with microseconds and a ``Z``, so timestamps sort as text.
"""

from __future__ import annotations

from datetime import UTC, datetime


def format_timestamp(moment: datetime) -> str:
    """``recordedAt``: ISO 8601 in UTC with microseconds and a ``Z``."""
    # isoformat of an aware UTC time always ends "+00:00" (and is about twice as fast as
    # strftime, which matters once per journal record).
    return moment.astimezone(UTC).isoformat(timespec="microseconds")[:-6] + "Z"
