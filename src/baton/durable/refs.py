"""Where a journal record is: :class:`JournalRef`, the server instance id it names, and the
fast constructor the journal's hot path uses.

Layer 2.5 (``baton.durable``): both the journal (which makes references) and the run store
(which stores them as evidence) import this module; neither imports the other.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from baton.errors import JournalCorrupt, UsageError

#: What a server instance id may look like: it names files, so no dots, slashes or spaces.
SERVER_ID_PATTERN: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")
#: A record's hash: lowercase hex SHA-256.
SHA256_HEX_PATTERN: Final = re.compile(r"[0-9a-f]{64}")
_REF_KEYS: Final = frozenset(
    {"server", "segment", "sequence", "byteOffset", "byteLength", "sha256"}
)


def validate_server_id(server_id: str) -> str:
    """Return ``server_id`` if it is a valid server instance id, else raise UsageError."""
    if not isinstance(server_id, str) or SERVER_ID_PATTERN.fullmatch(server_id) is None:
        raise UsageError(
            f"invalid server instance id {server_id!r}: expected 1-128 letters, digits, "
            f"'_' or '-', starting with a letter or digit"
        )
    return server_id


def record_location(server: str, segment: int, sequence: int | None, offset: int) -> str:
    """How errors and ``verify`` name one record."""
    seq = "?" if sequence is None else str(sequence)
    return f"{server} segment {segment} sequence {seq} at byte {offset}"


def is_int(value: object) -> bool:
    """True for an ``int`` that is not a ``bool`` (JSON integers as parsed)."""
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True, slots=True)
class JournalRef:
    """Where one record is, and the hash of its raw text. Returned by every append and stored
    on Baton's records as evidence; :meth:`baton.journal.Journal.read` resolves it.

    ``byte_offset`` is the offset of the record line in its segment file and ``byte_length``
    its length without the newline.
    """

    server: str
    segment: int
    sequence: int
    byte_offset: int
    byte_length: int
    sha256: str

    def to_dict(self) -> dict[str, Any]:
        """The JSON form Baton stores (camelCase, like the record line)."""
        return {
            "server": self.server,
            "segment": self.segment,
            "sequence": self.sequence,
            "byteOffset": self.byte_offset,
            "byteLength": self.byte_length,
            "sha256": self.sha256,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> JournalRef:
        """Parse and validate the JSON form; raise JournalCorrupt when it is malformed."""
        where = "reference"
        if not isinstance(data, Mapping) or set(data) != _REF_KEYS:
            raise JournalCorrupt(where, f"a journal reference needs exactly {sorted(_REF_KEYS)}")
        server = data["server"]
        if not isinstance(server, str) or SERVER_ID_PATTERN.fullmatch(server) is None:
            raise JournalCorrupt(where, "server is not a valid server instance id")
        for key, low in (("segment", 0), ("sequence", 1), ("byteOffset", 0), ("byteLength", 1)):
            if not is_int(data[key]) or data[key] < low:
                raise JournalCorrupt(where, f"{key} is not an integer >= {low}")
        digest = data["sha256"]
        if not isinstance(digest, str) or SHA256_HEX_PATTERN.fullmatch(digest) is None:
            raise JournalCorrupt(where, "sha256 is not 64 lowercase hex digits")
        return cls(
            server,
            data["segment"],
            data["sequence"],
            data["byteOffset"],
            data["byteLength"],
            digest,
        )

    def __str__(self) -> str:
        return record_location(self.server, self.segment, self.sequence, self.byte_offset)


#: The slot setters of :class:`JournalRef`, in field order: :func:`make_ref` and the writer's
#: inbound hot path build refs with them (a frozen dataclass's own init is 2x slower).
REF_SLOT_SETTERS: Final = tuple(
    JournalRef.__dict__[name].__set__
    for name in ("server", "segment", "sequence", "byte_offset", "byte_length", "sha256")
)


def make_ref(
    server: str, segment: int, sequence: int, byte_offset: int, byte_length: int, sha256: str
) -> JournalRef:
    """``JournalRef(server, segment, ...)``, about twice as fast: the writer makes one per
    record, and a frozen dataclass's ``__init__`` goes through ``object.__setattr__`` per
    field. The result is an ordinary, equal, immutable JournalRef."""
    ref = object.__new__(JournalRef)
    set_server, set_segment, set_sequence, set_offset, set_length, set_sha = REF_SLOT_SETTERS
    set_server(ref, server)
    set_segment(ref, segment)
    set_sequence(ref, sequence)
    set_offset(ref, byte_offset)
    set_length(ref, byte_length)
    set_sha(ref, sha256)
    return ref
