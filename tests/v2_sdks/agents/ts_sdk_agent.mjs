// A small ACP v2 agent built on the official TypeScript SDK (@agentclientprotocol/sdk 2.4.0,
// "@agentclientprotocol/sdk/experimental/v2"), for Baton's interop tests. Run it with Node
// (NODE_PATH naming the directory that holds node_modules is not used by ESM, so the test
// runs it from a copy placed beside the installed SDK): `node ts_sdk_agent.mjs`.
//
// The same keywords as py_sdk_agent.py: text, diff, permission, wait; sessions are kept in
// .sdk-agent/ under the session's cwd so another process can resume them.

import * as acp from "@agentclientprotocol/sdk/experimental/v2";
import { Readable, Writable } from "node:stream";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

const cwds = new Map();
const cancelled = new Map();
let client = null;

function store(cwd) {
  const dir = path.join(cwd, ".sdk-agent");
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}
function file(sessionId) {
  return path.join(store(cwds.get(sessionId)), `${sessionId}.json`);
}
function load(sessionId) {
  const f = file(sessionId);
  return fs.existsSync(f) ? JSON.parse(fs.readFileSync(f, "utf8")) : [];
}
function save(sessionId, history) {
  fs.writeFileSync(file(sessionId), JSON.stringify(history));
}
async function send(sessionId, update, record = true) {
  await client.notify(acp.methods.client.session.update, { sessionId, update });
  if (record) {
    const history = load(sessionId);
    history.push(update);
    save(sessionId, history);
  }
}
async function chunk(sessionId, messageId, text) {
  await send(sessionId, {
    sessionUpdate: "agent_message_chunk",
    messageId,
    content: { type: "text", text },
  });
}

async function turn(sessionId, messageId, text) {
  await send(sessionId, {
    sessionUpdate: "user_message",
    messageId,
    content: [{ type: "text", text }],
  });
  await send(sessionId, { sessionUpdate: "state_update", state: "running" }, false);
  const agentId = `agent-${randomUUID().slice(0, 8)}`;
  let stopReason = "end_turn";
  const cwd = cwds.get(sessionId);
  if (text === "text") {
    await chunk(sessionId, agentId, "Hello from the ");
    await chunk(sessionId, agentId, "TypeScript SDK agent.");
  } else if (text === "diff") {
    const target = path.join(cwd, "a.txt");
    await send(sessionId, {
      sessionUpdate: "tool_call_update",
      toolCallId: "edit-1",
      title: "Edit a.txt",
      kind: "edit",
      status: "in_progress",
      locations: [{ path: target }],
    });
    const patch =
      "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1,2 @@\n-old\n+new\n+more\n";
    await send(sessionId, {
      sessionUpdate: "tool_call_content_chunk",
      toolCallId: "edit-1",
      content: {
        type: "diff",
        changes: [{ operation: "modify", path: target }],
        patch: { format: "git_patch", text: patch },
      },
    });
    await send(sessionId, { sessionUpdate: "tool_call_update", toolCallId: "edit-1", status: "completed" });
    await chunk(sessionId, agentId, "edited a.txt");
  } else if (text === "permission") {
    const target = path.join(cwd, "b.txt");
    await send(sessionId, {
      sessionUpdate: "tool_call_update",
      toolCallId: "write-1",
      title: "Write b.txt",
      kind: "edit",
      locations: [{ path: target }],
    });
    await send(sessionId, { sessionUpdate: "state_update", state: "requires_action" }, false);
    const response = await client.request(acp.methods.client.session.requestPermission, {
      sessionId,
      title: "Write b.txt?",
      subject: { type: "tool_call", toolCall: { toolCallId: "write-1" } },
      options: [
        { optionId: "allow", name: "Allow", kind: "allow_once" },
        { optionId: "reject", name: "Reject", kind: "reject_once" },
      ],
    });
    await send(sessionId, { sessionUpdate: "state_update", state: "running" }, false);
    const outcome = response.outcome;
    await chunk(
      sessionId,
      agentId,
      outcome.outcome === "selected" ? `permission: selected ${outcome.optionId}` : "permission: cancelled",
    );
  } else if (text === "wait") {
    const state = cancelled.get(sessionId);
    let tick = 0;
    while (!state.cancelled) {
      tick += 1;
      await chunk(sessionId, agentId, `tick ${tick}\n`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    stopReason = "cancelled";
  } else {
    await chunk(sessionId, agentId, `unknown keyword ${JSON.stringify(text)}`);
  }
  await send(sessionId, { sessionUpdate: "state_update", state: "idle", stopReason }, false);
}

const app = acp
  .agent({ name: "ts-sdk-agent" })
  .onConnect((connection) => {
    client = connection.client;
  })
  .onRequest(acp.methods.agent.initialize, () => ({
    protocolVersion: 2,
    info: { name: "ts-sdk-agent", version: "2.4.0" },
    capabilities: { session: { mcp: { stdio: {} } } },
  }))
  .onRequest(acp.methods.agent.session.new, ({ params }) => {
    const sessionId = `ts-${randomUUID().slice(0, 12)}`;
    cwds.set(sessionId, params.cwd);
    save(sessionId, []);
    return { sessionId };
  })
  .onRequest(acp.methods.agent.session.resume, async ({ params }) => {
    cwds.set(params.sessionId, params.cwd);
    if (params.replayFrom) {
      for (const update of load(params.sessionId)) await send(params.sessionId, update, false);
    }
    await send(params.sessionId, { sessionUpdate: "state_update", state: "idle" }, false);
    return {};
  })
  .onRequest(acp.methods.agent.session.prompt, ({ params }) => {
    const text = params.prompt
      .map((block) => (block.type === "text" ? block.text : ""))
      .join(" ")
      .trim();
    const messageId = `user-${randomUUID().slice(0, 8)}`;
    cancelled.set(params.sessionId, { cancelled: false });
    turn(params.sessionId, messageId, text).catch((error) => {
      process.stderr.write(`turn failed: ${error}\n`);
    });
    return { messageId };
  })
  .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
    const state = cancelled.get(params.sessionId);
    if (state) state.cancelled = true;
  });

const stream = acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin));
const connection = app.connect(stream);
await connection.closed;
