"""A conversation's history from the store: prompts and replies in order, tool calls once
each with their latest state, permission decisions, and the Markdown export."""

from __future__ import annotations

from pathlib import Path

import pytest

from baton.runtime.conversations.history import conversation_history, history_markdown
from baton.store import NewItem, Store


@pytest.fixture
def store(tmp_path: Path) -> Store:
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    return Store.open(data)


async def test_turns_with_replies_tool_calls_and_decisions(store: Store) -> None:
    store.create_conversation("work", "custom", "/tmp")
    store.release_conversation("work", "IDLE", provider_session_id="p")
    store.claim_conversation("work")
    run = store.create_run("fix it\n# not a heading")
    store.attach_conversation_run("work", run.id)
    store.append_items(
        run.id,
        [
            NewItem("thought", {"text": "hmm"}),
            NewItem("text", {"text": "Looking. "}),
            NewItem(
                "tool_call",
                {"toolCallId": "t1", "kind": "edit", "title": "Edit a.py", "status": "pending"},
            ),
            NewItem("tool_call", {"toolCallId": "t1", "status": "completed"}),
            NewItem("text", {"text": "Done."}),
        ],
    )
    pending = await store.record_interaction(
        run.id,
        7,
        {"toolCallId": "t1"},
        [{"optionId": "ok", "kind": "allow_once"}],
        request_ref=None,
    )
    await store.resolve_interaction(
        pending.id, "RESOLVED", choice="ok", chosen_by="user", response_ref=None
    )
    store.release_conversation("work", "IDLE")
    [turn] = conversation_history(store, "work")
    assert (turn.prompt, turn.reply) == ("fix it\n# not a heading", "Looking. Done.")
    assert [(t.tool_call_id, t.kind, t.title, t.status) for t in turn.tool_calls] == [
        ("t1", "edit", "Edit a.py", "completed")
    ]
    assert [(p.state, p.choice, p.chosen_by) for p in turn.permissions] == [
        ("RESOLVED", "ok", "user")
    ]
    assert turn.to_json()["toolCalls"][0]["toolCallId"] == "t1"
    markdown = history_markdown("work", [turn])
    assert "> # not a heading" in markdown and "\n# not a heading" not in markdown
    assert "- edit: Edit a.py [completed]" in markdown
    assert "- RESOLVED: ok (by user)" in markdown
