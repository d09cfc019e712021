"""The HTTP/1.1 protocol `baton serve` speaks: uvicorn's h11 protocol, stricter about framing.

A request that carries both ``Content-Length`` and ``Transfer-Encoding`` is ambiguous: h11
reads it as chunked, and the bytes after the chunked body are answered as a second request
on the same connection, while a proxy in front may have framed it by its length (request
smuggling). RFC 9112 §6.1 lets a server reject such a request and close the connection, and
the service does: 400 (uvicorn's own "Invalid HTTP request received." answer, logged as one
line) and the connection closed. An obfuscated ``Transfer-Encoding`` (``xchunked``,
``chunked, identity``, a repeated header, a space before the colon) is refused by h11 itself
the same way.

Protects: the one-request-per-framing guarantee every route relies on. The incomplete-event
bound (the request line and headers) is :data:`MAX_HEADER_BYTES`.
"""

from __future__ import annotations

from typing import Any, Final

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

#: Bytes of a request line and its headers h11 buffers before it refuses the request (400):
#: h11's own default, stated here because the service relies on it.
MAX_HEADER_BYTES: Final = 16 * 1024


class _FramingStrictConnection(h11.Connection):
    """h11's server connection that refuses a request framed twice."""

    def next_event(self) -> Any:
        """h11's next event; a request with both Content-Length and Transfer-Encoding raises
        :class:`h11.RemoteProtocolError` (uvicorn answers 400 and closes)."""
        event = super().next_event()
        if isinstance(event, h11.Request):
            names = {name.lower() for name, _value in event.headers}
            if b"content-length" in names and b"transfer-encoding" in names:
                raise h11.RemoteProtocolError(
                    "both Content-Length and Transfer-Encoding", error_status_hint=400
                )
        return event


class FramingStrictH11Protocol(H11Protocol):
    """uvicorn's h11 protocol over :class:`_FramingStrictConnection` (``http=`` of the
    service's ``uvicorn.Config``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Replaced before any byte arrived (the connection is made after __init__).
        bound = self.config.h11_max_incomplete_event_size
        self.conn = _FramingStrictConnection(
            h11.SERVER, max_incomplete_event_size=bound if bound is not None else MAX_HEADER_BYTES
        )
