"""write, shell and the permission variants through a real pipe."""

from __future__ import annotations

import asyncio
import os
import uuid
from typing import Any

import pytest

from baton.agents.scripted.tools import UUID_NAMESPACE

DEFAULT_OPTIONS = [
    {"optionId": "allow-always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
]


async def test_write_allowed_writes_inside_cwd(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    (agent.cwd / "old.txt").write_text("before\n")
    result = await agent.prompt(session, "write old.txt after\\n; write sub/dir/new.txt fresh")
    assert result == {"stopReason": "end_turn"}
    path = str(agent.cwd / "old.txt")
    updates = agent.updates(session)
    assert updates[0] == {
        "sessionUpdate": "tool_call",
        "toolCallId": "call_1",
        "title": "Write old.txt",
        "name": "Write",
        "kind": "edit",
        "status": "pending",
        "content": [{"type": "diff", "path": path, "oldText": "before\n", "newText": "after\n"}],
        "locations": [{"path": path}],
        "rawInput": {"path": path, "content": "after\n"},
    }
    assert updates[1] == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "call_1",
        "status": "completed",
        "rawOutput": {"outcome": "allowed", "optionId": "allow", "kind": "allow_once", "bytes": 6},
    }
    assert updates[2]["content"][0]["oldText"] is None
    assert updates[3]["status"] == "completed"
    request = agent.permission_requests[0]
    assert request.params == {
        "sessionId": session,
        "toolCall": {"toolCallId": "call_1"},
        "options": DEFAULT_OPTIONS,
    }
    assert request.id == 0 and agent.permission_requests[1].id == 1
    assert (agent.cwd / "old.txt").read_text() == "after\n"
    assert (agent.cwd / "sub" / "dir" / "new.txt").read_text() == "fresh"


@pytest.mark.parametrize("answer", ["reject_once", "cancelled"])
async def test_write_refused_fails_and_writes_nothing(spawn: Any, answer: str) -> None:
    agent = await spawn()
    session = await agent.start()
    if answer == "cancelled":
        agent.answer_cancelled()
    else:
        agent.answer_selecting(answer)
    assert await agent.prompt(session, "write a.txt x; echo after") == {"stopReason": "end_turn"}
    update = agent.updates(session)[1]
    assert update["status"] == "failed"
    expected = (
        {"outcome": "cancelled"}
        if answer == "cancelled"
        else {"outcome": "rejected", "optionId": "reject", "kind": "reject_once"}
    )
    assert update["rawOutput"] == expected
    assert agent.text(session) == "after"
    assert not (agent.cwd / "a.txt").exists()


async def test_reject_ends_turn_like_codex(spawn: Any) -> None:
    agent = await spawn("--reject-ends-turn")
    session = await agent.start()
    agent.answer_selecting("reject_once")
    assert await agent.prompt(session, "write a.txt x; echo never") == {"stopReason": "cancelled"}
    assert agent.text(session) == ""


@pytest.mark.parametrize("path", ["../escape.txt", "/etc/passwd-scripted", "link/out.txt", "."])
async def test_write_outside_cwd_is_refused_without_asking(spawn: Any, path: str) -> None:
    agent = await spawn()
    outside = agent.cwd.parent / f"outside-{uuid.uuid4().hex}"
    outside.mkdir()
    os.symlink(outside, agent.cwd / "link")
    session = await agent.start()
    assert await agent.prompt(session, f"write {path} nope") == {"stopReason": "end_turn"}
    call, update = agent.updates(session)
    assert call["sessionUpdate"] == "tool_call" and "content" not in call
    assert update["status"] == "failed"
    assert update["rawOutput"]["outcome"] == "refused"
    assert agent.permission_requests == []
    assert list(outside.iterdir()) == []
    assert not (agent.cwd.parent / "escape.txt").exists()


async def test_write_through_a_symlinked_file_is_refused(spawn: Any) -> None:
    agent = await spawn()
    target = agent.cwd.parent / f"target-{uuid.uuid4().hex}"
    target.write_text("keep")
    os.symlink(target, agent.cwd / "innocent.txt")
    session = await agent.start()
    await agent.prompt(session, "write innocent.txt overwritten")
    assert agent.updates(session)[1]["rawOutput"]["outcome"] == "refused"
    assert target.read_text() == "keep"


async def test_full_tool_call_flag(spawn: Any) -> None:
    agent = await spawn("--permission-tool-call", "full")
    session = await agent.start()
    await agent.prompt(session, "write a.txt hi")
    tool_call = agent.permission_requests[0].params["toolCall"]
    expected = dict(agent.updates(session)[0])
    del expected["sessionUpdate"]
    assert tool_call == expected


async def test_shell_never_executes(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    marker = agent.cwd / "marker"
    assert await agent.prompt(session, f"shell touch {marker}") == {"stopReason": "end_turn"}
    call, update = agent.updates(session)
    assert call == {
        "sessionUpdate": "tool_call",
        "toolCallId": "call_1",
        "title": f"touch {marker}",
        "name": "Bash",
        "kind": "execute",
        "status": "pending",
        "content": [
            {"type": "content", "content": {"type": "text", "text": f"Run: touch {marker}"}}
        ],
        "rawInput": {"command": f"touch {marker}"},
    }
    assert update["status"] == "completed"
    assert update["rawOutput"] == {
        "outcome": "allowed",
        "optionId": "allow",
        "kind": "allow_once",
        "executed": False,
        "wouldRun": f"touch {marker}",
    }
    assert not marker.exists()


async def test_permission_without_prior_tool_call(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    await agent.prompt(session, "permission no_tool_call")
    request = agent.permission_requests[0]
    assert request.params["toolCall"] == {
        "toolCallId": "call_1",
        "title": "Permission check (no_tool_call)",
        "kind": "other",
        "status": "pending",
        "rawInput": {"variant": "no_tool_call"},
    }
    assert agent.kinds(session) == ["tool_call", "tool_call_update"]
    assert agent.updates(session)[0]["status"] == "in_progress"
    assert agent.updates(session)[1]["status"] == "completed"


async def test_permission_reject_named_cancel(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    agent.answer_selecting("reject_once")
    await agent.prompt(session, "permission cancel_id")
    assert agent.permission_requests[0].params["options"] == [
        {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
        {"optionId": "cancel", "name": "Cancel", "kind": "reject_once"},
    ]
    assert agent.updates(session)[1]["rawOutput"] == {
        "outcome": "rejected",
        "optionId": "cancel",
        "kind": "reject_once",
    }


async def test_permission_uuid_option_ids(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    agent.answer_selecting("allow_always")
    await agent.prompt(session, "permission uuid_ids")
    options = agent.permission_requests[0].params["options"]
    assert [o["kind"] for o in options] == [
        "allow_once",
        "allow_always",
        "reject_once",
        "reject_always",
    ]
    assert [o["optionId"] for o in options] == [
        str(uuid.uuid5(UUID_NAMESPACE, f"call_1:{o['kind']}")) for o in options
    ]
    assert agent.updates(session)[1]["status"] == "completed"


async def test_permission_always_only(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    agent.answer_selecting("allow_once")  # none offered: the test client answers cancelled
    await agent.prompt(session, "permission always_only")
    assert [o["kind"] for o in agent.permission_requests[0].params["options"]] == [
        "allow_always",
        "reject_always",
    ]
    assert agent.updates(session)[1]["rawOutput"] == {"outcome": "cancelled"}


async def test_an_option_that_was_not_offered_is_invalid(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()

    async def bogus(request: Any) -> dict[str, Any]:
        return {"outcome": {"outcome": "selected", "optionId": "not-offered"}}

    agent.answer = bogus
    await agent.prompt(session, "write a.txt x")
    assert agent.updates(session)[1]["rawOutput"] == {
        "outcome": "invalid",
        "optionId": "not-offered",
    }
    assert not (agent.cwd / "a.txt").exists()


async def test_many_pending_permission_requests(spawn: Any) -> None:
    agent = await spawn("--request-ids", "uuid")
    session = await agent.start()
    release = asyncio.Event()
    seen: list[Any] = []

    async def gated(request: Any) -> dict[str, Any]:
        seen.append(request)
        if len(seen) == 4:
            release.set()
        await release.wait()
        # Reject the second one only.
        kind = (
            "reject_once" if request.params["toolCall"]["toolCallId"] == "call_2" else "allow_once"
        )
        option = next(o for o in request.params["options"] if o["kind"] == kind)
        return {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}

    agent.answer = gated
    assert await agent.prompt(session, "permission many 4") == {"stopReason": "end_turn"}
    assert len(seen) == 4
    assert all(isinstance(r.id, str) and uuid.UUID(r.id) for r in seen)
    assert len({r.id for r in seen}) == 4
    updates = agent.updates(session)
    assert [u["sessionUpdate"] for u in updates[:4]] == ["tool_call"] * 4
    status = {u["toolCallId"]: u["status"] for u in updates[4:]}
    assert status == {
        "call_1": "completed",
        "call_2": "failed",
        "call_3": "completed",
        "call_4": "completed",
    }


async def test_cancel_while_a_permission_is_pending(spawn: Any) -> None:
    agent = await spawn()
    session = await agent.start()
    answered = asyncio.Event()

    async def wait_for_cancel(request: Any) -> dict[str, Any]:
        await answered.wait()
        return {"outcome": {"outcome": "cancelled"}}

    agent.answer = wait_for_cancel
    request_id = await agent.send_prompt(session, "write a.txt x; echo never")
    await agent.until(lambda: len(agent.permission_requests) == 1)
    await agent.cancel(session)
    answered.set()
    assert await agent.conn.await_response(request_id, timeout=20) == {"stopReason": "cancelled"}
    assert agent.updates(session)[-1]["status"] == "failed"
    assert agent.text(session) == ""


async def test_cancel_requests_flag_sends_cancel_request(spawn: Any) -> None:
    agent = await spawn("--cancel-requests")
    session = await agent.start()
    never = asyncio.Event()

    async def stuck(request: Any) -> dict[str, Any]:
        await never.wait()
        return {}

    agent.answer = stuck
    request_id = await agent.send_prompt(session, "write a.txt x")
    await agent.until(lambda: len(agent.permission_requests) == 1)
    await agent.cancel(session)
    # Baton's connection answers the cancelled inbound request -32800: outcome cancelled.
    assert await agent.conn.await_response(request_id, timeout=20) == {"stopReason": "cancelled"}
    assert agent.updates(session)[-1]["rawOutput"] == {"outcome": "cancelled"}
