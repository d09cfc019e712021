"""An update written together with the session/new answer (claude-agent-acp sends its
available_commands_update that way) belongs to the new session: never foreign traffic."""

from __future__ import annotations

import sys
from pathlib import Path

from baton.runtime.runtime import RunRequest, Runtime

AGENT = r"""
import sys, json
out = sys.stdout
def send(*messages):
    out.write("".join(json.dumps(m) + "\n" for m in messages)); out.flush()
for line in sys.stdin:
    msg = json.loads(line)
    method, mid = msg.get("method"), msg.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {"protocolVersion": 1, "agentCapabilities": {}}})
    elif method == "session/new":
        update = {"sessionUpdate": "available_commands_update", "availableCommands": []}
        send({"jsonrpc": "2.0", "id": mid, "result": {"sessionId": "s-1"}},
             {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s-1", "update": update}})
    elif method == "session/prompt":
        chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "ok"}}
        send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s-1", "update": chunk}},
             {"jsonrpc": "2.0", "id": mid, "result": {"stopReason": "end_turn"}})
"""


async def test_an_update_beside_the_session_new_answer_is_the_sessions(tmp_path: Path) -> None:
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    async with Runtime(data_dir=tmp_path / "data") as rt:
        result = await rt.run(
            RunRequest(prompt="hi", agent_command=[sys.executable, str(script)], cwd=str(tmp_path))
        )
        assert result.status == "COMPLETED", result.message
        assert result.text == "ok"
        assert rt.store is not None
        observations = rt.store.list_observations(session_id=result.session_id)
        assert any(
            isinstance(o.payload, dict)
            and o.payload.get("lateUpdate") == "available_commands_update"
            for o in observations
        )
