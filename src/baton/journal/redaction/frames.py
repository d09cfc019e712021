"""What the journal stores of one JSON-RPC message.

Every message is redacted structurally (:func:`~baton.journal.redaction.structural.redact_json`).
A ``session/update`` notification additionally loses its free-form stream fields (``content``,
``text``, ``rawInput``, ``rawOutput``, ``title``, ``data``, at any depth under
``params.update``), which become :data:`~baton.journal.redaction.markers.STREAM_CONTENT_MARKER`,
while its routing and status fields (``sessionId``, ``sessionUpdate``, ``toolCallId``,
``messageId``, ``status``, ``kind``, ``locations[].path``, usage numbers...) are kept, redacted
like any other value. Requests and responses (the ``session/prompt`` prompt, which the user
wrote, included) are redacted structurally only.
"""

from __future__ import annotations

from typing import Any, Final

from baton.journal.redaction.secret_values import SecretValues
from baton.journal.redaction.structural import redact_json, redact_json_with_stream

#: The notification whose free-form fields are masked in the journal.
SESSION_UPDATE_METHOD: Final = "session/update"

#: Where the stream content of a ``session/update`` sits.
_UPDATE_PATH: Final = ("params", "update")


def redact_frame_message(
    message: dict[str, Any], secrets: SecretValues | None = None
) -> dict[str, Any]:
    """Return the copy of ``message`` the journal may store (see the module docstring).

    ``secrets`` are exact values removed from every string. Never mutates ``message``.
    """
    if message.get("method") == SESSION_UPDATE_METHOD:
        redacted = redact_json_with_stream(message, _UPDATE_PATH, secrets)
    else:
        redacted = redact_json(message, secrets)
    assert isinstance(redacted, dict)  # the redaction of an object is an object
    return redacted
