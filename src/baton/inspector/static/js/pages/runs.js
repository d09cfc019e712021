// Runs: the list with filters, and one run live (its transcript from the SSE event stream,
// resumed with Last-Event-ID by the browser's EventSource, its pending permission cards).

import { h, replaceChildren, badge, facts, duration } from "../dom.js";
import { get, ROUTES } from "../api.js";
import { TranscriptModel, TranscriptView } from "../transcript.js";
import { errorBox, field, listOf, table } from "./common.js";
import { pendingInto } from "./permissions.js";

// Run statuses the filter offers (docs/journal.md, run-status table).
const STATUSES = ["", "QUEUED", "RUNNING", "COMPLETED", "FAILED", "INTERRUPTED", "RECOVERY_REQUIRED"];

// Event types the service sends as named SSE events (docs/events.md) plus its own markers.
const EVENT_TYPES = ["run_started", "session", "controls", "text", "thought", "user_text", "tool_call",
  "plan", "usage", "mode", "config", "session_info", "commands", "permission", "item", "warning",
  "result", "dropped", "notice", "compaction", "elicitation"];

/** A run's status badge; RECOVERY_REQUIRED links to the recovery view. */
export function runStatus(run) {
  const status = String(run.status ?? "?");
  if (status === "RECOVERY_REQUIRED") {
    return h("a", { href: `#/recovery/${encodeURIComponent(run.runId ?? run.id)}`, "aria-label": "recovery required: open the recovery view" }, badge(status));
  }
  return badge(status);
}

function usageText(run) {
  const u = run.usage;
  if (!u) return "";
  return `${u.used ?? "?"}/${u.size ?? "?"}${u.cost ? `, ${u.cost.amount} ${u.cost.currency ?? ""}` : ""}`;
}

/** The runs table. */
export function runsTable(runs) {
  return table([
    ["run", (r) => h("a", { href: `#/runs/${encodeURIComponent(r.runId ?? r.id)}` }, h("code", {}, String(r.runId ?? r.id).slice(0, 12)))],
    ["status", runStatus],
    ["agent", (r) => String(r.agent ?? "")],
    ["session", (r) => r.sessionId ? h("a", { href: `#/sessions/${encodeURIComponent(r.sessionId)}` }, h("code", {}, String(r.sessionId).slice(0, 12))) : ""],
    ["cwd", (r) => h("code", {}, String(r.cwd ?? ""))],
    ["started", (r) => String(r.createdAt ?? r.startedAt ?? "")],
    ["duration", (r) => r.durationSeconds !== undefined && r.durationSeconds !== null ? duration(r.durationSeconds * 1000) : ""],
    ["usage", usageText],
  ], runs, "No runs match.");
}

export function runsPage(view) {
  const status = h("select", { name: "status" }, STATUSES.map((s) => h("option", { value: s }, s || "any")));
  const agent = h("input", { name: "agent", placeholder: "any", autocomplete: "off" });
  const cwd = h("input", { name: "cwd", placeholder: "any", autocomplete: "off" });
  const box = h("div", { "aria-live": "polite" });
  const load = async () => {
    try {
      const data = await get(ROUTES.runs(), { status: status.value, agent: agent.value.trim(), cwd: cwd.value.trim() });
      replaceChildren(box, runsTable(listOf(data, "runs", "items")));
    } catch (error) {
      replaceChildren(box, errorBox(error));
    }
  };
  const form = h("form", { class: "filters", "aria-label": "filters", onsubmit: (e) => { e.preventDefault(); load(); } },
    field("Status", status), field("Agent", agent), field("Working directory", cwd),
    h("button", { type: "submit" }, "Filter"));
  replaceChildren(view, h("h1", {}, "Runs"), form, box);
  load();
}

/**
 * Open the live event stream of `runId` into `transcript`; `onState` hears the connection
 * state. Returns the function that closes it. Reconnection (with Last-Event-ID) is the
 * browser's: EventSource sends the id of the last event it saw; events at or below it that
 * arrive again are ignored.
 */
export function followRun(runId, transcript, onState) {
  const source = new EventSource(ROUTES.runEvents(runId));
  let lastId = -1;
  let finished = false;
  const onEvent = (message) => {
    const id = Number(message.lastEventId);
    if (Number.isFinite(id) && message.lastEventId !== "") {
      if (id <= lastId) return;
      lastId = id;
    }
    let event;
    try { event = JSON.parse(message.data); } catch { return; }
    if (!event.type) event.type = message.type === "message" ? "notice" : message.type;
    transcript.push([event]);
    if (event.type === "result") {
      finished = true;
      source.close();
      onState("finished");
    }
  };
  source.addEventListener("message", onEvent);
  for (const type of EVENT_TYPES) source.addEventListener(type, onEvent);
  source.addEventListener("open", () => onState("live"));
  source.addEventListener("error", () => {
    if (finished) return;
    onState(source.readyState === EventSource.CLOSED ? "closed" : "reconnecting");
  });
  return () => source.close();
}

export function runPage(view, [runId]) {
  const summary = h("div", {});
  const permissions = h("div", { class: "permissions", "aria-label": "pending permission requests" });
  const connection = h("p", { class: "connection", "aria-live": "polite", "data-testid": "connection" }, "connecting…");
  const transcriptBox = h("section", { "aria-label": "transcript" });
  replaceChildren(view, h("h1", {}, "Run ", h("code", {}, runId)), summary,
    h("h2", {}, "Waiting for you"), permissions,
    h("h2", {}, "Transcript"), connection, transcriptBox);
  const transcript = new TranscriptView(transcriptBox, new TranscriptModel());
  const showSummary = async () => {
    try {
      const run = await get(ROUTES.run(runId));
      replaceChildren(summary, facts([
        ["status", runStatus(run)],
        ["agent", run.agent],
        ["session", run.sessionId ? h("a", { href: `#/sessions/${encodeURIComponent(run.sessionId)}` }, String(run.sessionId)) : null],
        ["cwd", run.cwd ? h("code", {}, String(run.cwd)) : null],
        ["duration", run.durationSeconds !== undefined && run.durationSeconds !== null ? duration(run.durationSeconds * 1000) : null],
        ["permission outcomes", run.permissionOutcomes ? Object.entries(run.permissionOutcomes).map(([k, v]) => `${k} ${v}`).join(", ") : null],
        ["skipped frames", run.skippedFrames],
        ["violations", run.violations],
        ["journal", h("a", { href: `#/journal/run/${encodeURIComponent(runId)}` }, "the run's journal records")],
      ]));
    } catch (error) {
      replaceChildren(summary, errorBox(error));
    }
  };
  showSummary();
  const stopPermissions = pendingInto(permissions, runId);
  const close = followRun(runId, transcript, (state) => {
    connection.textContent = {
      live: "live", reconnecting: "reconnecting (resuming after the last event seen)…",
      closed: "the stream closed", finished: "finished",
    }[state] ?? state;
    connection.dataset.state = state;
    if (state === "finished") { showSummary(); stopPermissions(); }
  });
  return () => { close(); stopPermissions(); };
}
