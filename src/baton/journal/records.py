"""The journal's record line, its reference, and their validation.

One record is one line of a segment file: a compact JSON object with exactly these keys, in
this order::

    {"serverInstanceId": "srv-1", "segment": 0, "sequence": 1, "direction": "outbound",
     "recordedAt": "2025-01-02T03:04:05.123456Z", "raw": "{\\"jsonrpc\\":\\"2.0\\",...}",
     "metadata": {"protocol": "acp", "kind": "request", "method": "initialize", "id": 1},
     "sha256": "<hex SHA-256 of raw as UTF-8>"}

``raw`` is the redacted message text; ``metadata.method`` and ``metadata.id`` are present when
the message has them, ``metadata.violation`` when the frame broke the protocol. A skipped
(unparseable) frame has kind ``skipped`` and a raw text that holds only Baton's marker, its
reason and the frame's length. A :class:`JournalRef` names one record by position and hash;
reading it back re-validates every field.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import accumulate, groupby
from typing import Any, Final, Literal, overload

import orjson

from baton.durable.refs import (
    SERVER_ID_PATTERN,
    SHA256_HEX_PATTERN,
    is_int,
    make_ref,
)
from baton.durable.refs import JournalRef as JournalRef  # re-exported: the journal's own API
from baton.durable.timestamps import format_timestamp
from baton.errors import JournalCorrupt

Direction = Literal["inbound", "outbound"]
RecordKind = Literal["request", "notification", "response", "skipped"]

DIRECTIONS: Final[frozenset[str]] = frozenset({"inbound", "outbound"})
RECORD_KINDS: Final[frozenset[str]] = frozenset({"request", "notification", "response", "skipped"})

#: The one protocol journaled today; the field lets another one share the format later.
PROTOCOL: Final = "acp"


#: Segment files are ``<serverInstanceId>.<segment>.ndjson``.
SEGMENT_SUFFIX: Final = ".ndjson"
_SEGMENT_NAME: Final = re.compile(
    r"([A-Za-z0-9][A-Za-z0-9_-]{0,127})\.(0|[1-9][0-9]{0,17})\.ndjson"
)

_TIMESTAMP: Final = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z")
_RECORD_KEYS: Final = (
    "serverInstanceId",
    "segment",
    "sequence",
    "direction",
    "recordedAt",
    "raw",
    "metadata",
    "sha256",
)
#: Longest method name or metadata violation kind kept in metadata (the raw text keeps all).
MAX_METADATA_TEXT_CHARS: Final = 256


def segment_name(server_id: str, segment: int) -> str:
    """The file name of ``server_id``'s segment number ``segment``."""
    return f"{server_id}.{segment}{SEGMENT_SUFFIX}"


def parse_segment_name(name: str) -> tuple[str, int] | None:
    """``(server_id, segment)`` for a segment file name, None for any other name."""
    match = _SEGMENT_NAME.fullmatch(name)
    if match is None:
        return None
    return match.group(1), int(match.group(2))


def sha256_hex(raw: bytes) -> str:
    """The hex SHA-256 stored with (and checked against) a record's raw text."""
    return hashlib.sha256(raw).hexdigest()


@dataclass(frozen=True, slots=True)
class RecordMetadata:
    """What kind of message a record holds, for listing without parsing ``raw``."""

    kind: RecordKind
    method: str | None = None
    id: int | str | None = None
    violation: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The on-disk ``metadata`` object."""
        data: dict[str, Any] = {"protocol": PROTOCOL, "kind": self.kind}
        if self.method is not None:
            data["method"] = self.method
        if self.id is not None:
            data["id"] = self.id
        if self.violation is not None:
            data["violation"] = self.violation
        return data

    @classmethod
    def from_dict(cls, data: object, where: str) -> RecordMetadata:
        """Validate an on-disk ``metadata`` object; raise JournalCorrupt naming ``where``."""
        check_metadata(data, where)
        assert isinstance(data, dict)
        return cls(data["kind"], data.get("method"), data.get("id"), data.get("violation"))


def check_metadata(data: object, where: str) -> None:
    """Validate an on-disk ``metadata`` object; raise JournalCorrupt naming ``where``."""
    if not isinstance(data, dict):
        raise JournalCorrupt(where, "metadata is not an object")
    if not data.keys() <= _METADATA_KEYS:
        extra = set(data) - _METADATA_KEYS
        raise JournalCorrupt(where, f"metadata has unknown keys {sorted(extra)}")
    if data.get("protocol") != PROTOCOL:
        raise JournalCorrupt(where, "metadata.protocol is not 'acp'")
    if data.get("kind") not in RECORD_KINDS:
        raise JournalCorrupt(where, "metadata.kind is not a record kind")
    method = data.get("method")
    if method is not None and not isinstance(method, str):
        raise JournalCorrupt(where, "metadata.method is not a string")
    request_id = data.get("id")
    if "id" in data and not (is_int(request_id) or isinstance(request_id, str)):
        raise JournalCorrupt(where, "metadata.id is not an integer or a string")
    violation = data.get("violation")
    if violation is not None and not isinstance(violation, str):
        raise JournalCorrupt(where, "metadata.violation is not a string")


_METADATA_KEYS: Final = frozenset({"protocol", "kind", "method", "id", "violation"})


@dataclass(frozen=True, slots=True)
class JournalRecord:
    """One validated record, as read back from a segment."""

    server_instance_id: str
    segment: int
    sequence: int
    direction: Direction
    recorded_at: str
    raw: str
    metadata: RecordMetadata
    sha256: str

    def to_dict(self) -> dict[str, Any]:
        """The on-disk object (what ``baton journal show --json`` prints)."""
        return {
            "serverInstanceId": self.server_instance_id,
            "segment": self.segment,
            "sequence": self.sequence,
            "direction": self.direction,
            "recordedAt": self.recorded_at,
            "raw": self.raw,
            "metadata": self.metadata.to_dict(),
            "sha256": self.sha256,
        }

    def message(self) -> Any:
        """The redacted message, parsed from ``raw``."""
        return orjson.loads(self.raw)


def encode_record(
    server: str,
    segment: int,
    sequence: int,
    direction: Direction,
    recorded_at: str,
    raw: bytes,
    metadata: RecordMetadata,
) -> tuple[bytes, str]:
    """The record line (without its newline) and the SHA-256 of ``raw``."""
    digest = sha256_hex(raw)
    line = orjson.dumps(
        {
            "serverInstanceId": server,
            "segment": segment,
            "sequence": sequence,
            "direction": direction,
            "recordedAt": recorded_at,
            "raw": raw.decode("utf-8"),
            "metadata": metadata.to_dict(),
            "sha256": digest,
        }
    )
    return line, digest


@dataclass(frozen=True, slots=True)
class RecordBody:
    """The end of a record line that depends only on its raw text and metadata (from
    ``,"raw":`` to the closing brace), with the raw text's SHA-256.

    The writer joins it to a :class:`RecordHead`'s bytes; many records of a flood share one
    body, so it is computed once per distinct message. ``stamped_end`` is ``tail`` after the
    end of a ``recordedAt`` value (``Z"``) and with the line's newline (see
    :meth:`RecordHead.line_parts`).
    """

    tail: bytes
    digest: str
    stamped_end: bytes

    @classmethod
    def of(cls, raw: bytes, metadata: RecordMetadata) -> RecordBody:
        """The body of a record whose redacted message text is ``raw``."""
        digest = sha256_hex(raw)
        tail = b"".join(
            (
                b',"raw":',
                orjson.dumps(raw.decode("utf-8")),
                b',"metadata":',
                orjson.dumps(metadata.to_dict()),
                b',"sha256":"',
                digest.encode("ascii"),
                b'"}',
            )
        )
        return cls(tail, digest, b'Z"' + tail + b"\n")


#: What a server journal's write buffer holds until it writes: ``(sequence, microseconds since
#: the epoch, body)`` for one record, or ``(first sequence, microseconds, bodies)`` for a batch
#: of consecutive records read together (one time for all of them: they arrived in one read).
PendingRecords = tuple[int, int, RecordBody | list[RecordBody]]

#: A sequence number's digits, as bytes (``_DECIMAL % 12 == b"12"``).
_DECIMAL: Final = b"%d"

#: Length of a ``recordedAt`` value as a JSON string: ``"2025-01-02T03:04:05.123456Z"``
#: (years are always four digits).
STAMP_JSON_BYTES: Final = 29


class RecordHead:
    """The beginning of the record lines of one server segment and direction, up to the
    sequence number; :meth:`line` completes one.

    ``head.line(sequence, orjson.dumps(recorded_at), body)`` is byte for byte
    ``encode_record(server, segment, sequence, direction, recorded_at, raw, metadata)[0]``,
    and :meth:`length` is its length.
    """

    __slots__ = ("_fixed", "_middle", "_prefix")

    def __init__(self, server: str, segment: int, direction: Direction) -> None:
        self._prefix = b"".join(
            (
                b'{"serverInstanceId":',
                orjson.dumps(server),
                b',"segment":',
                str(segment).encode("ascii"),
                b',"sequence":',
            )
        )
        self._middle = b',"direction":' + orjson.dumps(direction) + b',"recordedAt":'
        self._fixed = len(self._prefix) + len(self._middle) + STAMP_JSON_BYTES

    def line(self, sequence: int, recorded_at_json: bytes, body: RecordBody) -> bytes:
        """The record line (without its newline); ``recorded_at_json`` is the ``recordedAt``
        value as a JSON string (quotes included)."""
        return b"".join((self._prefix, b"%d" % sequence, self._middle, recorded_at_json, body.tail))

    def line_parts(self, records: Iterable[PendingRecords], stamps: UtcStamps) -> list[bytes]:
        """The lines, newlines included, of pending records (:data:`PendingRecords`), as
        consecutive parts (for ``writev``, never joined): one bytes format per single record
        (the date and time up to the second joins the fixed middle once per second), and for a
        batch one join per run of records that share a body (they differ only in their
        sequence numbers)."""
        prefix = self._prefix
        out: list[bytes] = []
        add = out.append
        start = end = 0
        middle = b""
        for sequence, micros, body in records:
            if not start <= micros < end:
                start, second = stamps.second(micros)
                end = start + 1_000_000
                middle = self._middle + second
            if isinstance(body, RecordBody):
                add(b"%s%d%s%06d%s" % (prefix, sequence, middle, micros - start, body.stamped_end))
                continue
            stamp = b"%06d" % (micros - start)
            index = 0
            for _, run in groupby(body, key=id):
                count = len(list(run))
                after = middle + stamp + body[index].stamped_end
                add(prefix)
                add((after + prefix).join(map(_DECIMAL.__mod__, range(sequence, sequence + count))))
                add(after)
                sequence += count
                index += count
        return out

    @property
    def fixed(self) -> int:
        """The length of every line of this head besides its sequence digits and body."""
        return self._fixed

    def length(self, sequence: int, body: RecordBody) -> int:
        """The length of :meth:`line` for ``sequence`` and ``body``, without encoding it:
        :attr:`fixed`, the sequence's digits and the body's tail (the writer's hot path does
        this arithmetic inline)."""
        return self._fixed + len(str(sequence)) + len(body.tail)


#: The Unix epoch, in UTC.
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_MICROSECOND: Final = timedelta(microseconds=1)


def micros_since_epoch(moment: datetime) -> int:
    """``moment`` as whole microseconds since the Unix epoch (a naive one is local time, as
    for :func:`format_timestamp`)."""
    return (moment.astimezone(UTC) - _EPOCH) // _ONE_MICROSECOND


class UtcStamps:
    """``recordedAt`` values as JSON strings, fast: the date and time up to the second is
    formatted once per second, the microseconds per call.

    ``orjson.loads(stamps.json(micros_since_epoch(moment)))`` equals
    ``format_timestamp(moment)``.
    """

    __slots__ = ("_next", "_prefix", "_start")

    def __init__(self) -> None:
        self._start = 0  # microseconds since the epoch at the start of the cached second
        self._next = 0  # ... and at the start of the next one
        self._prefix = b""

    def json(self, micros: int) -> bytes:
        """The ``recordedAt`` JSON string of ``micros`` microseconds since the epoch."""
        start, second = self.second(micros)
        return b'%s%06dZ"' % (second, micros - start)

    def second(self, micros: int) -> tuple[int, bytes]:
        """The start of the second holding ``micros`` (in microseconds since the epoch) and
        the beginning of its ``recordedAt`` JSON string, up to the decimal point
        (``"2025-01-02T03:04:05.``)."""
        if not self._start <= micros < self._next:
            second = micros // 1_000_000
            moment = datetime.fromtimestamp(second, UTC)
            self._prefix = b'"' + format_timestamp(moment)[:-7].encode("ascii")
            self._start = second * 1_000_000
            self._next = self._start + 1_000_000
        return self._start, self._prefix


class InboundRefs(Sequence[JournalRef]):
    """The references of a batch of consecutive records of one segment (one per message, in
    order), made when asked for: the handlers of a streamed turn rarely look at a delta's
    reference, so a batch costs no object per record. ``refs[i]`` equals the
    :class:`JournalRef` a single append of message ``i`` would have returned.

    ``line_fixed`` is the length of each line besides its body's tail (the same for the whole
    batch: its sequence numbers have equally many digits).
    """

    __slots__ = (
        "_bodies",
        "_first_offset",
        "_first_sequence",
        "_fixed",
        "_offsets",
        "_segment",
        "_server",
    )

    def __init__(
        self,
        server: str,
        segment: int,
        first_sequence: int,
        first_offset: int,
        line_fixed: int,
        bodies: list[RecordBody],
    ) -> None:
        self._server = server
        self._segment = segment
        self._first_sequence = first_sequence
        self._first_offset = first_offset
        self._fixed = line_fixed
        self._bodies = bodies
        self._offsets: list[int] | None = None

    def __len__(self) -> int:
        return len(self._bodies)

    @overload
    def __getitem__(self, index: int) -> JournalRef: ...

    @overload
    def __getitem__(self, index: slice) -> list[JournalRef]: ...

    def __getitem__(self, index: int | slice) -> JournalRef | list[JournalRef]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        bodies = self._bodies
        if index < 0:
            index += len(bodies)
        if not 0 <= index < len(bodies):
            raise IndexError("journal reference index out of range")
        offsets = self._offsets
        if offsets is None:
            step = self._fixed + 1  # the line's fixed part and its newline
            offsets = self._offsets = list(
                accumulate(
                    (step + len(body.tail) for body in bodies[:-1]), initial=self._first_offset
                )
            )
        body = bodies[index]
        return make_ref(
            self._server,
            self._segment,
            self._first_sequence + index,
            offsets[index],
            self._fixed + len(body.tail),
            body.digest,
        )


class RecordChecker:
    """Validates record lines: every check of :func:`decode_record`, without building a
    record (``journal verify`` needs only the positions).

    A checker remembers the last server id, ``recordedAt`` second (date and time up to the
    second), metadata object and ``raw`` text with its hash that it found valid, so a scan of
    one server's records runs the id pattern, the calendar check, the metadata checks and the
    SHA-256 once per distinct value, not once per record (the part of a timestamp after the
    second is six digits, which the timestamp pattern checks; the deltas of a streamed turn
    share one journal body). Not thread-safe: one per scan.
    """

    __slots__ = ("_digest", "_metadata", "_raw", "_second", "_server")

    def __init__(self) -> None:
        self._server = ""
        self._second = ""
        self._metadata: object = None
        self._raw = ""
        self._digest = ""

    def fields(self, line: bytes, where: str) -> dict[str, Any]:
        """The record's parsed object (a line without its newline), every field checked:
        the key set, every field's type and range, the timestamp's form and the SHA-256 of
        ``raw``. Position checks (segment and sequence against the file and the chain) are
        the caller's. Raises :class:`JournalCorrupt` naming ``where``."""
        try:
            data = orjson.loads(line)
        except orjson.JSONDecodeError:
            raise JournalCorrupt(where, "the line is not valid JSON") from None
        if not isinstance(data, dict):
            raise JournalCorrupt(where, "the line is not a JSON object")
        if tuple(data) != _RECORD_KEYS:
            raise JournalCorrupt(where, f"the record's keys are not {list(_RECORD_KEYS)}")
        server = data["serverInstanceId"]
        if server != self._server:
            if not isinstance(server, str) or SERVER_ID_PATTERN.fullmatch(server) is None:
                raise JournalCorrupt(where, "serverInstanceId is not a valid server instance id")
            self._server = server
        segment = data["segment"]
        if type(segment) is not int or segment < 0:  # orjson makes exact ints (bool is not)
            raise JournalCorrupt(where, "segment is not an integer >= 0")
        sequence = data["sequence"]
        if type(sequence) is not int or sequence < 1:
            raise JournalCorrupt(where, "sequence is not an integer >= 1")
        if data["direction"] not in DIRECTIONS:
            raise JournalCorrupt(where, "direction is not 'inbound' or 'outbound'")
        recorded_at = data["recordedAt"]
        if not isinstance(recorded_at, str) or _TIMESTAMP.fullmatch(recorded_at) is None:
            raise JournalCorrupt(where, "recordedAt is not an ISO UTC timestamp")
        second = recorded_at[:_SECOND_CHARS]
        if second != self._second:
            try:
                datetime.fromisoformat(recorded_at)
            except ValueError:
                raise JournalCorrupt(where, "recordedAt is not a valid date and time") from None
            self._second = second
        raw = data["raw"]
        if not isinstance(raw, str):
            raise JournalCorrupt(where, "raw is not a string")
        metadata = data["metadata"]
        if metadata != self._metadata:
            check_metadata(metadata, where)
            self._metadata = metadata
        digest = data["sha256"]
        if digest != self._digest or raw != self._raw:
            if not isinstance(digest, str) or SHA256_HEX_PATTERN.fullmatch(digest) is None:
                raise JournalCorrupt(where, "sha256 is not 64 lowercase hex digits")
            if sha256_hex(raw.encode("utf-8")) != digest:
                raise JournalCorrupt(where, "the SHA-256 of raw does not match the stored hash")
            self._raw, self._digest = raw, digest
        return data


#: Characters of a ``recordedAt`` value up to the second (``2025-01-02T03:04:05``).
_SECOND_CHARS: Final = 19


def record_of(data: dict[str, Any]) -> JournalRecord:
    """The record of a parsed object :meth:`RecordChecker.fields` validated."""
    metadata = data["metadata"]
    return JournalRecord(
        data["serverInstanceId"],
        data["segment"],
        data["sequence"],
        data["direction"],
        data["recordedAt"],
        data["raw"],
        RecordMetadata(
            metadata["kind"], metadata.get("method"), metadata.get("id"), metadata.get("violation")
        ),
        data["sha256"],
    )


def decode_record(line: bytes, where: str) -> JournalRecord:
    """Parse and fully validate one record line (without its newline): the checks of
    :meth:`RecordChecker.fields`. Raises :class:`JournalCorrupt` naming ``where``."""
    return record_of(RecordChecker().fields(line, where))


def metadata_for(message: Mapping[str, Any], violation: str | None = None) -> RecordMetadata:
    """Metadata of a (redacted) JSON-RPC message: its kind, method and id when present."""
    method = message.get("method")
    request_id = message.get("id")
    # An over-long string id stays in raw only: a truncated copy could name another request.
    has_id = is_int(request_id) or (
        isinstance(request_id, str) and len(request_id) <= MAX_METADATA_TEXT_CHARS
    )
    kind: RecordKind
    if isinstance(method, str):
        kind = "request" if "id" in message else "notification"
    else:
        kind = "response"
        method = None
    if isinstance(method, str):
        method = method[:MAX_METADATA_TEXT_CHARS]
    if violation is not None:
        violation = violation[:MAX_METADATA_TEXT_CHARS]
    return RecordMetadata(kind, method, request_id if has_id else None, violation)
