"""Redaction work grows linearly with the input, on inputs built to make the shape table, the
PEM rule and the stream's end-of-stream check backtrack.

No absolute time is asserted: each input is redacted at sizes n and 10n in the same process,
and the CPU time must grow by less than :data:`MAX_RATIO` (10 is linear; a quadratic pass gives
about 100). The best of several rounds is kept, so a busy machine does not fail the test.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from baton.redaction import StreamRedactor, redact_text
from baton.redaction.shapes import SHAPES

#: Growth allowed when the input grows tenfold: generous for noise, far below quadratic (100).
MAX_RATIO = 30

SMALL = 20_000
ROUNDS = 3


def _unit_short_of_every_shape() -> str:
    """Every prefix followed by one body character fewer than its shape needs."""
    parts = []
    for shape in SHAPES:
        body = (shape.body.chars * 8)[: shape.min_body - 1]
        parts.append(f"{shape.prefix}{body}")
    return " ".join(parts) + " "


def _unit_glued_prefixes() -> str:
    """Every prefix repeated back to back (each a possible start inside the others)."""
    return "".join(shape.prefix * 3 for shape in SHAPES) + "!"


INPUTS: dict[str, str] = {
    "short-of-every-shape": _unit_short_of_every_shape(),
    "glued-prefixes": _unit_glued_prefixes(),
    "body-runs": "".join((s.body.chars * 4)[:120] + "!" for s in SHAPES),
    "pem-begin-without-end": "-----BEGIN RSA PRIVATE KEY-----\nMIIE ",
    "pem-begin-words": "BEGIN A B C PRIVATE ",
    "pem-end-lines": "QUJDRA" * 10 + "\n-----END PRIVATE KEY-----\n-----END RSA PRIVATE KEY ",
    "jwt-no-second-part": "eyJabcd.eyJ" + "a" * 50 + " ",
    "aws-pair-short": "AKIAQX7RZ2M4N6P8T3V5 " + "a" * 39 + "! ",
    "assignments": "password= token: a=b api_key ",
    "context-anchors": "123456:AA"
    + "a" * 20
    + "abc8Q~"
    + "b" * 20
    + "A" * 14
    + ".atlasv1."
    + "c" * 50,
}


def _cpu(work: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(ROUNDS):
        start = time.process_time()
        work()
        best = min(best, time.process_time() - start)
    return max(best, 1e-4)


def _text(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def _stream(text: str) -> None:
    redactor = StreamRedactor(None)
    for index in range(0, len(text), 997):
        redactor.feed(text[index : index + 997])
    redactor.finish()


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_redact_text_is_linear(name: str) -> None:
    unit = INPUTS[name]
    small, large = _text(unit, SMALL), _text(unit, SMALL * 10)
    ratio = _cpu(lambda: redact_text(large)) / _cpu(lambda: redact_text(small))
    assert ratio < MAX_RATIO, f"{name}: 10x input took {ratio:.1f}x the time"


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_streaming_is_linear(name: str) -> None:
    unit = INPUTS[name]
    small, large = _text(unit, SMALL), _text(unit, SMALL * 10)
    ratio = _cpu(lambda: _stream(large)) / _cpu(lambda: _stream(small))
    assert ratio < MAX_RATIO, f"{name}: 10x input took {ratio:.1f}x the time"


def test_the_end_of_stream_check_is_linear_in_the_held_run() -> None:
    # One whitespace-free run made of a prefix repeated: every occurrence is a possible start of
    # a shape cut short at the end, and the run ends in a character no body takes.
    def held(size: int) -> Callable[[], object]:
        text = _text("glpat-", size) + "!"

        def work() -> object:
            redactor = StreamRedactor(None, max_carry=size * 2)
            redactor.feed(text)
            return redactor.finish()

        return work

    ratio = _cpu(held(SMALL * 10)) / _cpu(held(SMALL))
    assert ratio < MAX_RATIO, f"10x input took {ratio:.1f}x the time"
