"""Writing the JSON contract's documents (:mod:`baton.views.contract`) to a verb's output:
compact, one object per line (orjson), UTF-8."""

from __future__ import annotations

from typing import IO, Any

import orjson


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
