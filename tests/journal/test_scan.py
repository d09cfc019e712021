"""No planted credential reaches any durable file (journal boundary and run store).

Two scripted turns run over a real Connection with the JournalTap: the prompts, the profile's
environment (its sensitive values, MCP env and headers) and the agent's output (stream deltas,
a secret split across two deltas, tool calls, a permission request, a garbage line, an error)
carry 20 planted credentials, plus one token of every shape in the redaction table, a PEM
private key streamed in 20-character deltas, JWTs, connection strings and Azure keys. Baton's
records of the turns go to the run store. Then every byte of every file under the data directory is searched for each
credential: zero hits. (The runtime's own end-to-end scan covers its stream buffers.)
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from baton.connection import Connection, InboundRequest, memory_pipe
from baton.journal import Journal, JournalRef, JournalTap, SecretValues
from baton.store import NewItem, Store

# The planted credentials of every shape the redaction table knows (tests/redaction).
sys.path.insert(0, str(Path(__file__).parents[1] / "redaction"))
import shape_tokens

#: The scan drives a raw connection with a minimal hand-written handshake.
pytestmark = pytest.mark.off_schema_outbound

WAIT = 10.0

OPENAI = "sk-proj-" + "Zx81Qw72Er63Ty54Ui45Op36As27Df18Gh09Jk"
ANTHROPIC = "sk-ant-api03-" + "Lm0Nb9Vc8Xz7Lk6Jh5Gf4Ds3Ap2Qo1Iu0Yt9Re8Wq7"
GITHUB_PAT = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
GITHUB_OAUTH = "gho_" + "Q9w8E7r6T5y4U3i2O1p0A9s8D7f6G5h4J3k2"
GOOGLE = "AIza" + "SyB3kX9-vQ2mL7nP4rT8wZ1cF6hJ0dG5sA_"
AWS = "AKIA" + "QX7RZ2M4N6P8T3V5"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
    "eyJzdWIiOiJiYXRvbi10ZXN0IiwiaWF0IjoxNzAwMDAwMDAwfQ."
    "k3Yp9XqL2vT8mW4nR6sB1cD5fG7hJ0aZ"
)

BEARER_TOKEN = "tkn9Fq2Lx7Pv4Rm8Zs1Wd6Hy3Ja5Kc0Eb"
BASIC_TOKEN = "ZGVwbG95OmhvcnNlLWJhdHRlcnktOTk4Mg=="
AUTH_HEADER_TOKEN = "hdr7Mz2Qk9Lw4Rx8Ns3Bv6Ct1Yj5Pu0Ge"
KV_API_KEY = "kv4Tz8Rw2Qm6Lp0Xn3Vb7Hc1Jd5Fs9Ga"
KV_PASSWORD = "pw3Gh7Jk1Lz5Xc9Vb2Nm6Qw0Er4Ty8Ui"
URL_PASSWORD = "url8Pq3Wx7Zr1Tk5Mn9Lb2Vc6Hd0Js4Fa"
COOKIE = "ck5Rt9Yu3Io7Pa1Sd5Fg9Hj3Kl7Zx1Cv"
ENV_VALUE_A = "correct-horse-battery-staple-4242"
ENV_VALUE_B = "zebra-quantum-7781-lantern-mosaic"
ENV_PAIR_VALUE = "envpair-Qm4Zt8Wr2Lx6Np0Vb3Hc7Jd1Fs5"
HEADER_PAIR_VALUE = "hdrpair-Xk2Lm6Qp0Rt4Vw8Zb3Nc7Jd1Hf5"
FIELD_SECRET = "field-Cv9Bn3Mq7Wr1Lt5Zx9Pk3Hj7Gd1Fs5"
SPLIT_SECRET = "split-secret-Ty6Ui0Op4As8Df2Gh6Jk0"

PLANTED = [
    OPENAI,
    ANTHROPIC,
    GITHUB_PAT,
    GITHUB_OAUTH,
    GOOGLE,
    AWS,
    JWT,
    BEARER_TOKEN,
    BASIC_TOKEN,
    AUTH_HEADER_TOKEN,
    KV_API_KEY,
    KV_PASSWORD,
    URL_PASSWORD,
    COOKIE,
    ENV_VALUE_A,
    ENV_VALUE_B,
    ENV_PAIR_VALUE,
    HEADER_PAIR_VALUE,
    FIELD_SECRET,
    SPLIT_SECRET,
]

#: The profile's sensitive environment values (what the runtime passes as SecretValues).
PROFILE_SECRETS = SecretValues([ENV_VALUE_A, ENV_VALUE_B, ENV_PAIR_VALUE, SPLIT_SECRET])

FREE_TEXT = (
    f"use {OPENAI} or {ANTHROPIC}; gh {GITHUB_PAT} {GITHUB_OAUTH}; google {GOOGLE}; aws {AWS}; "
    f"jwt {JWT}; Authorization: Bearer {BEARER_TOKEN}; basic: Basic {BASIC_TOKEN}; "
    f"authorization: Token {AUTH_HEADER_TOKEN}; api_key={KV_API_KEY} password={KV_PASSWORD}; "
    f"clone https://deploy:{URL_PASSWORD}@git.example.com/r.git; Cookie: sid={COOKIE}; "
    f"env {ENV_VALUE_A} {ENV_VALUE_B}"
)
#: One token of every shape in the table, and the other shapes (AWS pair, JWT, connection
#: strings, Azure keys), planted beside the 20 above.
EVERY_SHAPE = shape_tokens.planted_line()


def _pem_deltas() -> list[str]:
    """The PEM block cut every 20 characters (BEGIN line, body and END line split)."""
    text = f"key:\n{shape_tokens.PEM}\n"
    return [text[i : i + 20] for i in range(0, len(text), 20)]


def _update(session: str, update: dict[str, Any]) -> bytes:
    message = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": session, "update": update},
    }
    return orjson.dumps(message) + b"\n"


async def _agent(
    reader: Any, writer: Any, permission_answers: list[Any], both_answered: asyncio.Event
) -> None:
    """A scripted agent: answers initialize, session/new, and two prompts with planted output
    (each prompt's answer right after its permission request: it does not wait for that
    answer, and sets ``both_answered`` when the second arrives)."""
    buffer = b""
    next_permission = 900
    while True:
        chunk = await reader.read(1 << 20)
        if not chunk:
            return
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            message = orjson.loads(line)
            method = message.get("method")
            if method is None:
                permission_answers.append(message)
                if len(permission_answers) == 2:
                    both_answered.set()
                continue
            if method == "initialize":
                result: Any = {
                    "protocolVersion": 1,
                    "agentInfo": {"name": "scripted"},
                    "_meta": {"apiKey": FIELD_SECRET},
                }
            elif method == "session/new":
                result = {"sessionId": "sess-1", "modes": {"currentModeId": "default"}}
            elif method == "session/prompt":
                for update in (
                    {
                        "sessionUpdate": "agent_message_chunk",
                        "content": {"type": "text", "text": FREE_TEXT},
                    },
                    {
                        "sessionUpdate": "agent_message_chunk",
                        "content": {"type": "text", "text": SPLIT_SECRET[:13]},
                    },
                    {
                        "sessionUpdate": "agent_message_chunk",
                        "content": {"type": "text", "text": SPLIT_SECRET[13:]},
                    },
                    {
                        "sessionUpdate": "agent_message_chunk",
                        "content": {"type": "text", "text": f" {EVERY_SHAPE}\n"},
                    },
                    *(
                        {
                            "sessionUpdate": "agent_message_chunk",
                            "content": {"type": "text", "text": part},
                        }
                        for part in _pem_deltas()
                    ),
                    {
                        "sessionUpdate": "plan",
                        "entries": [
                            {"content": token, "status": "pending", "priority": "low"}
                            for token in shape_tokens.TOKENS.values()
                        ],
                    },
                    {
                        "sessionUpdate": "agent_thought_chunk",
                        "content": {"type": "text", "text": EVERY_SHAPE},
                    },
                    {
                        "sessionUpdate": "tool_call",
                        "toolCallId": "call-1",
                        "title": f"curl -H 'Authorization: Bearer {BEARER_TOKEN}'",
                        "kind": "execute",
                        "status": "pending",
                        "rawInput": {"command": f"deploy --token {GITHUB_PAT}"},
                    },
                ):
                    writer.write(_update("sess-1", update))
                writer.write(f"garbage from the agent {ANTHROPIC} {ENV_VALUE_A}\n".encode())
                next_permission += 1
                writer.write(
                    orjson.dumps(
                        {
                            "jsonrpc": "2.0",
                            "id": next_permission,
                            "method": "session/request_permission",
                            "params": {
                                "sessionId": "sess-1",
                                "toolCall": {
                                    "toolCallId": "call-1",
                                    "rawInput": {
                                        "command": f"export AWS={AWS}",
                                        "password": KV_PASSWORD,
                                    },
                                },
                                "options": [
                                    {"optionId": "allow-1", "kind": "allow_once", "name": "Allow"}
                                ],
                            },
                        }
                    )
                    + b"\n"
                )
                if message["params"]["prompt"][0]["text"].startswith("second"):
                    writer.write(
                        orjson.dumps(
                            {
                                "jsonrpc": "2.0",
                                "id": message["id"],
                                "error": {
                                    "code": -32603,
                                    "message": f"upstream said: Bearer {BEARER_TOKEN} {ENV_VALUE_B}",
                                },
                            }
                        )
                        + b"\n"
                    )
                    continue
                result = {"stopReason": "end_turn", "_meta": {"client_secret": FIELD_SECRET}}
            else:
                result = {}
            writer.write(
                orjson.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + b"\n"
            )
        await writer.drain()


async def test_no_planted_credential_reaches_any_durable_file(tmp_path: Path) -> None:
    assert len(set(PLANTED)) == 20
    data = tmp_path / "data"
    journal = Journal.in_data_dir(data)
    store = Store.open(data, flush=journal.flush_refs, secrets=PROFILE_SECRETS)
    server_record = store.create_server_instance("scripted", "default", 1)
    server = await journal.open_server(server_record.id, secrets=PROFILE_SECRETS)
    agent_in, baton_out = memory_pipe()
    baton_in, agent_out = memory_pipe()
    answers: list[Any] = []
    both_answered = asyncio.Event()
    agent = asyncio.create_task(_agent(agent_in, agent_out, answers, both_answered))
    connection = Connection(baton_in, baton_out, tap=JournalTap(server))
    permission_refs: list[object] = []

    async def on_permission(request: InboundRequest) -> Any:
        permission_refs.append(request.ref)
        return {"outcome": {"outcome": "selected", "optionId": "allow-1"}}

    streamed: list[str] = []

    def on_update(message: dict[str, Any], ref: object) -> None:
        content = message["params"]["update"].get("content")
        if isinstance(content, dict) and isinstance(content.get("text"), str):
            streamed.append(content["text"])

    connection.on_request("session/request_permission", on_permission)
    connection.on_notification("session/update", on_update)
    connection.start()

    await connection.request("initialize", {"protocolVersion": 1, "clientInfo": {"name": "baton"}})
    session = await connection.request(
        "session/new",
        {
            "cwd": "/work",
            "mcpServers": [
                {
                    "name": "tools",
                    "command": "/usr/bin/tools",
                    "args": [f"--token={GITHUB_OAUTH}"],
                    "env": [{"name": "ANTHROPIC_API_KEY", "value": ENV_PAIR_VALUE}],
                },
                {
                    "type": "http",
                    "name": "remote",
                    "url": f"https://ops:{URL_PASSWORD}@mcp.example.com/",
                    "headers": [{"name": "X-Api-Key", "value": HEADER_PAIR_VALUE}],
                },
            ],
        },
    )
    db_session = store.create_session(
        "scripted",
        "/work",
        server_instance_id=server_record.id,
        provider_session_id=session["sessionId"],
    )
    prompts = (f"first: {FREE_TEXT} {EVERY_SHAPE}", f"second: {FREE_TEXT}\n{shape_tokens.PEM}")
    for number, prompt_text in enumerate(prompts):
        run = store.create_run(
            prompt_text, session_id=db_session.id, server_instance_id=server_record.id
        )
        streamed.clear()
        request_id = await connection.send_request(
            "session/prompt",
            {"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": prompt_text}]},
        )
        prompt_ref = connection.request_ref(request_id)
        assert isinstance(prompt_ref, JournalRef)
        await store.set_run_prompt_ref(run.id, prompt_ref)
        await store.update_run_status(run.id, "RUNNING", expected="QUEUED")
        try:
            answer = await asyncio.wait_for(connection.await_answer(request_id), WAIT)
            result, response_ref = answer.result, answer.ref
            assert isinstance(response_ref, JournalRef)
            await store.update_run_status(
                run.id, "COMPLETED", stop_reason=result["stopReason"], response_ref=response_ref
            )
        except Exception as exc:
            await store.update_run_status(
                run.id, "FAILED", error_code="AGENT_REQUEST_FAILED", diagnostic=str(exc)
            )
        # What a runtime would materialize from the stream (text joined across deltas).
        store.append_items(
            run.id, [NewItem("text", {"text": "".join(streamed)}, coalesced_events=len(streamed))]
        )
        ref = permission_refs[number]
        assert isinstance(ref, JournalRef)
        interaction = await store.record_interaction(
            run.id,
            900 + number + 1,
            {"toolCallId": "call-1", "rawInput": {"command": f"deploy --token {GITHUB_PAT}"}},
            [{"optionId": "allow-1", "kind": "allow_once"}],
            request_ref=ref,
        )
        await store.resolve_interaction(
            interaction.id,
            "RESOLVED",
            choice="allow-1",
            chosen_by="policy",
            reason=f"policy allowed; had {AWS}",
        )
        await store.record_observation(
            "PROVIDER_REPORTED",
            {"env": [{"name": "GITHUB_TOKEN", "value": GITHUB_PAT}], "note": FREE_TEXT},
            session_id=db_session.id,
            run_id=run.id,
            journal_ref=ref,
        )
    store.update_server_state(
        server_record.id, "EXITED", diagnostics=f"stderr tail: {FREE_TEXT} {SPLIT_SECRET}"
    )
    store.record_readiness("scripted", "READY", {"probe": FREE_TEXT, "token": GITHUB_OAUTH})

    # The agent answers each prompt without waiting for its permission answer: wait until both
    # answers reached it before closing (closing first can cancel the second one's write).
    await asyncio.wait_for(both_answered.wait(), WAIT)
    await connection.close()
    agent_out.close()
    await asyncio.wait_for(agent, WAIT)
    await server.close()
    store.close()

    # The turns really happened and were journaled (so the scan below is not vacuous).
    records = list(journal.records(server_record.id))
    assert len(records) >= 20
    assert {r.metadata.kind for r in records} == {"request", "notification", "response", "skipped"}
    assert len(answers) == 2
    assert SPLIT_SECRET in "".join(streamed)  # the live stream carried it
    assert shape_tokens.PEM in "".join(streamed) and EVERY_SHAPE in "".join(streamed)

    hits = []
    files = [path for path in data.rglob("*") if path.is_file()]
    assert len(files) >= 2
    for path in files:
        content = path.read_bytes()
        for planted in PLANTED:
            if planted.encode() in content:
                hits.append((path.name, planted))
        hits.extend((path.name, name) for name in shape_tokens.hits(content))
    assert hits == []
