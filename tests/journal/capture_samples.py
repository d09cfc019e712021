"""Shared test data for the journal's redaction and shape tests: the messages of the captured
adapter transcripts, and builders of session/update messages (``import capture_samples``:
tests/journal/conftest.py puts this directory on the import path)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from baton.redaction import STREAM_FIELDS

#: The captured adapter payloads (copied from ../shared/acp/captures).
CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "adapters"


def transcript_messages() -> list[dict[str, Any]]:
    """Every message of every captured transcript, in file order."""
    messages = []
    for path in sorted(CAPTURES.glob("*/transcript*.jsonl")):
        for line in path.read_text().splitlines():
            if line.strip():
                record = json.loads(line)
                messages.append(record.get("frame") or record["msg"])
    return messages


def session_update(update: dict[str, Any], session: str = "sess-1") -> dict[str, Any]:
    """A session/update notification carrying ``update``."""
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": session, "update": update},
    }


def restream(message: dict[str, Any], filler: Any) -> dict[str, Any]:
    """``message`` with every non-null top-level stream field of its update set to ``filler``."""
    other = copy.deepcopy(message)
    update = other["params"]["update"]
    for key in list(update):
        if key in STREAM_FIELDS and update[key] is not None:
            update[key] = copy.deepcopy(filler)
    return other
