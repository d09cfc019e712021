"""claude-agent-acp 0.23.1 through the built-in ``claude`` profile, against the Anthropic mock."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from qualify_checks import (
    aftermath,
    allow_once_name,
    cancel_with_budget,
    cancel_with_sigint,
    cancelled_by_default,
    completed,
    conversation_across_processes,
    ignores_stdin_eof,
    interactions,
    server_states,
)
from qualify_drivers import (
    EXIT_AUTH,
    secret_files,
    survivors,
    updates_after_response,
)
from qualify_installs import CLAUDE
from qualify_mocks import SLOW_TICK_SECONDS, MockServer

from baton.runtime.run import Run
from baton.runtime.runtime import RunRequest, Runtime
from baton.runtime.turns.events import RunEvent

PROFILE = "claude"


def tool_results(mock: MockServer | None) -> list[dict[str, Any]]:
    """The tool_result blocks the agent sent back to the model, in order."""
    assert mock is not None
    found = []
    for request in mock.posts():
        body = request.body if isinstance(request.body, dict) else {}
        messages = body.get("messages") or []
        if messages and isinstance(messages[-1].get("content"), list):
            found += [
                b
                for b in messages[-1]["content"]
                if isinstance(b, dict) and b.get("type") == "tool_result"
            ]
    return found


@pytest.mark.qualify(PROFILE, "doctor --live: READY")
def test_doctor_live_ready(make_rig: Any) -> None:
    rig, baton, _mock = make_rig(PROFILE)
    done, record = baton.doctor()
    assert done.returncode == 0, done.describe()
    assert record["state"] == "READY", record
    assert record["source"] == "env" and record["executable"] == rig.env[CLAUDE.override_env]
    assert record["agent"] == {
        "name": "@zed-industries/claude-agent-acp",
        "version": CLAUDE.version,
    }
    assert any(d["code"] == "LAUNCH_CONTRACT_FOUND" for d in record["diagnostics"]), record
    assert not survivors(CLAUDE, rig.home)
    assert not rig.data.exists() or not secret_files(rig.data, rig.key)


@pytest.mark.qualify(PROFILE, "text turn (end_turn, streamed; echoed key kept off disk)")
def test_text_turn(make_rig: Any) -> None:
    rig, baton, mock = make_rig(PROFILE)
    outcome = baton.run("Say it: [[text:Hello from the Anthropic mock.]] [[leak]]")
    completed(outcome)
    assert "Hello from the Anthropic mock." in outcome.text(), outcome.describe()
    assert len(outcome.of_type("text")) >= 1
    posts = [r for r in mock.posts() if r.reply.startswith("script")]
    assert posts and all(r.credential() == rig.key for r in posts), [r.headers for r in posts]
    assert posts[0].body.get("stream") is True
    assert rig.key not in outcome.stdout, "the agent-echoed key reached stdout unredacted"
    aftermath(baton, CLAUDE)


@pytest.mark.qualify(
    PROFILE, "tool turn, allowed in a terminal (file created; request ids 0 and 1)"
)
def test_tool_turn_interactive_allow(make_rig: Any) -> None:
    rig, baton, mock = make_rig(PROFILE)
    first, second = rig.work / "first.txt", rig.work / "second.txt"
    allow = allow_once_name(CLAUDE.key)

    def answer(options: list[tuple[int, str]]) -> str:
        chosen = [number for number, name in options if name == allow]
        assert len(chosen) == 1, f"no single {allow!r} option among {options}"
        return str(chosen[0])

    outcome, prompts = baton.run_in_terminal(
        f"[[write:{first}:one]][[write:{second}:two]][[text:both written]]", answer
    )
    assert len(prompts) == 2, outcome.describe()
    assert first.read_text() == "one" and second.read_text() == "two"
    result = completed(outcome)
    records = interactions(baton, result["runId"])
    assert [r["state"] for r in records] == ["RESOLVED", "RESOLVED"], records
    assert [r["chosenBy"] for r in records] == ["user", "user"], records
    assert [r["choice"] for r in records] == ["allow", "allow"], records
    # The quirk: the agent's own request ids start at 0 and collide with Baton's.
    assert [r["requestId"] for r in records] == [0, 1], records
    assert [bool(r.get("is_error")) for r in tool_results(mock)] == [False, False]
    aftermath(baton, CLAUDE)


@pytest.mark.qualify(PROFILE, "tool turn, default policy without a TTY (answered cancelled)")
def test_tool_turn_default_policy_cancelled(make_rig: Any) -> None:
    rig, baton, mock = make_rig(PROFILE)
    target = rig.work / "refused.txt"
    outcome = baton.run(f"[[write:{target}:never]][[text:the write was refused]]")
    result = completed(outcome)  # claude fails the tool and still ends the turn
    assert not target.exists()
    record = cancelled_by_default(baton, result["runId"])
    assert record["requestId"] == 0
    assert [r.get("is_error") for r in tool_results(mock)] == [True]
    permission = outcome.of_type("permission")
    assert permission and permission[0]["outcome"] == "cancelled", outcome.describe()
    aftermath(baton, CLAUDE)


@pytest.mark.qualify(PROFILE, "cancel mid-stream with SIGINT (cancelled, exit 130)")
def test_cancel_with_sigint(make_rig: Any) -> None:
    _rig, baton, _mock = make_rig(PROFILE)
    cancel_with_sigint(baton, CLAUDE)


@pytest.mark.qualify(PROFILE, "cancel mid-stream by --timeout (cancelled, exit 3)")
def test_cancel_with_budget(make_rig: Any) -> None:
    _rig, baton, _mock = make_rig(PROFILE)
    cancel_with_budget(baton, CLAUDE, "8")


@pytest.mark.qualify(
    PROFILE, "without credentials: run exits 4 AUTHENTICATION_REQUIRED (doctor READY)"
)
def test_without_credentials(make_rig: Any) -> None:
    rig, baton, _mock = make_rig(PROFILE)
    bare = rig.without("ANTHROPIC_API_KEY")
    # claude-agent-acp only says so at the first prompt: initialize and session/new succeed.
    done, record = baton.doctor(env=bare.env)
    assert done.returncode == 0 and record["state"] == "READY", done.describe()
    outcome = baton.run("[[text:unreachable]]", env=bare.env)
    result = outcome.result()
    assert outcome.returncode == EXIT_AUTH, outcome.describe()
    assert result["errorCode"] == "AUTHENTICATION_REQUIRED", outcome.describe()
    aftermath(baton, CLAUDE)


@pytest.mark.qualify(PROFILE, "quirk: an update outside a prompt (right after session/new)")
def test_quirk_update_outside_a_prompt(make_rig: Any) -> None:
    rig, baton, _mock = make_rig(PROFILE)
    outcome = baton.run("[[text:after the early update]]")
    result = completed(outcome)
    assert outcome.text() == "after the early update", outcome.describe()
    run = baton.show(result["runId"])
    records = baton.journal(run["serverInstanceId"])
    early = updates_after_response(records, "session/new", until_method="session/prompt")
    # claude-agent-acp sends available_commands_update right after its session/new answer,
    # before any prompt: it must neither count as foreign traffic nor quarantine the lane.
    assert early and early[0]["params"]["update"]["sessionUpdate"] == "available_commands_update"
    assert server_states(rig) == ["EXITED"], "the early update quarantined the lane"
    aftermath(baton, CLAUDE)


@pytest.mark.qualify(PROFILE, "quirk: no exit on stdin EOF (Baton ends the group)")
def test_quirk_no_exit_on_stdin_eof(make_rig: Any) -> None:
    rig, baton, _mock = make_rig(PROFILE)
    assert ignores_stdin_eof(rig, CLAUDE), "claude-agent-acp now exits on stdin EOF"
    outcome = baton.run("[[text:short]]")
    completed(outcome)
    assert not survivors(CLAUDE, rig.home, grace=0.0), "an adapter process outlived `baton run`"
    assert server_states(rig) == ["EXITED"]
    aftermath(baton, CLAUDE)


@pytest.mark.qualify(PROFILE, "quirk: out of step after a cancel (next prompts on the same lane)")
async def test_quirk_out_of_step_after_cancel(make_rig: Any) -> None:
    rig, baton, _mock = make_rig(PROFILE)
    answers: list[tuple[str, str | None, str]] = []
    async with Runtime(data_dir=rig.data, environ=rig.env) as runtime:
        runs: list[Run] = []

        def on_event(event: RunEvent) -> None:
            if event.type == "text" and "tick" in str(event.data.get("text")) and runs:
                runs[-1].interrupt_nowait("user")

        handle = await runtime.start(
            RunRequest(prompt="[[slow:40]]", agent=PROFILE, cwd=str(rig.work)), on_event=on_event
        )
        runs.append(handle)
        first = await handle.result()
        answers.append((first.status, first.stop_reason, first.text))
        for word in ("second", "third"):
            await asyncio.sleep(SLOW_TICK_SECONDS)
            result = await runtime.run(
                RunRequest(prompt=f"[[text:the {word} answer]]", agent=PROFILE, cwd=str(rig.work))
            )
            answers.append((result.status, result.stop_reason, result.text))
    assert answers[0][:2] == ("INTERRUPTED", "cancelled"), answers
    assert answers[1:] == [
        ("COMPLETED", "end_turn", "the second answer"),
        ("COMPLETED", "end_turn", "the third answer"),
    ], answers
    assert server_states(rig) == ["EXITED"], "the lane was quarantined or lost"
    aftermath(baton, CLAUDE)


@pytest.mark.qualify(PROFILE, "conversation: two turns across two baton processes, then close")
def test_conversation_across_processes(make_rig: Any) -> None:
    _rig, baton, mock = make_rig(PROFILE)
    conversation_across_processes(baton, mock, CLAUDE)
