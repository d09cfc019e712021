"""Credential redaction in free text: stderr tails, non-JSON lines, every JSON string leaf.

Rules, applied in this order (each is one precompiled pass):

1. the exact :class:`~baton.redaction.secret_values.SecretValues`, longest first (done
   first, so no later rule can split a known secret and leave part of it behind);
2. PEM private-key blocks, BEGIN line through END line (or the end of the text);
3. URL userinfo: ``https://user:pass@host`` becomes ``https://[REDACTED]@host``;
4. ``Bearer <token>`` and ``Basic <token>`` (``Basic`` only when the token looks encoded, so
   "Basic Authentication" survives);
5. ``key=value`` and ``key: value`` where the key is credential-like (``api_key=...``,
   ``"password": "..."``, ``--token=...``, ``GITHUB_TOKEN=...``), and ``Authorization:``,
   ``Proxy-Authorization:``, ``Cookie:`` and ``Set-Cookie:`` headers, whose value runs to the
   end of the line (or of the quoted string the header opens);
6. the credential shapes of :mod:`baton.redaction.shapes`, AWS key id + secret pairs, and JWTs.

Cost. Every pattern is free of nested or overlapping quantifiers, keys are at most
:data:`MAX_KEY_CHARS` long, shape bodies are possessive single classes behind literal-first
branches, and a failed attempt can only rescan a bounded stretch or the run it started in, so
redaction is linear in the length of the text (docs/redaction.md gives the argument). A cheap
scan per rule skips the rules that cannot apply. Redaction is idempotent.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from baton.redaction.lazy_pattern import lazy_compile
from baton.redaction.markers import PRIVATE_KEY_MARKER, REDACTED
from baton.redaction.names import (
    is_credential_name,
    is_header_credential_name,
    may_end_with_credential_name,
)
from baton.redaction.secret_values import SecretValues
from baton.redaction.shapes import (
    ALPHABETS,
    HINT_CHARS,
    HINTS_PATTERN,
    SHAPES,
    SHAPES_PATTERN,
    Alphabet,
)

#: Longest key a ``key=value`` rule considers. Bounds the work of one attempt (a longer run of
#: name characters is not a key), which keeps the pass linear on adversarial input.
MAX_KEY_CHARS: Final = 64

#: Shortest token after ``Bearer`` or ``Basic`` that is redacted: real tokens are far longer,
#: and shorter words after "bearer" or "basic" in prose are left alone.
MIN_AUTH_TOKEN_CHARS: Final = 8

#: How far back from the end of a stream's text a pending ``key`` (a credential name followed
#: only by spaces, its separator still to come) is looked for.
_PENDING_KEY_WINDOW: Final = MAX_KEY_CHARS + 4

_URL_USERINFO_RE: Final = re.compile(
    r"(?<![A-Za-z0-9+.\-])(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]{0,31}://)"
    r"(?P<userinfo>[^\s/?#\"'<>\\]*)@"
)

_AUTH_SCHEME_RE: Final = re.compile(
    r"(?i)(?<![\w\-])(?P<scheme>bearer|basic)(?P<space>[ \t]*)(?P<token>[A-Za-z0-9._~+/=\-]*)"
)

# A key: at most MAX_KEY_CHARS name characters, starting where a run of them starts.
_KEY: Final = r"(?<![\w.\-])(?P<key>-{0,2}[A-Za-z_][\w.\-]{0," + str(MAX_KEY_CHARS - 1) + "})"

_KV_HEAD_RE: Final = re.compile(_KEY + r"(?![\w.\-])(?P<close>\\?[\"'])?[ \t]*(?P<sep>[:=])[ \t]*")

_ESCAPED_QUOTED_RE: Final = re.compile(r'\\"(?P<inner>(?:[^"\\\r\n]|\\(?!")[^\r\n])*)(?:\\")?')
_DOUBLE_QUOTED_RE: Final = re.compile(r'"(?P<inner>(?:[^"\\\r\n]|\\[^\r\n])*)"?')
_SINGLE_QUOTED_RE: Final = re.compile(r"'(?P<inner>[^'\r\n]*)'?")
# A bare value ends at whitespace or ``, ; & " ' } ] ) >``, except that a redaction marker
# inside it is taken whole: stopping at a marker's ``]`` would leave the marker's end behind,
# which a second pass (or another rule, such as URL userinfo around it) would redact
# differently; redaction must be idempotent.
_BARE_RE: Final = re.compile(r"(?:\[REDACTED(?: [A-Z]+)*\]|[^\s,;&\"'}\])>])*")
_LINE_REST_RE: Final = re.compile(r"[^\r\n]*")
_QUOTED_LINE_REST_RE: Final = re.compile(r'(?:[^"\\\r\n]|\\[^\r\n])*')
_MARKER_RE: Final = re.compile(r"\[REDACTED(?: [A-Z]+)*\]")

# The key shapes of the table (shapes.py), an AWS access key id followed by its secret key,
# and JWTs. Every branch starts with a literal character, so the engine skips positions that
# start no branch. The AWS pair comes first: at a position where it matches, it takes the id
# and the secret together.
_AWS_PAIR: Final = r"A(?<![A-Za-z0-9].)(?:KIA|SIA)[A-Z0-9]{16}[\s\"',:;=|]{1,8}+[A-Za-z0-9/+]{40}"
# A JWT may start only where a run of its characters starts: a failed attempt scans that run,
# so starting inside runs too would make the pass quadratic.
_JWT: Final = (
    r"e(?<![A-Za-z0-9_\-].)yJ[A-Za-z0-9_\-]{4,}+\.eyJ[A-Za-z0-9_\-]{4,}+\.[A-Za-z0-9_\-]*+"
)
# Shapes whose secret part follows a non-secret part, anchored on the literal between them (the
# non-secret part before the anchor is left): a Telegram bot token's secret after the bot id and
# its colon (``123456789:AA...``), an Azure AD client secret (``abc8Q~...``), and a Terraform
# Cloud token (``<14>.atlasv1.<secret>``). Fixed-width look-behinds only.
_CONTEXT_SHAPES: Final = (
    r":(?<=[0-9]{6}:)AA[A-Za-z0-9_\-]{30,}+",
    r"Q(?<=[A-Za-z0-9_~.]{3}[0-9]Q)~[A-Za-z0-9_~.\-]{30,}+",
    r"\.(?<=[A-Za-z0-9]{14}\.)atlasv1\.[A-Za-z0-9_=\-]{60,}+",
)
_CONTEXT_HINTS: Final = r":AA|Q~|\.atlasv1\."
# The big alternations compile on first use (a verb that never redacts never pays for them).
_SHAPES_RE: Final = lazy_compile("|".join([_AWS_PAIR, SHAPES_PATTERN, _JWT, *_CONTEXT_SHAPES]))

# Where a key shape may start (its head) or a JWT: a text without any holds no shape.
_SHAPE_HINT_RE: Final = lazy_compile(f"{HINTS_PATTERN}|J(?<=eyJ)|{_CONTEXT_HINTS}")

_TOKEN_CHARS_RE: Final = re.compile(r"[A-Za-z0-9_.\-+/=]*")
_TRAILING_RUN_RE: Final = re.compile(r"\S*")

_PENDING_KEY_RE: Final = re.compile(_KEY + r"(?:\\?[\"'])?\Z")

# PEM private-key blocks: a BEGIN line naming a private key (RSA, EC, DSA, OPENSSH, ENCRYPTED,
# PGP ... BLOCK, plain PKCS#8; five dashes, or four and a space as SSH2 writes them), through
# the matching END line. The body is never matched by a pattern: the END line is searched for
# from the BEGIN line on, so a block costs one scan. A block with no END line runs to the end
# of the text.
_PEM_KIND: Final = r"BEGIN (?:[A-Z0-9]{1,16} ){0,3}PRIVATE KEY(?: BLOCK)?"
_PEM_BEGIN_RE: Final = re.compile(r"(?:-{1,5} ?)?" + _PEM_KIND + r"(?: ?-{1,5})?")
_PEM_END_RE: Final = re.compile(
    r"(?:-{1,5} ?)?END (?:[A-Z0-9]{1,16} ){0,3}PRIVATE KEY(?: BLOCK)?(?: ?-{1,5})?"
)
# A BEGIN line still arriving at the end of a stream's text ("-----BEGIN RSA PRIV").
_PEM_PENDING_RE: Final = re.compile(r"(?:-{1,5} ?)?BEGIN(?: [A-Z0-9 ]{0,48})?\Z")
#: How far back from the end of a text a BEGIN line still arriving is looked for.
_PEM_PENDING_WINDOW: Final = 64
# Key-body lines (base64 and line breaks) right before an END line that has no BEGIN line.
_PEM_BODY_RE: Final = re.compile(r"[A-Za-z0-9+/=\r\n]*")
#: Fewest body characters before a lone END line that make it the end of a key whose BEGIN line
#: was cut off. Fewer are a mention of an END line in text, not a key body.
MIN_ORPHAN_PEM_BODY_CHARS: Final = 16
#: What can close an open PEM block in a stream: its END line starts (and ends) with dashes.
PEM_CLOSERS: Final = "-"

# Cheap scan that tells whether the auth rule can apply at all (one pass without backtracking).
_AUTH_HINT_RE: Final = re.compile(r"[Bb][Ee][Aa][Rr][Ee][Rr]|[Bb][Aa][Ss][Ii][Cc]")

# Whatever a pattern rule or a credential construct needs in order to start: the separators of
# assignments, headers and URLs, ``@``, the auth words, PEM BEGIN lines and the shape heads (one
# scan; every branch starts with a literal). Every hint holds one of ``_HINT_CHARS``, whose
# one-character scans are faster still, so text without any never reaches the alternation.
_HINT_CHARS: Final = "".join(sorted(set(":=@BbJQ" + HINT_CHARS)))
_HINT_CHAR_RE: Final = re.compile("[" + re.escape(_HINT_CHARS) + "]")
_ANY_HINT_RE: Final = lazy_compile(
    r":|=|@|B(?:EGIN|[Ee][Aa][Rr][Ee][Rr]|[Aa][Ss][Ii][Cc])|b(?:[Ee][Aa][Rr][Ee][Rr]|[Aa][Ss][Ii][Cc])"
    f"|{HINTS_PATTERN}|J(?<=eyJ)|{_CONTEXT_HINTS}"
)

_LINE_CLOSERS: Final = "\r\n"


@dataclass(frozen=True, slots=True)
class Span:
    """Where a credential construct sits in a text: ``[start, end)``.

    ``closers`` names the characters whose arrival can end the construct when it is still open
    at the end of a stream (a header runs to a newline, a quoted value to its quote); None means
    it ends at the next whitespace.
    """

    start: int
    end: int
    closers: str | None = None


@dataclass(frozen=True, slots=True)
class _Assignment:
    """A credential-named ``key=value``: the value's inner text is ``[inner_start, inner_end)``."""

    key_start: int
    inner_start: int
    inner_end: int
    end: int
    closers: str | None
    bare: bool


def _assignments(text: str) -> Iterator[_Assignment]:
    """Every ``key=value`` / ``key: value`` in ``text`` whose key is credential-like."""
    position = 0
    while True:
        head = _KV_HEAD_RE.search(text, position)
        if head is None:
            return
        position = head.end()
        key = head.group("key")
        if not is_credential_name(key):
            continue
        start = head.end()
        key_start = head.start("key")
        if head.group("sep") == ":" and key_start > 0 and text[key_start - 1] == "/":
            # The last part of a path before a colon ("/etc/passwd: Permission denied", the
            # way errors name files) is not a key; ``path/password=...`` still is one.
            continue
        if (
            head.group("sep") == ":"
            and head.group("close") is None
            and is_header_credential_name(key)
        ):
            quoted = key_start > 0 and text[key_start - 1] == '"'
            rest = (_QUOTED_LINE_REST_RE if quoted else _LINE_REST_RE).match(text, start)
            assert rest is not None  # both patterns match the empty string
            end = rest.end()
            inner_end = len(text[start:end].rstrip())
            yield _Assignment(
                key_start,
                start,
                start + inner_end,
                end,
                '"\r\n' if quoted else _LINE_CLOSERS,
                False,
            )
            position = max(position, end)
            continue
        found = _value_assignment(text, key_start, start)
        yield found
        position = max(position, found.end)


def _value_assignment(text: str, key_start: int, start: int) -> _Assignment:
    """The value that starts at ``start``: quoted (three spellings) or bare."""
    lead = text[start : start + 2]
    if lead == '\\"':
        m = _ESCAPED_QUOTED_RE.match(text, start)
        closers: str | None = '"' + _LINE_CLOSERS
    elif lead[:1] == '"':
        m = _DOUBLE_QUOTED_RE.match(text, start)
        closers = '"' + _LINE_CLOSERS
    elif lead[:1] == "'":
        m = _SINGLE_QUOTED_RE.match(text, start)
        closers = "'" + _LINE_CLOSERS
    else:
        marker = _MARKER_RE.match(text, start)
        rest = _BARE_RE.match(text, marker.end() if marker else start)
        assert rest is not None  # matches the empty string
        return _Assignment(key_start, start, rest.end(), rest.end(), None, True)
    assert m is not None  # the lead character was checked above
    return _Assignment(key_start, m.start("inner"), m.end("inner"), m.end(), closers, False)


def _redact_assignments(text: str) -> str:
    pieces: list[str] = []
    position = 0
    for found in _assignments(text):
        inner = text[found.inner_start : found.inner_end]
        if not inner or _MARKER_RE.fullmatch(inner) or found.inner_start < position:
            continue
        pieces.append(text[position : found.inner_start])
        pieces.append(REDACTED)
        position = found.inner_end
    if not pieces:
        return text
    pieces.append(text[position:])
    return "".join(pieces)


def _looks_encoded(token: str) -> bool:
    """True when a ``Basic`` token looks like base64 rather than an English word."""
    return any(c.isdigit() or c in "+/=" for c in token) or any(c.isupper() for c in token[1:])


def _auth_scheme(match: re.Match[str]) -> str:
    token = match.group("token")
    if not match.group("space") or len(token) < MIN_AUTH_TOKEN_CHARS:
        return match.group(0)
    if match.group("scheme").lower() == "basic" and not _looks_encoded(token):
        return match.group(0)
    return f"{match.group('scheme')}{match.group('space')}{REDACTED}"


def _userinfo(match: re.Match[str]) -> str:
    if not match.group("userinfo"):
        return match.group(0)
    return f"{match.group('scheme')}{REDACTED}@"


def _private_key_blocks(text: str) -> Iterator[tuple[int, int, bool]]:
    """Every PEM private-key block in ``text``: ``(start, end, closed)``; an unclosed block runs
    to the end of the text. A text that starts inside a block (a tail whose BEGIN line was cut
    off) has an END line with no BEGIN before it: the key-body lines right before it (at least
    :data:`MIN_ORPHAN_PEM_BODY_CHARS` base64 characters and line breaks) and the END line form a
    block too. One scan: each search starts where the previous one ended."""
    position = 0
    while True:
        begin = _PEM_BEGIN_RE.search(text, position)
        limit = len(text) if begin is None else begin.start()
        for orphan in _PEM_END_RE.finditer(text, position, limit):
            body = _reversed_match_length(_PEM_BODY_RE, text[position : orphan.start()])
            if body >= MIN_ORPHAN_PEM_BODY_CHARS:
                start = orphan.start() - body
                if start > 0 and text[start - 1] not in "\r\n":
                    # The run began inside a line of text: the body starts on the next line.
                    line = text.find("\n", start, orphan.start())
                    start = line + 1 if line >= 0 else start
                yield start, orphan.end(), True
            position = orphan.end()
        if begin is None:
            return
        end = _PEM_END_RE.search(text, begin.end())
        if end is None:
            yield begin.start(), len(text), False
            return
        yield begin.start(), end.end(), True
        position = end.end()


def _redact_private_keys(text: str) -> str:
    pieces: list[str] = []
    position = 0
    for start, end, _closed in _private_key_blocks(text):
        pieces.append(text[position:start])
        pieces.append(PRIVATE_KEY_MARKER)
        position = end
    if not pieces:
        return text
    pieces.append(text[position:])
    return "".join(pieces)


def _private_key_spans(text: str) -> Iterator[Span]:
    """PEM blocks as stream spans: a block still open holds everything from its BEGIN line
    until a dash (its END line) arrives; a BEGIN line still arriving holds too."""
    last_end = 0
    for start, end, closed in _private_key_blocks(text):
        yield Span(start, end, None if closed else PEM_CLOSERS)
        last_end = end
    tail = max(last_end, len(text) - _PEM_PENDING_WINDOW)
    pending = _PEM_PENDING_RE.search(text, tail)
    if pending is not None:
        yield Span(pending.start(), len(text))


def redact_text(text: str, secrets: SecretValues | None = None) -> str:
    """Return ``text`` with every credential the rules recognise replaced by ``[REDACTED]``.

    ``secrets`` are exact values to remove as well (a profile's sensitive environment values).
    The result is stable: redacting it again changes nothing.
    """
    if secrets:
        text = secrets.mask(text)
    if "PRIVATE KEY" in text:
        text = _redact_private_keys(text)
    if "@" in text and "://" in text:
        text = _URL_USERINFO_RE.sub(_userinfo, text)
    if _may_hold_auth_word(text):
        text = _AUTH_SCHEME_RE.sub(_auth_scheme, text)
    if ":" in text or "=" in text:
        text = _redact_assignments(text)
    if _may_hold_shape(text):
        text = _SHAPES_RE.sub(REDACTED, text)
    return text


#: From this length on, the hint scans of :func:`redact_text` start with single-character
#: searches (memchr: many times faster per character than a regex scan, but several calls).
_LONG_TEXT_CHARS: Final = 4096

#: Characters one of which every match of ``_SHAPES_RE`` holds: the anchor character of each
#: shape's prefix, the ``J`` of a JWT's ``eyJ``, and the anchors of the context shapes.
_SHAPE_CHARS: Final = tuple(sorted(set(HINT_CHARS + "J:Q.")))


def _may_hold_auth_word(text: str) -> bool:
    """False only when ``text`` holds no ``bearer`` or ``basic`` in any ASCII case (lowering
    maps those letters exactly; other characters that lower to them only add false hits)."""
    if len(text) < _LONG_TEXT_CHARS:
        return _AUTH_HINT_RE.search(text) is not None
    if "b" not in text and "B" not in text:
        return False
    lowered = text.lower()
    return "bearer" in lowered or "basic" in lowered


def _may_hold_shape(text: str) -> bool:
    """False only when no key shape can start in ``text``."""
    if len(text) >= _LONG_TEXT_CHARS and not any(char in text for char in _SHAPE_CHARS):
        return False
    return _SHAPE_HINT_RE.search(text) is not None


def credential_spans(text: str) -> list[Span]:
    """Every place in ``text`` where a pattern rule applies or could still apply.

    A stream uses this to choose where it may cut: never inside a span, never after the start
    of a span that reaches the end of the text (it may still grow). Includes ``Bearer``/``Basic``
    words whatever follows them, and a credential name at the very end that is followed only by
    spaces (its separator may be in the next delta).
    """
    spans: list[Span] = []
    if "BEGIN" in text or "PRIVATE KEY" in text:
        spans.extend(_private_key_spans(text))
    if "@" in text and "://" in text:
        spans.extend(Span(m.start(), m.end()) for m in _URL_USERINFO_RE.finditer(text))
    if _AUTH_HINT_RE.search(text) is not None:
        spans.extend(Span(m.start(), m.end()) for m in _AUTH_SCHEME_RE.finditer(text))
    if _SHAPE_HINT_RE.search(text) is not None:
        spans.extend(Span(m.start(), m.end()) for m in _SHAPES_RE.finditer(text))
    if ":" in text or "=" in text:
        spans.extend(Span(a.key_start, a.end, a.closers) for a in _assignments(text))
    if text.endswith((" ", "\t")):
        pending = _pending_key_start(text)
        if pending is not None:
            spans.append(Span(pending, len(text)))
    return spans


def _pending_key_start(text: str) -> int | None:
    """Where a credential name that ends ``text`` (followed only by spaces, its separator still
    to come) starts, or None."""
    stripped = text.rstrip(" \t")
    pending = _PENDING_KEY_RE.search(stripped, max(0, len(stripped) - _PENDING_KEY_WINDOW))
    if pending is not None and is_credential_name(pending.group("key")):
        return pending.start()
    return None


def _has_hint_char(text: str) -> bool:
    """True when ``text`` holds a character of ``_HINT_CHAR_RE``."""
    if len(text) >= _LONG_TEXT_CHARS:
        return any(char in text for char in _HINT_CHARS)
    return _HINT_CHAR_RE.search(text) is not None


def may_hold_credential(text: str) -> bool:
    """False only when no pattern rule applies to ``text`` and no credential construct can
    start in it: then ``redact_text(text)`` is ``text`` (exact secrets aside) and
    ``credential_spans(text)`` is empty. One scan for the characters and words every rule
    needs, plus the pending-key check when ``text`` ends with a space or a tab."""
    if _has_hint_char(text) and _ANY_HINT_RE.search(text) is not None:
        return True
    return (
        text.endswith((" ", "\t"))
        and may_end_with_credential_name(text)
        and _pending_key_start(text) is not None
    )


#: Body characters a shape with a short prefix (under :data:`_DISTINCT_PREFIX_CHARS`, such as
#: ``sk-``, ``SK`` or ``hf_``) needs after its prefix before the end of a stream counts as that
#: shape cut short: fewer reveal almost nothing, and ordinary words start that way ("ACE").
MIN_PARTIAL_BODY_CHARS: Final = 8

#: Prefixes at least this long are distinctive: one body character after one at the end of a
#: stream makes the end an unresolved credential.
_DISTINCT_PREFIX_CHARS: Final = 4

_JWT_START_RE: Final = re.compile(r"(?<![A-Za-z0-9])eyJ(?=[A-Za-z0-9_.\-])")


def partial_shape_start(text: str) -> int | None:
    """Where a well-known key shape (or a ``Bearer`` token) that the end of ``text`` cut short
    begins, or None. Only the run of token characters that ends ``text`` is examined, with
    one ``find`` sweep per shape (so the cost is linear in that run)."""
    tail = _reversed_match_length(_TOKEN_CHARS_RE, text)
    if not tail:
        return None
    size = len(text)
    tail_start = size - tail
    found: int | None = None
    runs: dict[str, int] = {}
    for shape in SHAPES:
        run = runs.get(shape.body.name)
        if run is None:
            run = runs[shape.body.name] = _alphabet_run(shape.body, text, tail_start)
        prefix = shape.prefix
        needed = 1 if len(prefix) >= _DISTINCT_PREFIX_CHARS else MIN_PARTIAL_BODY_CHARS
        if run < needed:
            continue
        low = max(tail_start, size - run - len(prefix))
        high = size - needed - len(prefix)  # the latest start that leaves ``needed`` characters
        if found is not None:
            high = min(high, found - 1)
        index = text.find(prefix, low, high + len(prefix))
        while 0 <= index <= high:
            if (
                not shape.boundary
                or index == 0
                or not text[index - 1].isascii()
                or not (text[index - 1].isalnum())
            ):
                found = index
                break
            index = text.find(prefix, index + 1, high + len(prefix))
    jwt = _JWT_START_RE.search(text, tail_start)
    if jwt is not None and (found is None or jwt.start() < found):
        found = jwt.start()
    if found is not None:
        return found
    head = text[:tail_start]
    stripped = head.rstrip(" \t")
    if len(stripped) < len(head) and stripped[-6:].lower() == "bearer":
        before = stripped[-7:-6]
        if not before or not (before.isalnum() or before in "_-"):
            return len(stripped) - 6
    return None


_ALPHABET_RUN_RES: Final = {
    alphabet.name: lazy_compile(alphabet.regex + "*") for alphabet in ALPHABETS
}


def _alphabet_run(alphabet: Alphabet, text: str, start: int) -> int:
    """Length of the longest end of ``text[start:]`` made of ``alphabet``'s characters."""
    return _reversed_match_length(_ALPHABET_RUN_RES[alphabet.name], text[start:])


def _reversed_match_length(regex: re.Pattern[str], text: str) -> int:
    """Length of the longest end of ``text`` made of ``regex``'s characters (one pass)."""
    match = regex.match(text[::-1])
    assert match is not None  # both callers' patterns match the empty string
    return match.end()


def trailing_run_start(text: str) -> int:
    """Index where the whitespace-free run that ends ``text`` begins (``len(text)`` if none)."""
    return len(text) - _reversed_match_length(_TRAILING_RUN_RE, text)
