"""Writing the JSON contract's documents (:mod:`baton.views.contract`) to a verb's output:
compact, one object per line (orjson), UTF-8."""

from __future__ import annotations

from typing import IO, Any

import orjson


def json_requested(words: list[str]) -> bool:
    """Whether the command line asks for JSON output (``--json``, ``--format json``,
    ``--format=json``), read from the words themselves so that a usage error, found before
    the arguments are parsed, is reported in the format asked for."""
    for index, word in enumerate(words):
        if word == "--":
            return False
        if word == "--json" or word == "--format=json":
            return True
        if word == "--format" and index + 1 < len(words) and words[index + 1] == "json":
            return True
    return False


def write_json(stream: IO[str], value: Any) -> None:
    """``value`` as one compact JSON line on ``stream`` (flushed)."""
    line = orjson.dumps(value) + b"\n"
    buffer = getattr(stream, "buffer", None)
    if buffer is not None:
        stream.flush()
        buffer.write(line)
    else:
        stream.write(line.decode())
    stream.flush()
