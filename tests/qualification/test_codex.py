"""codex-acp 0.16.0 through the built-in ``codex`` profile, against the Responses mock."""

from __future__ import annotations

from typing import Any

import pytest
from qualify_checks import (
    aftermath,
    cancel_with_budget,
    cancel_with_sigint,
    cancelled_by_default,
    completed,
    conversation_across_processes,
    ignores_stdin_eof,
    interactions,
    interrupted,
    is_uuid,
    server_states,
)
from qualify_drivers import (
    CODEX_KEY_ENV,
    EXIT_AUTH,
    EXIT_INTERRUPTED,
    Rig,
    codex_config,
    secret_files,
    store_rows,
    survivors,
    updates_after_response,
)
from qualify_installs import CODEX
from qualify_mocks import MockServer

PROFILE = "codex"

#: Text turns tried before the test gives up on seeing an update after the prompt's answer.
#: codex-acp 0.16.0 sends its available_commands_update about 0.2 s after the first prompt
#: arrives, which is about when a mock text turn ends: it lands after the answer in roughly
#: half the runs seen, so eight attempts make a miss unlikely (about 1 in 250).
MAX_LATE_UPDATE_ATTEMPTS = 8


def signed_out(rig: Rig) -> Rig:
    """The rig without credentials: Codex's own provider (it needs a sign-in) and no key."""
    (rig.root / "codex-home" / "config.toml").write_text(codex_config(None))
    return rig.without(CODEX_KEY_ENV, "OPENAI_API_KEY")


def tool_outputs(mock: MockServer | None) -> list[dict[str, Any]]:
    """The tool output items Codex sent back to the model, in order of first appearance."""
    assert mock is not None
    seen: dict[str, dict[str, Any]] = {}
    for request in mock.posts():
        body = request.body if isinstance(request.body, dict) else {}
        for item in body.get("input") or []:
            if isinstance(item, dict) and str(item.get("type", "")).endswith("_call_output"):
                seen.setdefault(str(item.get("call_id")), item)
    return list(seen.values())


@pytest.mark.qualify(PROFILE, "doctor --live: READY")
def test_doctor_live_ready(make_rig: Any) -> None:
    rig, baton, _mock = make_rig(PROFILE)
    done, record = baton.doctor()
    assert done.returncode == 0, done.describe()
    assert record["state"] == "READY", record
    assert record["source"] == "env" and record["executable"] == rig.env[CODEX.override_env]
    assert record["agent"] == {"name": "codex-acp", "version": CODEX.version}
    assert not survivors(CODEX, rig.home)
    assert not rig.data.exists() or not secret_files(rig.data, rig.key)


@pytest.mark.qualify(
    PROFILE, "without credentials: doctor and run AUTHENTICATION_REQUIRED (exit 4)"
)
def test_without_credentials(make_rig: Any) -> None:
    rig, baton, _mock = make_rig(PROFILE)
    bare = signed_out(rig)
    done, record = baton.doctor(env=bare.env)
    assert done.returncode == EXIT_AUTH, done.describe()
    assert record["state"] == "AUTHENTICATION_REQUIRED", record
    assert record["next_action"] == "AUTHENTICATE", record
    assert {m["id"] for m in record["auth_methods"]} >= {"chatgpt", "openai-api-key"}, record
    outcome = baton.run("[[text:unreachable]]", env=bare.env)
    assert outcome.returncode == EXIT_AUTH, outcome.describe()
    assert outcome.result()["errorCode"] == "AUTHENTICATION_REQUIRED", outcome.describe()
    aftermath(baton, CODEX)


@pytest.mark.qualify(PROFILE, "text turn (end_turn, streamed; echoed key kept off disk)")
def test_text_turn(make_rig: Any) -> None:
    rig, baton, mock = make_rig(PROFILE)
    outcome = baton.run("Say it: [[text:Hello from the Responses mock.]] [[leak]]")
    completed(outcome)
    assert "Hello from the Responses mock." in outcome.text(), outcome.describe()
    posts = [r for r in mock.posts() if r.reply.startswith("script")]
    assert posts and all(r.credential() == rig.key for r in posts), [r.headers for r in posts]
    assert all(r.path == "/v1/responses" for r in mock.posts())
    assert rig.key not in outcome.stdout, "the agent-echoed key reached stdout unredacted"
    aftermath(baton, CODEX)


@pytest.mark.qualify(PROFILE, "tool turn, --policy auto-edits (file created; UUID request id)")
def test_tool_turn_auto_edits(make_rig: Any) -> None:
    rig, baton, mock = make_rig(PROFILE)
    target = rig.work / "patched.txt"
    outcome = baton.run(
        f"[[write:{target}:made by codex]][[text:patched]]", "--policy", "auto-edits"
    )
    result = completed(outcome)
    assert target.read_text().rstrip("\n") == "made by codex"
    records = interactions(baton, result["runId"])
    assert len(records) == 1 and records[0]["state"] == "RESOLVED", records
    assert records[0]["chosenBy"] == "policy" and records[0]["choice"] == "approved", records
    # The quirk: the agent's request ids are UUID strings.
    assert is_uuid(records[0]["requestId"]), records
    assert [o["type"] for o in tool_outputs(mock)] == ["custom_tool_call_output"]
    aftermath(baton, CODEX)


@pytest.mark.qualify(PROFILE, "tool turn, default policy without a TTY (answered cancelled)")
def test_tool_turn_default_policy_cancelled(make_rig: Any) -> None:
    rig, baton, _mock = make_rig(PROFILE)
    target = rig.work / "refused.txt"
    outcome = baton.run(f"[[write:{target}:never]][[text:unreachable]]")
    # codex-acp ends the whole turn "cancelled" once its request is answered cancelled.
    result = interrupted(outcome, EXIT_INTERRUPTED)
    assert not target.exists()
    record = cancelled_by_default(baton, result["runId"])
    assert is_uuid(record["requestId"]), record
    assert "unreachable" not in outcome.text()
    aftermath(baton, CODEX)


@pytest.mark.qualify(PROFILE, "quirk: permission request before any tool_call (--policy full)")
def test_quirk_permission_before_tool_call(make_rig: Any) -> None:
    rig, baton, mock = make_rig(PROFILE)
    target = rig.work / "shell.txt"
    outcome = baton.run("[[bash:echo shell-ran > shell.txt]][[text:ran it]]", "--policy", "full")
    result = completed(outcome)
    kinds = [e["type"] for e in outcome.events() if e["type"] in ("permission", "tool_call")]
    assert kinds and kinds[0] == "permission", kinds  # the request names a tool call not seen yet
    assert target.read_text() == "shell-ran\n"
    records = interactions(baton, result["runId"])
    assert len(records) == 1 and records[0]["choice"] == "approved", records
    assert records[0]["toolCall"]["kind"] == "execute", records
    calls = outcome.of_type("tool_call")
    assert calls and calls[-1]["toolCallId"] == records[0]["toolCall"]["toolCallId"], (
        outcome.describe()
    )
    assert [o["type"] for o in tool_outputs(mock)] == ["function_call_output"]
    aftermath(baton, CODEX)


@pytest.mark.qualify(PROFILE, "cancel mid-stream with SIGINT (cancelled, exit 130)")
def test_cancel_with_sigint(make_rig: Any) -> None:
    _rig, baton, _mock = make_rig(PROFILE)
    cancel_with_sigint(baton, CODEX)


@pytest.mark.qualify(PROFILE, "cancel mid-stream by --timeout (cancelled, exit 3)")
def test_cancel_with_budget(make_rig: Any) -> None:
    _rig, baton, _mock = make_rig(PROFILE)
    cancel_with_budget(baton, CODEX, "6")


@pytest.mark.qualify(PROFILE, "quirk: updates after the prompt response")
def test_quirk_updates_after_the_prompt_response(make_rig: Any) -> None:
    rig, baton, _mock = make_rig(PROFILE)
    late: list[dict[str, Any]] = []
    for attempt in range(MAX_LATE_UPDATE_ATTEMPTS):
        outcome = baton.run(f"[[text:answer {attempt}]]")
        result = completed(outcome)
        assert outcome.text() == f"answer {attempt}", outcome.describe()
        run = baton.show(result["runId"])
        late = updates_after_response(baton.journal(run["serverInstanceId"]), "session/prompt")
        if late:
            break
    assert late, (
        f"codex-acp sent no update after the prompt's answer in {MAX_LATE_UPDATE_ATTEMPTS} runs"
    )
    assert set(server_states(rig)) == {"EXITED"}, "a late update quarantined the lane"
    runs = store_rows(rig.data, "SELECT status, violations FROM runs")
    assert all(r["status"] == "COMPLETED" and r["violations"] == 0 for r in runs), runs
    aftermath(baton, CODEX)


@pytest.mark.qualify(PROFILE, "quirk: no exit on stdin EOF (Baton ends the group)")
def test_quirk_no_exit_on_stdin_eof(make_rig: Any) -> None:
    rig, baton, _mock = make_rig(PROFILE)
    assert ignores_stdin_eof(rig, CODEX), "codex-acp now exits on stdin EOF"
    completed(baton.run("[[text:short]]"))
    assert not survivors(CODEX, rig.home, grace=0.0), (
        "an adapter process (wrapper or native) outlived `baton run`"
    )
    assert server_states(rig) == ["EXITED"]
    aftermath(baton, CODEX)


@pytest.mark.qualify(PROFILE, "conversation: two turns across two baton processes, then close")
def test_conversation_across_processes(make_rig: Any) -> None:
    _rig, baton, mock = make_rig(PROFILE)
    conversation_across_processes(baton, mock, CODEX)
