"""v2 permission requests read into the engine's v1 shape."""

from __future__ import annotations

from baton.wire.codec import AcpV1Codec, AcpV2Codec
from baton.wire.permission import parse_permission_request
from baton.wire.toolcalls import tool_command, tool_cwd, tool_paths
from baton.wire.v2.updates import SessionUpdateDecoder

OPTIONS = [
    {"optionId": "ok", "name": "Allow", "kind": "allow_once"},
    {"optionId": "no", "name": "Reject", "kind": "reject_once"},
]


def test_a_tool_call_subject_becomes_the_tool_call_and_feeds_the_decoder() -> None:
    decoder = SessionUpdateDecoder("s")
    params = {
        "sessionId": "s",
        "title": "Edit a.py?",
        "subject": {
            "type": "tool_call",
            "toolCall": {"toolCallId": "t1", "kind": "edit", "locations": [{"path": "/w/a.py"}]},
        },
        "options": OPTIONS,
    }
    normalized = AcpV2Codec().permission_params(params, 7, decoder)
    request = parse_permission_request(normalized)
    assert request.tool_call_id == "t1"
    assert tool_paths(request.tool_call) == ["/w/a.py"]
    assert request.tool_call["title"] == "Edit a.py?"
    # The subject created the tool call: a later update of it is an update, not a creation.
    assert decoder.decode({"sessionUpdate": "tool_call_update", "toolCallId": "t1"})[0][
        "sessionUpdate"
    ] == ("tool_call_update")


def test_a_command_subject_becomes_an_execute_tool_call() -> None:
    params = {
        "sessionId": "s",
        "title": "Run?",
        "subject": {"type": "command", "command": "git push", "cwd": "/w"},
        "options": OPTIONS,
    }
    request = parse_permission_request(AcpV2Codec().permission_params(params, 9, None))
    assert request.tool_call["kind"] == "execute"
    assert tool_command(request.tool_call) == "git push"
    assert tool_cwd(request.tool_call) == "/w"
    assert request.tool_call_id == "_baton/permission/9"


def test_no_subject_gives_a_bare_tool_call() -> None:
    params = {"sessionId": "s", "title": "May I?", "options": OPTIONS}
    request = parse_permission_request(AcpV2Codec().permission_params(params, "r", None))
    assert request.tool_call == {"toolCallId": "_baton/permission/r", "title": "May I?"}
    assert [o.option_id for o in request.options] == ["ok", "no"]


def test_v1_params_pass_unchanged() -> None:
    params = {"sessionId": "s", "toolCall": {"toolCallId": "t"}, "options": OPTIONS}
    assert AcpV1Codec().permission_params(params, 1, None) is params
