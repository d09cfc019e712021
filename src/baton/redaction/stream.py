"""Redaction of streamed text, where a credential may be split across deltas.

A :class:`StreamRedactor` publishes text only once nothing that follows can change how it is
redacted. It holds back (carries) the end of what it has seen from the earliest of:

- the whitespace-free run that ends the text (a key shape, a URL or a ``key=value`` in progress);
- the longest end that is a proper beginning of a known secret;
- the start of any credential construct that reaches the end of the text and may still grow
  (``Authorization: ...`` until the newline, ``"password": "...`` until the quote,
  ``Bearer`` until its token ends, ``api_key`` followed by spaces until its separator comes);

then moves the cut back so it never falls inside a credential construct or a secret, and onto
the start of a whitespace-free run. Everything before the cut is published through
:func:`~baton.redaction.text.redact_text`, so the concatenated output equals the
redaction of the whole text whenever the carry stays within its bound.

Memory: one redactor holds at most ``max_carry`` characters plus one delta. A carry that would
exceed ``max_carry`` (a secret or a credential construct longer than that, or a whitespace-free
run that long) is masked as a whole: ``[REDACTED]`` is published in its place and input is
dropped up to the next whitespace (or, for a header or quoted value, the next newline or
quote).
"""

from __future__ import annotations

import re
from typing import Final

from baton.errors import ConfigurationError
from baton.redaction.marked import RedactedText
from baton.redaction.markers import PRIVATE_KEY_MARKER, REDACTED, UNRESOLVED_SECRET_MARKER
from baton.redaction.secret_values import SecretValues
from baton.redaction.text import (
    PEM_CLOSERS,
    Span,
    credential_spans,
    may_hold_credential,
    partial_shape_start,
    redact_text,
    trailing_run_start,
)

#: Longest carry one stream holds, in characters (which is also its UTF-8 size for the ASCII
#: that credentials are made of). Bounds a stream's memory; a secret longer than this cannot be
#: matched across deltas, so the chunk that would hold it is masked instead.
MAX_STREAM_CREDENTIAL_CARRY_BYTES: Final = 64 * 1024

#: Shortest held end that ``finish`` treats as an unresolved secret prefix. A shorter match of a
#: secret's first characters reveals almost nothing, and masking it would turn ordinary endings
#: ("...ask" when a secret starts with "sk") into markers.
MIN_UNRESOLVED_PREFIX_CHARS: Final = 4

#: Carry size from which a scan that released nothing backs off: the next scan waits until the
#: carry has grown by half. Holding longer is always safe, and the back-off keeps the work on a
#: pathological stream (credential constructs chained across every space) linear instead of one
#: full rescan of up to ``max_carry`` characters per delta.
RESCAN_BACKOFF_CHARS: Final = 4 * 1024

_WHITESPACE_RE: Final = re.compile(r"\s")
_ASCII_WHITESPACE: Final = " \t\n\r\x0b\x0c"


class StreamRedactor:
    """Redacts one text stream delta by delta (see the module docstring).

    ``feed`` returns the text that is safe to publish now; ``finish`` returns the rest at the
    end of the stream. After ``finish`` the redactor is empty and may start a new stream.
    """

    __slots__ = (
        "_carry",
        "_mask_closers",
        "_masking",
        "_max_carry",
        "_next_scan",
        "_secrets",
        "_wake",
    )

    def __init__(
        self, secrets: SecretValues | None, max_carry: int = MAX_STREAM_CREDENTIAL_CARRY_BYTES
    ) -> None:
        if isinstance(max_carry, bool) or not isinstance(max_carry, int) or max_carry < 1:
            raise ConfigurationError(
                f"the stream carry bound must be a positive number of characters, got {max_carry!r}"
            )
        # Kept even when empty: the set may grow while the stream runs (SecretValues.add).
        self._secrets = secrets
        self._max_carry = max_carry
        self._carry = ""
        # Characters whose arrival can release the carry (None: any whitespace).
        self._wake: str | None = None
        # Buffer length below which no rescan is tried (the back-off after a fruitless scan).
        self._next_scan = 0
        # Whether input is being dropped after a too-long carry was masked, and the characters
        # that end the masking (None: any whitespace).
        self._masking = False
        self._mask_closers: str | None = None

    @property
    def held(self) -> int:
        """Characters currently held back."""
        return len(self._carry)

    def feed(self, delta: str) -> str:
        """Take the next delta; return the redacted text that is safe to publish now (marked
        :class:`~baton.redaction.marked.RedactedText` when there is any)."""
        secrets = self._secrets
        snapshot = secrets.snapshot if secrets is not None else None  # before the work
        return self._mark(self._feed(delta), snapshot)

    def _mark(self, text: str, snapshot: object) -> str:
        return RedactedText.of(text, self._secrets, snapshot) if text else text

    def _feed(self, delta: str) -> str:
        if self._masking:
            delta = self._skip_masked(delta)
        if not delta:
            return ""
        if (
            not self._carry
            and self._wake is None
            and delta[-1] in _ASCII_WHITESPACE
            and not may_hold_credential(delta)
        ):
            # The common delta: nothing held, ends a word, holds nothing any rule could act
            # on. Unless an exact secret is involved, the full path would cut at its end and
            # publish it unchanged: no credential span (so the cut stays at the end, and no
            # wake characters are needed), no pattern rule; and a secret without whitespace
            # cannot straddle, or be pending at, an end that is whitespace (a secret with
            # whitespace always takes the full path).
            secrets = self._secrets
            if secrets is None or not (secrets.has_whitespace or secrets.occurs_in(delta)):
                return delta
        buffer = self._carry + delta
        if len(buffer) < self._next_scan or not self._may_release(delta):
            self._carry = buffer
            return self._bound()
        # One hint scan decides for both passes: when no rule can act on the buffer, it has no
        # credential span and no part of it needs the rules (exact secrets aside), so neither
        # the span search nor the rules run again on what is published (issue 34).
        quiet = not may_hold_credential(buffer)
        cut = self._safe_cut(buffer, quiet)
        self._next_scan = (
            len(buffer) * 3 // 2 if not cut and len(buffer) >= RESCAN_BACKOFF_CHARS else 0
        )
        self._carry = buffer[cut:]
        if not cut:
            published = ""
        elif quiet:
            secrets = self._secrets
            published = secrets.mask(buffer[:cut]) if secrets else buffer[:cut]
        else:
            published = redact_text(buffer[:cut], self._secrets)
        return published + self._bound()

    def finish(self) -> str:
        """End the stream: return the held text, redacted (and marked). If it ends with what
        may be the beginning of a credential that never completed (at least
        :data:`MIN_UNRESOLVED_PREFIX_CHARS` of a known secret, or a key shape cut short), that
        end is replaced by :data:`UNRESOLVED_SECRET_MARKER`."""
        secrets = self._secrets
        snapshot = secrets.snapshot if secrets is not None else None
        return self._mark(self._finish(), snapshot)

    def _finish(self) -> str:
        """:meth:`finish`, unmarked."""
        carry, self._carry = self._carry, ""
        self._wake = None
        self._next_scan = 0
        self._masking = False
        if not carry:
            return ""
        if self._secrets is not None:
            pending = self._secrets.pending_prefix(carry)
            if pending >= MIN_UNRESOLVED_PREFIX_CHARS:
                cut = _run_start(carry, len(carry) - pending)
                return redact_text(carry[:cut], self._secrets) + UNRESOLVED_SECRET_MARKER
        text = redact_text(carry, self._secrets)
        partial = partial_shape_start(text)
        if partial is not None:
            return text[:partial] + UNRESOLVED_SECRET_MARKER
        return text

    def _may_release(self, delta: str) -> bool:
        """False when ``delta`` cannot let any held text go (the cheap path for most deltas)."""
        if self._wake is not None:
            return any(c in delta for c in self._wake)
        if self._secrets is not None and self._secrets.has_whitespace:
            return True
        return _WHITESPACE_RE.search(delta) is not None

    def _safe_cut(self, buffer: str, quiet: bool = False) -> int:
        """The largest index before which ``buffer`` can be published now. ``quiet``: no
        pattern rule applies to ``buffer`` (:func:`may_hold_credential` is false), so it holds
        no credential span to look for."""
        size = len(buffer)
        cut = trailing_run_start(buffer)
        secrets = self._secrets
        if secrets is not None:
            cut = min(cut, size - secrets.pending_prefix(buffer))
        spans = (
            []
            if quiet
            else sorted(credential_spans(buffer), key=lambda span: span.start, reverse=True)
        )
        cut = self._settle(buffer, _run_start(buffer, cut))
        # One sweep, latest start first: a span that starts at or after the cut cannot contain
        # it, and moving the cut left can only bring spans that start earlier into play.
        for span in spans:
            if span.start < cut and (cut < span.end or span.end == size):
                cut = self._settle(buffer, _run_start(buffer, span.start))
        self._wake = _wake_characters(buffer, spans, cut)
        return cut

    def _settle(self, buffer: str, cut: int) -> int:
        """``cut`` moved back until no occurrence of a secret straddles it."""
        secrets = self._secrets
        if secrets is None:
            return cut
        while (straddling := secrets.straddling_start(buffer, cut)) is not None:
            cut = _run_start(buffer, straddling)
        return cut

    def _bound(self) -> str:
        """Mask the carry if it outgrew its bound; return what to publish for it."""
        if len(self._carry) <= self._max_carry:
            return ""
        self._masking = True
        self._mask_closers = self._wake
        self._carry = ""
        self._wake = None
        self._next_scan = 0
        # An open PEM block is the only construct that waits for a dash.
        return PRIVATE_KEY_MARKER if self._mask_closers == PEM_CLOSERS else REDACTED

    def _skip_masked(self, delta: str) -> str:
        """Drop the masked part of ``delta``; return what follows it (empty if all is masked)."""
        if self._mask_closers is None:
            match = _WHITESPACE_RE.search(delta)
            index = match.start() if match is not None else -1
        else:
            found = [i for i in (delta.find(c) for c in self._mask_closers) if i >= 0]
            index = min(found) if found else -1
        if index < 0:
            return ""
        self._masking = False
        return delta[index:]


def _run_start(text: str, index: int) -> int:
    """``index`` moved back to just after the whitespace before it (or to 0).

    Only ASCII whitespace counts here, so the cut may land further back than a Unicode space
    would allow: holding more is always safe, and each lookup is a few ``rfind`` calls.
    """
    if index <= 0:
        return 0
    if text[index - 1] in _ASCII_WHITESPACE:
        return index
    return max(text.rfind(c, 0, index) for c in _ASCII_WHITESPACE) + 1


def _wake_characters(buffer: str, spans: list[Span], cut: int) -> str | None:
    """The characters without which nothing held at ``cut`` can be released, if a construct
    that runs to a newline or a quote holds it (None: any whitespace may release it).

    A span that reaches the end of the buffer and starts in the run at ``cut`` keeps the cut
    where it is for as long as it stays open, and only one of its closers can close it.
    """
    size = len(buffer)
    for span in spans:
        open_here = span.closers is not None and span.end == size and span.start >= cut
        if open_here and _run_start(buffer, span.start) <= cut:
            return span.closers
    return None
