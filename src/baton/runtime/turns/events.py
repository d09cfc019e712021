"""Baton's normalized run events: what `baton run --format json` prints, one object per line,
and what the library's event iterator yields.

Every event is a flat JSON object with a ``type`` and the ``runId``. The types and their fields
are part of Baton's public contract (documented in docs/events.md); fields are only added.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

import orjson

from baton.errors import InternalError
from baton.redaction import SecretValues, redact_json
from baton.runtime.turns.event_payloads import (
    ALL_EVENT_TYPES,
    EVENT_TYPES,
    PAYLOAD_TYPES,
    EventType,
    RunEventType,
)

__all__ = ["EVENT_TYPES", "EventType", "RunEvent", "RunEventType", "event_type"]

#: A payload type of :mod:`~baton.runtime.turns.event_payloads`.
P = TypeVar("P")


def event_type(name: object) -> EventType | None:
    """``name`` as an event type, or None when it is none this Baton knows (an event of a newer
    sender, which a reader skips)."""
    return cast("EventType", name) if name in ALL_EVENT_TYPES else None


@dataclass(frozen=True, slots=True)
class RunEvent:
    """One normalized event of a run: its ``type``, the run's id and the payload (``data``,
    whose type for each event type is in :mod:`~baton.runtime.turns.event_payloads`)."""

    type: EventType
    run_id: str
    data: dict[str, Any] = field(default_factory=dict)

    def payload(self, kind: builtins.type[P]) -> P:
        """``data`` as the payload type ``kind`` (``event.payload(TextPayload)["text"]``), for
        the type checker; BATON_BUG when ``kind`` is not this event type's payload."""
        if PAYLOAD_TYPES.get(self.type) is not kind:
            name = getattr(kind, "__name__", repr(kind))
            raise InternalError(f"a {self.type!r} event's payload is not a {name}")
        return cast(P, self.data)

    def redacted(self, secrets: SecretValues | None) -> RunEvent:
        """This event with its data redacted like the run store: the credential rules and the
        exact ``secrets`` (see docs/redaction.md)."""
        return RunEvent(self.type, self.run_id, redact_json(self.data, secrets))

    def to_dict(self) -> dict[str, Any]:
        """The JSON object `baton run --format json` prints for this event."""
        return {"type": self.type, "runId": self.run_id, **self.data}

    def to_json(self) -> bytes:
        """One compact JSON line, without the newline."""
        return orjson.dumps(self.to_dict())
