"""Run events are redacted like the run store before they leave the runtime."""

from __future__ import annotations

import sys
from pathlib import Path

import orjson

from baton.redaction import REDACTED, SecretValues
from baton.runtime.runtime import RunRequest, Runtime
from baton.runtime.turns.events import EVENT_TYPES, RunEvent

AGENT = [sys.executable, "-m", "baton.agents.scripted"]
TOKEN = "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"
EXACT = "orchid-signal-4410-tundra-maple"


def _data(kind: str) -> dict[str, object]:
    text = f"use {TOKEN} and {EXACT}"
    return {
        "toolCallId": "call_1",
        "status": "pending",
        "text": text,
        "title": text,
        "command": text,
        "paths": [f"/work/{EXACT}.txt"],
        "entries": [{"content": text, "status": "pending", "priority": "high"}],
        "used": 42,
        "cost": {"amount": 0.5, "currency": text},
        "message": text,
        "kind": kind,
    }


def test_every_event_type_loses_its_secrets_and_keeps_its_routing() -> None:
    secrets = SecretValues([EXACT])
    for kind in EVENT_TYPES:
        event = RunEvent(kind, "run-1", _data(kind))
        redacted = event.redacted(secrets)
        line = redacted.to_json()
        assert TOKEN.encode() not in line and EXACT.encode() not in line, kind
        assert redacted.to_dict()["runId"] == "run-1" and redacted.type == kind
        assert redacted.data["toolCallId"] == "call_1" and redacted.data["used"] == 42
        assert REDACTED in redacted.data["title"]
        assert event.data["title"] == f"use {TOKEN} and {EXACT}"  # the original is unchanged


async def test_the_library_event_stream_is_redacted(tmp_path: Path) -> None:
    # A tools env value (an exact secret of the lane from this run on) and a shaped token, in
    # every kind of output the scripted agent has: none reaches the library's events.
    tools = tmp_path / "tools.json"
    tools.write_bytes(
        orjson.dumps(
            {"mcpServers": [{"name": "t", "command": sys.executable, "env": {"K": EXACT}}]}
        )
    )
    line = f"{TOKEN} {EXACT}"
    script = "; ".join(
        [f"echo {line}", f"think {line}", f"plan {line} | {TOKEN}", f"title {line}",
         f"shell run {line}", "usage 7 9", "stop end_turn"]
    )  # fmt: skip
    async with Runtime(data_dir=tmp_path / "data") as rt:
        request = RunRequest(
            prompt=script,
            agent_command=AGENT,
            cwd=str(tmp_path),
            tools_file=str(tools),
            policy="full",
            allow_unattended=True,
        )
        events = [event async for event in rt.events(request)]
    kinds = {event.type for event in events}
    assert {"text", "thought", "plan", "session_info", "tool_call", "usage", "result"} <= kinds
    dumped = b"\n".join(event.to_json() for event in events)
    assert TOKEN.encode() not in dumped and EXACT.encode() not in dumped
    assert dumped.count(REDACTED.encode()) >= 6


def test_a_tool_title_or_command_cut_to_its_bound_keeps_no_head_of_a_secret() -> None:
    from baton.redaction import redact_text
    from baton.runtime.turns.turn import tool_call_view

    secrets = SecretValues([EXACT])
    # The secrets straddle the 512-character title bound and the 1024-character command bound.
    title = "t" * 505 + " " + EXACT
    command = "c" * 1015 + " " + TOKEN
    state = {"toolCallId": "call_1", "title": title, "rawInput": {"command": command}}
    view = tool_call_view(state, lambda text: redact_text(text, secrets))
    assert len(view["title"]) <= 512 and EXACT[:6] not in view["title"]
    assert len(view["command"]) <= 1024 and TOKEN[:8] not in view["command"]


def test_a_tool_view_carries_bounded_redacted_diff_texts() -> None:
    from baton.redaction import redact_text
    from baton.runtime.turns.turn import (
        MAX_VIEW_DIFF_FILES,
        MAX_VIEW_DIFF_TEXT_CHARS,
        tool_call_view,
    )

    secrets = SecretValues([EXACT])
    at_cap = "x" * MAX_VIEW_DIFF_TEXT_CHARS
    content = [
        {"type": "diff", "path": "/w/a", "oldText": None, "newText": f"key {EXACT}\n"},
        {"type": "diff", "path": "/w/b", "oldText": at_cap, "newText": "y"},
        {"type": "diff", "path": "/w/c", "oldText": at_cap + "x", "newText": "y"},
        *({"type": "diff", "path": f"/w/{i}", "newText": "z"} for i in range(MAX_VIEW_DIFF_FILES)),
    ]
    state = {"toolCallId": "call_1", "content": content}
    view = tool_call_view(state, lambda text: redact_text(text, secrets))
    changes = view["diff"]["changes"]
    assert view["diff"]["files"] == len(content)
    assert len(changes) == MAX_VIEW_DIFF_FILES
    assert changes[0]["path"] == "/w/a" and changes[0]["oldText"] is None
    assert EXACT not in changes[0]["newText"] and changes[0]["newText"].startswith("key ")
    # cap: carried whole; cap + 1: both sides left out, never cut.
    assert changes[1]["oldText"] == at_cap and not changes[1]["truncated"]
    assert changes[2] == {"path": "/w/c", "oldText": None, "newText": None, "truncated": True}
