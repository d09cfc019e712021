// Runs: the list with filters, and one run live (its transcript from the SSE event stream,
// resumed with Last-Event-ID by the browser's EventSource, its pending permission and question
// cards).

import { h, replaceChildren, badge, facts, duration } from "../dom.js";
import { get, post, ROUTES } from "../api.js";
import { ENDED_STATUSES, TranscriptModel, TranscriptView } from "../transcript.js";
import { errorBox, field, listOf, table } from "./common.js";
import { pendingInto } from "./permissions.js";
import { questionsInto } from "./elicitations.js";
import { changesInto } from "./changes.js";

// Run statuses the filter offers (docs/journal.md, run-status table).
const STATUSES = ["", "QUEUED", "STARTING", "RUNNING", "AWAITING_APPROVAL", "INTERRUPTING", "COMPLETED",
  "FAILED", "INTERRUPTED", "RECOVERY_REQUIRED", "LOST", "CANCELLED"];

// Policies a run may ask for (docs/permissions.md).
const POLICIES = ["", "ask", "auto-edits", "full"];

// Event types the service sends as named SSE events (docs/events.md) plus its own markers.
const EVENT_TYPES = ["run_started", "session", "controls", "text", "thought", "user_text", "tool_call",
  "plan", "usage", "mode", "config", "session_info", "commands", "state", "permission", "item", "warning",
  "result", "dropped", "notice", "replay", "permission_request", "permission_closed",
  "compaction", "elicitation", "elicitation_request", "elicitation_closed", "steer"];

/** A run's status badge; RECOVERY_REQUIRED links to the recovery view. A CANCELLED run never
 * started (cancelled while queued): shown plain, not in the colour of a refused permission. */
export function runStatus(run) {
  const status = String(run.status ?? "?");
  if (status === "RECOVERY_REQUIRED") {
    return h("a", { href: `#/recovery/${encodeURIComponent(run.id ?? run.runId)}`, "aria-label": "recovery required: open the recovery view" }, badge(status));
  }
  const shown = badge(status, status === "CANCELLED" ? "run-cancelled" : undefined);
  const waiting = Number(run.pendingQuestions ?? 0);
  if (waiting > 0) {
    return h("span", {}, shown, " ", h("span", { class: "waiting-count", "data-testid": "run-waiting", title: "questions waiting for your answer" }, `${waiting} waiting`));
  }
  return shown;
}

/** The session a run is a turn of: its name, linking to its page, when it is a named
 * session's turn; else Baton's session id (a one-off run's session has no page). */
export function sessionCell(run) {
  if (run.sessionName) {
    return h("a", { href: `#/sessions/${encodeURIComponent(run.sessionName)}`, "data-testid": "session-name" }, String(run.sessionName));
  }
  return run.sessionId ? h("code", { title: "Baton's session id (not a named session)" }, String(run.sessionId)) : null;
}

function usageText(run) {
  const u = run.usage;
  if (!u) return "";
  return `${u.used ?? "?"}/${u.size ?? "?"}${u.cost ? `, ${u.cost.amount} ${u.cost.currency ?? ""}` : ""}`;
}

/** The runs table (a usage column when the service's rows carry usage). */
export function runsTable(runs) {
  const columns = [
    ["run", (r) => h("a", { href: `#/runs/${encodeURIComponent(r.id ?? r.runId)}` }, h("code", {}, String(r.id ?? r.runId)))],
    ["status", runStatus],
    ["agent", (r) => String(r.agent ?? "")],
    // The host of the Baton process that owns the run (whose disk holds its journal).
    ["host", (r) => String(r.host ?? "")],
    // The named session's name (its page is addressed by it), else Baton's session id.
    ["session", (r) => sessionCell(r) ?? ""],
    ["cwd", (r) => h("code", {}, String(r.cwd ?? ""))],
    ["prompt", (r) => String(r.promptText ?? "").slice(0, 80)],
    ["started", (r) => String(r.startedAt ?? r.createdAt ?? "")],
    ["duration", (r) => r.durationSeconds !== undefined && r.durationSeconds !== null ? duration(r.durationSeconds * 1000) : ""],
    ["usage", usageText],
  ];
  const withUsage = runs.some((r) => r.usage);
  return table(columns.filter(([heading]) => withUsage || heading !== "usage"), runs, "No runs match.");
}

/** The form that starts a run through `POST /api/v1/runs`; the page opens the new run. */
function newRunForm() {
  const agent = h("input", { name: "agent", placeholder: "profile, e.g. claude", autocomplete: "off" });
  const command = h("input", { name: "agentCommand", placeholder: "or an agent command (needs --allow-agent-command)", autocomplete: "off" });
  const cwd = h("input", { name: "cwd", placeholder: "absolute path", autocomplete: "off" });
  const policy = h("select", { name: "policy" }, POLICIES.map((p) => h("option", { value: p }, p || "the service's")));
  const prompt = h("textarea", { name: "prompt", rows: "3" });
  const status = h("div", { "aria-live": "polite", "data-testid": "new-run-status" });
  const submit = async (e) => {
    e.preventDefault();
    const body = { prompt: prompt.value };
    if (agent.value.trim()) body.agent = agent.value.trim();
    if (command.value.trim()) body.agentCommand = command.value.trim();
    if (cwd.value.trim()) body.cwd = cwd.value.trim();
    if (policy.value) body.policy = policy.value;
    try {
      const answer = await post(ROUTES.runs(), body);
      location.hash = `#/runs/${encodeURIComponent(answer.runId)}`;
    } catch (error) {
      replaceChildren(status, errorBox(error));
    }
  };
  return h("details", { class: "card" }, h("summary", {}, "Start a run"),
    h("form", { class: "filters", "aria-label": "start a run", onsubmit: submit },
      field("Agent profile", agent), field("Agent command", command), field("Working directory", cwd),
      field("Policy", policy), field("Prompt", prompt), h("button", { type: "submit" }, "Start")),
    status);
}

/**
 * The fleet's workers (`GET /api/v1/workers`) as a small table, or nothing when the service's
 * store is not shared (docs/fleet.md).
 */
export function workersTable(data) {
  if (!data?.shared) return null;
  const age = (w) => (w.heartbeatAgeSeconds === null || w.heartbeatAgeSeconds === undefined ? "" : duration(w.heartbeatAgeSeconds * 1000));
  return h("section", { "aria-label": "workers", "data-testid": "workers" }, h("h2", {}, "Workers"), table([
    ["worker", (w) => h("code", {}, String(w.name ?? ""))],
    ["host", (w) => String(w.host ?? "")],
    ["state", (w) => (w.state ? badge(w.state) : "")],
    ["queues", (w) => (Array.isArray(w.queues) ? w.queues.map(String).join(", ") : "")],
    ["concurrency", (w) => String(w.concurrency ?? "")],
    ["heartbeat age", age],
    ["running turns", (w) => String(Array.isArray(w.running) ? w.running.length : 0)],
  ], listOf(data, "workers"), "No workers."));
}

export function runsPage(view) {
  const status = h("select", { name: "status" }, STATUSES.map((s) => h("option", { value: s }, s || "any")));
  const agent = h("input", { name: "agent", placeholder: "any", autocomplete: "off" });
  const cwd = h("input", { name: "cwd", placeholder: "any", autocomplete: "off" });
  const session = h("input", { name: "sessionId", placeholder: "any", autocomplete: "off" });
  const box = h("div", { "aria-live": "polite" });
  const workers = h("div", {});
  const loadWorkers = async () => {
    try {
      replaceChildren(workers, workersTable(await get(ROUTES.workers())));
    } catch (error) {
      replaceChildren(workers, errorBox(error));
    }
  };
  const load = async () => {
    try {
      const data = await get(ROUTES.runs(), {
        status: status.value, sessionId: session.value.trim(), agent: agent.value.trim(), cwd: cwd.value.trim(),
      });
      const runs = listOf(data, "runs");
      replaceChildren(box, runsTable(runs));
    } catch (error) {
      replaceChildren(box, errorBox(error));
    }
  };
  const form = h("form", { class: "filters", "aria-label": "filters", onsubmit: (e) => { e.preventDefault(); load(); } },
    field("Status", status), field("Agent", agent), field("Working directory", cwd), field("Session", session),
    h("button", { type: "submit" }, "Filter"));
  replaceChildren(view, h("h1", {}, "Runs"), newRunForm(), h("h2", {}, "Runs"), form, box, workers);
  load();
  loadWorkers();
}

/**
 * Open the live event stream of `runId` into `transcript`; `onState` hears the connection
 * state and `onEach` every event. Returns the function that closes it. A broken connection is
 * resumed by the browser's EventSource, which sends the id of the last event it saw as
 * Last-Event-ID. A stream the
 * service drops (the page fell behind) is reopened at once with `?lastEventId=` (the
 * EventSource would wait its retry delay, while the service's backlog moves on). Events at or
 * below the last id seen are ignored.
 */
export function followRun(runId, transcript, onState, onEach = () => {}) {
  let source = null;
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
    onEach(event);
    if (event.type === "result" || (event.type === "replay" && ENDED_STATUSES.has(event.run?.status))) {
      finished = true;
      source.close();
      onState("finished");
    } else if (event.type === "dropped") {
      source.close();
      onState("reconnecting");
      open();
    }
  };
  const open = () => {
    const resume = lastId >= 0 ? `?lastEventId=${lastId}` : "";
    source = new EventSource(ROUTES.runEvents(runId) + resume);
    source.addEventListener("message", onEvent);
    for (const type of EVENT_TYPES) source.addEventListener(type, onEvent);
    source.addEventListener("open", () => onState("live"));
    source.addEventListener("error", () => {
      if (finished) return;
      onState(source.readyState === EventSource.CLOSED ? "closed" : "reconnecting");
    });
  };
  open();
  return () => { finished = true; source.close(); };
}

export function runPage(view, [given]) {
  // The route may name a unique prefix of the id: everything below uses the full id, once the
  // service resolved it (the lists of pending requests filter on the exact id).
  const heading = h("code", {}, given);
  const page = h("div", {});
  replaceChildren(view, h("h1", {}, "Run ", heading), page);
  let stop = null;
  let left = false;
  get(ROUTES.run(given)).then((run) => {
    const runId = String(run.runId ?? run.id ?? given);
    heading.textContent = runId;
    if (!left) stop = liveRun(page, runId);
  }, (error) => replaceChildren(page, errorBox(error)));
  return () => { left = true; if (typeof stop === "function") stop(); };
}

// The run's header (status, agent, session, cwd) is read again after events, at most once per
// this many ms: a streaming run changes it rarely, and the page makes at most a few requests a
// second however fast the events come.
export const SUMMARY_REFRESH_MS = 500;

function liveRun(view, runId) {
  const summary = h("div", {});
  const permissions = h("div", { class: "permissions", "aria-label": "pending permission requests" });
  const questions = h("div", { class: "elicitations", "aria-label": "pending questions of the agent" });
  const connection = h("p", { class: "connection", "aria-live": "polite", "data-testid": "connection" }, "connecting…");
  const transcriptBox = h("section", { "aria-label": "transcript" });
  const changesBox = h("section", { "aria-label": "workspace changes", "data-testid": "workspace-changes" });
  const cancelStatus = h("div", { "aria-live": "polite" });
  const cancel = h("button", { type: "button", onclick: async () => {
    try {
      await post(ROUTES.cancelRun(runId));
      cancelStatus.textContent = "Cancel sent: the turn is being interrupted.";
    } catch (error) {
      replaceChildren(cancelStatus, errorBox(error));
    }
  } }, "Cancel this run");
  replaceChildren(view, summary, h("p", {}, cancel), cancelStatus,
    h("h2", {}, "Waiting for you"), permissions, questions, changesBox,
    h("h2", {}, "Transcript"), connection, transcriptBox);
  const transcript = new TranscriptView(transcriptBox, new TranscriptModel());
  const showSummary = async () => {
    try {
      const run = await get(ROUTES.run(runId));
      replaceChildren(summary, facts([
        ["status", runStatus(run)],
        ["agent", run.agent],
        ["host", run.host],
        ["session", sessionCell(run)],
        ["cwd", run.cwd ? h("code", {}, String(run.cwd)) : null],
        ["duration", run.durationSeconds !== undefined && run.durationSeconds !== null ? duration(run.durationSeconds * 1000) : null],
        ["permission outcomes", run.permissionOutcomes ? Object.entries(run.permissionOutcomes).map(([k, v]) => `${k} ${v}`).join(", ") : null],
        ["policy", run.policy],
        ["prompt", run.promptText ? h("pre", {}, String(run.promptText)) : null],
        ["error", run.errorCode ? [h("code", {}, String(run.errorCode)), " ", String(run.diagnostic ?? "")] : null],
        ["skipped frames", String(run.skippedFrames ?? 0)],
        ["violations", String(run.violations ?? 0)],
        ["journal", h("a", { href: `#/journal/run/${encodeURIComponent(runId)}` }, "the run's journal records")],
      ]));
      return run;
    } catch (error) {
      replaceChildren(summary, errorBox(error));
      return null;
    }
  };
  // A run's changes are asked for only when its record says a comparison was recorded (a run
  // without a workspace has none: no request, so no 404 in the console).
  const showChanges = (run) => {
    if (run && (run.workspaceChanges || run.workspace_changes)) changesInto(changesBox, runId);
  };
  showSummary().then(showChanges);
  let refreshTimer = null;
  const stopPermissions = pendingInto(permissions, runId);
  const stopQuestions = questionsInto(questions, runId);
  const close = followRun(runId, transcript, (state) => {
    connection.textContent = {
      live: "live", reconnecting: "reconnecting (resuming after the last event seen)…",
      closed: "the stream closed", finished: "finished",
    }[state] ?? state;
    connection.dataset.state = state;
    if (state === "finished") { showSummary().then(showChanges); stopPermissions(); stopQuestions(); cancel.disabled = true; }
  }, (event) => {
    if (!refreshTimer) refreshTimer = setTimeout(() => { refreshTimer = null; showSummary(); }, SUMMARY_REFRESH_MS);
    // A request opened or closed: show its card (or its end) now, not at the next poll.
    if (event.type === "permission_request" || event.type === "permission_closed") stopPermissions.now();
    if (event.type === "elicitation_request" || event.type === "elicitation_closed") stopQuestions.now();
  });
  return () => { close(); stopPermissions(); stopQuestions(); clearTimeout(refreshTimer); };
}
