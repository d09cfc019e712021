"""The fixed strings redaction puts where sensitive or provider-controlled text was.

Every marker is a constant, so a reader (a person, ``baton journal show``, a test) can tell a
redacted value from provider text, and none of them can itself look like a credential: each is
left unchanged by every redaction rule, which keeps redaction idempotent.
"""

from __future__ import annotations

from typing import Final

#: Replaces a credential value: a credential-named field, a paired env/header value, URL
#: userinfo, a header value, a token after ``Bearer``, a well-known key shape, an exact secret,
#: or a subtree deeper than the depth bound.
REDACTED: Final = "[REDACTED]"

#: Replaces a free-form stream field (``content``, ``text``, ``rawInput``, ``rawOutput``,
#: ``title``, ``data``) of a ``session/update`` notification in the journal.
STREAM_CONTENT_MARKER: Final = "[REDACTED PROVIDER STREAM CONTENT]"

#: Stands for an inbound line that did not parse as a JSON-RPC message: the journal and every
#: diagnostic show this, never the provider's bytes.
MALFORMED_FRAME_MARKER: Final = "[REDACTED MALFORMED ACP FRAME]"

#: What the held end of a stream becomes when it may be the beginning of a credential that never
#: completed (a prefix of a known secret, or a token of a well-known key shape cut short).
UNRESOLVED_SECRET_MARKER: Final = "[REDACTED UNRESOLVED CREDENTIAL PREFIX]"

#: Replaces a PEM private-key block, from its BEGIN line through its END line (or through the
#: end of the text when the END line never came).
PRIVATE_KEY_MARKER: Final = "[REDACTED PRIVATE KEY]"
