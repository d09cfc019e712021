"""The parser fixtures stay real: a fresh capture from each adapter (capture.py, through Baton
and the mocks) matches tests/fixtures/adapters apart from session ids, and Baton's wire parsers
read every frame of the fresh transcript."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from capture import FIXTURES, capture, compare
from qualify_drivers import SPECS
from qualify_mocks import MockServer

from baton.wire.capabilities import parse_initialize_result
from baton.wire.permission import parse_permission_request
from baton.wire.session_state import parse_new_session_result
from baton.wire.stop import parse_prompt_result


def _check(profile: str, tmp_path: Path, mocks: dict[str, MockServer]) -> None:
    spec = SPECS[profile]
    mock = mocks[spec.api] if spec.api is not None else None
    files = capture(spec, tmp_path / profile, mock)
    drift = compare(files, FIXTURES / spec.pin.key)
    assert not drift, f"{spec.pin.key} no longer answers like its fixtures:\n" + "\n".join(drift)
    initialized = parse_initialize_result(files["initialize.json"]["result"])
    assert initialized.agent_info is not None and initialized.agent_info.version == spec.pin.version
    parse_new_session_result(files["session_new.json"]["result"])
    transcript: list[dict[str, Any]] = next(v for k, v in files.items() if k.endswith(".jsonl"))
    stops = []
    for record in transcript:
        frame = record["frame"]
        if frame.get("method") == "session/request_permission":
            parse_permission_request(frame["params"])
        result = frame.get("result")
        if isinstance(result, dict) and "stopReason" in result:
            stops.append(parse_prompt_result(result).stop_reason.value)
    assert stops == ["end_turn"], stops


@pytest.mark.qualify("claude", "fixtures: fresh capture matches, parsers read it")
def test_claude_fixtures(tmp_path: Path, mocks: dict[str, MockServer]) -> None:
    _check("claude", tmp_path, mocks)


@pytest.mark.qualify("codex", "fixtures: fresh capture matches, parsers read it")
def test_codex_fixtures(tmp_path: Path, mocks: dict[str, MockServer]) -> None:
    _check("codex", tmp_path, mocks)


@pytest.mark.qualify("fast-agent", "fixtures: fresh capture matches, parsers read it")
def test_fast_agent_fixtures(tmp_path: Path, mocks: dict[str, MockServer]) -> None:
    _check("fast-agent", tmp_path, mocks)
