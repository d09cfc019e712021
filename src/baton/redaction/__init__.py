"""Redaction at the journal boundary: what Baton stores of a message never holds a credential.

- :func:`redact_frame_message`: the copy of a JSON-RPC message the journal stores (structural
  redaction; ``session/update`` stream fields replaced by :data:`STREAM_CONTENT_MARKER`).
- :func:`redact_json`: structural redaction of any parsed JSON value.
- :func:`redact_text`: pattern redaction of free text (stderr, non-JSON lines, string leaves).
- :class:`StreamRedactor`: redaction of streamed text whose credentials may be split across
  deltas.
- :class:`SecretValues`: the exact sensitive values (a profile's credentials) to remove too.
- :class:`RedactedText`: text marked as redacted already (by these rules and these secrets),
  which later sinks keep without scanning it again.

See docs/redaction.md for the rules.
"""

from baton.redaction.frames import SESSION_UPDATE_METHOD, redact_frame_message
from baton.redaction.marked import RedactedText, is_trusted
from baton.redaction.markers import (
    MALFORMED_FRAME_MARKER,
    PRIVATE_KEY_MARKER,
    REDACTED,
    STREAM_CONTENT_MARKER,
    UNRESOLVED_SECRET_MARKER,
)
from baton.redaction.names import is_credential_name
from baton.redaction.secret_values import MIN_SECRET_CHARS, SecretValues
from baton.redaction.stream import (
    MAX_STREAM_CREDENTIAL_CARRY_BYTES,
    MIN_UNRESOLVED_PREFIX_CHARS,
    StreamRedactor,
)
from baton.redaction.structural import MAX_REDACTION_DEPTH, STREAM_FIELDS, redact_json
from baton.redaction.text import redact_text

__all__ = [
    "MALFORMED_FRAME_MARKER",
    "MAX_REDACTION_DEPTH",
    "MAX_STREAM_CREDENTIAL_CARRY_BYTES",
    "MIN_SECRET_CHARS",
    "MIN_UNRESOLVED_PREFIX_CHARS",
    "PRIVATE_KEY_MARKER",
    "REDACTED",
    "SESSION_UPDATE_METHOD",
    "STREAM_CONTENT_MARKER",
    "STREAM_FIELDS",
    "UNRESOLVED_SECRET_MARKER",
    "RedactedText",
    "SecretValues",
    "StreamRedactor",
    "is_credential_name",
    "is_trusted",
    "redact_frame_message",
    "redact_json",
    "redact_text",
]
