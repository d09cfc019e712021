// Sessions: the list, and one session with its prompt box (queued prompts shown with their
// position), the cancel button of its active turn, its runs, and its safe controls (BOOLEAN
// and SELECT only, sent back as exactly {controlId, value, revision}).
// The session routes are the service's (docs/api.md, "Sessions"); a session is addressed by
// its name.

import { h, replaceChildren, badge, facts } from "../dom.js";
import { get, post, ROUTES } from "../api.js";
import { errorBox, every, field, listOf, table } from "./common.js";
import { runsTable } from "./runs.js";

// How often a session's page reads its status, queue and runs again (ms).
export const SESSION_POLL_MS = 2000;

// The control types the page renders; anything else is the provider's and is never shown.
const SAFE_TYPES = new Set(["BOOLEAN", "SELECT"]);

// Run statuses during which controls are disabled.
const BUSY = new Set(["QUEUED", "STARTING", "RUNNING", "AWAITING_APPROVAL", "INTERRUPTING", "RECOVERY_REQUIRED"]);
// Session statuses during which controls are disabled (a turn runs, or recovery is required).
const BUSY_SESSION = new Set(["ACTIVE", "RECOVERY_REQUIRED"]);

export function sessionsPage(view) {
  const agent = h("input", { name: "agent", placeholder: "any", autocomplete: "off" });
  const box = h("div", { "aria-live": "polite" });
  const load = async () => {
    try {
      const sessions = listOf(await get(ROUTES.sessions(), { agent: agent.value.trim() }), "sessions");
      const key = (s) => String(s.name);
      replaceChildren(box, table([
        ["session", (s) => h("a", { href: `#/sessions/${encodeURIComponent(key(s))}` }, h("code", {}, key(s)))],
        ["status", (s) => (s.status ? badge(s.status) : "")],
        ["agent", (s) => String((s.profile === "custom" && s.agentCommand ? s.agentCommand : s.profile) ?? "")],
        ["host", (s) => String(s.host ?? "")],
        ["cwd", (s) => h("code", {}, String(s.cwd ?? ""))],
        ["active run", (s) => (s.activeRunId ? h("a", { href: `#/runs/${encodeURIComponent(s.activeRunId)}` }, String(s.activeRunId)) : "")],
        ["updated", (s) => String(s.updatedAt ?? "")],
      ], sessions, "No sessions."));
    } catch (error) {
      replaceChildren(box, errorBox(error));
    }
  };
  const form = h("form", { class: "filters", "aria-label": "filters", onsubmit: (e) => { e.preventDefault(); load(); } },
    field("Agent", agent), h("button", { type: "submit" }, "Filter"));
  replaceChildren(view, h("h1", {}, "Sessions"), newSessionForm(), h("h2", {}, "Sessions"), form, box);
  load();
}

/** The form that creates a named session (`POST /api/v1/sessions`); the page opens it. */
function newSessionForm() {
  const name = h("input", { name: "name", placeholder: "generated when empty", autocomplete: "off" });
  const agent = h("input", { name: "agent", placeholder: "profile, e.g. claude", autocomplete: "off" });
  const command = h("input", { name: "agentCommand", placeholder: "or an agent command (needs --allow-agent-command)", autocomplete: "off" });
  const cwd = h("input", { name: "cwd", placeholder: "absolute path", autocomplete: "off" });
  const status = h("div", { "aria-live": "polite", "data-testid": "new-session-status" });
  const submit = async (e) => {
    e.preventDefault();
    const body = {};
    for (const [key, input] of [["name", name], ["agent", agent], ["agentCommand", command], ["cwd", cwd]]) {
      if (input.value.trim()) body[key] = input.value.trim();
    }
    status.textContent = "Creating the session (the agent starts)…";
    try {
      const record = await post(ROUTES.sessions(), body);
      location.hash = `#/sessions/${encodeURIComponent(record.name)}`;
    } catch (error) {
      replaceChildren(status, errorBox(error));
    }
  };
  return h("details", { class: "card" }, h("summary", {}, "New session"),
    h("form", { class: "filters", "aria-label": "new session", onsubmit: submit },
      field("Name", name), field("Agent profile", agent), field("Agent command", command), field("Working directory", cwd),
      h("button", { type: "submit" }, "Create")),
    status);
}

/** One control's form row; `send(control, value)` posts it. */
function controlRow(control, disabled, send) {
  const id = `control-${control.id}`;
  let input;
  if (control.type === "BOOLEAN") {
    input = h("input", { type: "checkbox", id, checked: control.value === true, disabled: disabled || control.mutable === false });
    input.addEventListener("change", () => send(control, input.checked));
  } else {
    input = h("select", { id, disabled: disabled || control.mutable === false },
      (control.choices ?? []).map((c) => {
        const value = typeof c === "object" ? c.value ?? c.id : c;
        const label = typeof c === "object" ? c.label ?? c.name ?? value : c;
        return h("option", { value: String(value), selected: value === control.value }, String(label));
      }));
    input.addEventListener("change", () => send(control, input.value));
  }
  return h("div", { class: "control", "data-id": String(control.id) },
    h("label", { for: id }, String(control.label ?? control.id)), " ", input,
    h("span", { class: "muted" }, ` id ${control.id}, value `, h("code", {}, JSON.stringify(control.value))));
}

/** The controls panel of `sessionId` into `box`; `busy` disables every control. */
export async function controlsInto(box, sessionId, busy) {
  let data;
  try {
    data = await get(ROUTES.controls(sessionId));
  } catch (error) {
    replaceChildren(box, errorBox(error));
    return;
  }
  const revision = data.revision;
  const controls = listOf(data, "controls").filter((c) => SAFE_TYPES.has(c.type));
  const status = h("div", { class: "controls-status", "aria-live": "polite", "data-testid": "controls-status" });
  const send = async (control, value) => {
    status.textContent = `Setting ${control.label ?? control.id}…`;
    try {
      await post(ROUTES.controls(sessionId), { controlId: control.id, value, revision });
      await controlsInto(box, sessionId, busy);
      box.querySelector(".controls-status").textContent = `${control.label ?? control.id} set.`;
    } catch (error) {
      const stale = error.code === "CONTROL_REVISION_STALE";
      await controlsInto(box, sessionId, busy);
      const fresh = box.querySelector(".controls-status");
      replaceChildren(fresh, stale
        ? h("p", { class: "error stale", role: "alert" }, badge("stale"), ` The controls changed since revision ${revision} was shown; this view was refreshed. Nothing was set.`)
        : errorBox(error));
    }
  };
  const groups = new Map();
  for (const c of controls) {
    const group = String(c.group ?? "other");
    if (!groups.has(group)) groups.set(group, []);
    groups.get(group).push(c);
  }
  replaceChildren(box,
    h("p", { class: "muted" }, `catalog revision ${revision}`, busy ? " · disabled while a run is active or recovery is required" : "",
      data.omitted ? ` · ${data.omitted} provider controls not shown (not BOOLEAN or SELECT)` : ""),
    controls.length ? h("form", { class: "controls-form", "data-revision": String(revision), onsubmit: (e) => e.preventDefault() },
      [...groups].map(([group, list]) => h("fieldset", {}, h("legend", {}, group), list.map((c) => controlRow(c, busy, send)))))
      : h("p", { class: "muted" }, "This session has no BOOLEAN or SELECT controls."),
    status);
}

// The labels of a session's requested settings (`baton session new --mode/--model/--effort
// /--set-option`); a session option is shown as "option ID".
const SETTING_LABELS = { mode: "mode", model: "model", effort: "effort" };

/** One setting's value as text: a string as it is, anything else as compact JSON. */
function settingText(value) {
  return typeof value === "string" ? value : JSON.stringify(value);
}

/**
 * The session's requested settings as a table of setting and value (the options given with
 * --set-option one row each), or null when none was asked for.
 */
export function settingsTable(settings) {
  const rows = [];
  for (const [key, value] of Object.entries(settings ?? {})) {
    if (value === null || value === undefined) continue;
    if (key === "config" && typeof value === "object" && !Array.isArray(value)) {
      for (const [option, chosen] of Object.entries(value)) rows.push([`option ${option}`, chosen]);
    } else {
      rows.push([SETTING_LABELS[key] ?? key, value]);
    }
  }
  if (!rows.length) return null;
  return h("table", { class: "settings", "data-testid": "session-settings" },
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "setting"), h("th", { scope: "col" }, "value"))),
    h("tbody", {}, rows.map(([label, value]) => h("tr", {}, h("th", { scope: "row" }, label), h("td", {}, h("code", {}, settingText(value)))))));
}

export function sessionPage(view, [name]) {
  return liveSessionPage(view, name);
}

function liveSessionPage(view, sessionId) {
  const summary = h("div", {});
  const controls = h("section", { "aria-label": "session controls" });
  const runs = h("div", {});
  const queueBox = h("div", { "data-testid": "queue" });
  const promptStatus = h("div", { "aria-live": "polite", "data-testid": "prompt-status" });
  const text = h("textarea", { name: "prompt", rows: "4", "aria-label": "prompt" });
  const cancelStatus = h("div", { "aria-live": "polite" });
  const steerText = h("input", { name: "steer", type: "text", "aria-label": "steer" });
  const steerStatus = h("div", { "aria-live": "polite", "data-testid": "steer-status" });
  const refresh = async () => {
    let session;
    try {
      session = await get(ROUTES.session(sessionId));
    } catch (error) {
      replaceChildren(summary, errorBox(error));
      return;
    }
    const record = session.session ?? session;
    const sessionRuns = listOf(session, "runs");
    const queue = listOf(session, "queue");
    const busy = BUSY_SESSION.has(record.status) || queue.length > 0 || sessionRuns.some((r) => BUSY.has(r.status));
    closeButton.disabled = record.status === "CLOSED";
    replaceChildren(summary, facts([
      ["status", badge(record.status ?? "?")],
      ["agent", record.profile === "custom" && record.agentCommand ? h("code", {}, String(record.agentCommand)) : record.profile],
      ["host", record.host ?? null],
      ["cwd", record.cwd ? h("code", {}, String(record.cwd)) : null],
      ["provider session", record.providerSessionId ? h("code", {}, String(record.providerSessionId)) : null],
      ["forked from", record.forkedFrom ? h("span", {}, h("a", { href: `#/sessions/${encodeURIComponent(record.forkedFrom)}` }, String(record.forkedFrom)), ` (${record.forkTurns ?? "?"} turns)`) : null],
      ["active run", record.activeRunId ? h("a", { href: `#/runs/${encodeURIComponent(record.activeRunId)}` }, String(record.activeRunId)) : null],
      ["attached here", session.attachedHere === undefined ? null : String(session.attachedHere)],
      ["settings", settingsTable(record.settings)],
    ]));
    replaceChildren(queueBox, queue.length
      ? h("ol", { class: "queue", "aria-label": "prompts running or waiting" }, queue.map((t) => h("li", {},
        badge(t.state ?? "?"), t.position ? ` position ${t.position}` : " next", " · ",
        t.runId ? h("a", { href: `#/runs/${encodeURIComponent(t.runId)}` }, String(t.runId)) : `prompt ${t.promptId}`)))
      : h("p", { class: "muted" }, "No prompt is running or waiting."));
    replaceChildren(runs, runsTable(sessionRuns));
    // The controls are rendered again only when the session's busy state changed, so a poll
    // never pulls a select out from under the user.
    if (busy !== shownBusy) {
      shownBusy = busy;
      await controlsInto(controls, sessionId, busy);
    }
  };
  let shownBusy = null;
  const submit = async (e) => {
    e.preventDefault();
    if (!text.value.trim()) return;
    try {
      const answer = await post(ROUTES.prompt(sessionId), { prompt: text.value });
      // Nothing ahead: the run exists and carries its id. Else the prompt waits at `position`.
      replaceChildren(promptStatus, answer.runId
        ? h("p", {}, "Run ", h("a", { href: `#/runs/${encodeURIComponent(answer.runId)}` }, h("code", {}, String(answer.runId))), " started")
        : h("p", {}, `Prompt ${answer.promptId} queued at position ${answer.position}`));
      text.value = "";
      refresh();
    } catch (error) {
      replaceChildren(promptStatus, errorBox(error));
    }
  };
  const closeStatus = h("div", { "aria-live": "polite" });
  const closeButton = h("button", { type: "button", onclick: async () => {
    try {
      await post(ROUTES.closeSession(sessionId));
      closeStatus.textContent = "Closed.";
      refresh();
    } catch (error) {
      replaceChildren(closeStatus, errorBox(error));
    }
  } }, "Close the session");
  // Steering (issue 29): the text joins the running turn where the agent supports it; else
  // the service queues it as the next turn and says why. Never a cancel and a new prompt.
  const steer = async (e) => {
    e.preventDefault();
    if (!steerText.value.trim()) return;
    try {
      const answer = await post(ROUTES.steerSession(sessionId), { text: steerText.value });
      steerStatus.textContent = answer.outcome === "queued"
        ? `Not steered (${answer.reason}): queued as the next turn.`
        : `Steering: ${answer.outcome}${answer.reason ? ` (${answer.reason})` : ""}.`;
      steerText.value = "";
      refresh();
    } catch (error) {
      replaceChildren(steerStatus, errorBox(error));
    }
  };
  const cancel = async () => {
    try {
      await post(ROUTES.cancelSession(sessionId));
      cancelStatus.textContent = "Cancel sent to the active turn.";
      refresh();
    } catch (error) {
      replaceChildren(cancelStatus, errorBox(error));
    }
  };
  replaceChildren(view, h("h1", {}, "Session ", h("code", {}, sessionId)), summary,
    h("h2", {}, "Prompt"),
    h("form", { "aria-label": "prompt", onsubmit: submit }, field("Prompt", text), h("p", {}, h("button", { type: "submit" }, "Send prompt"), " ",
      h("button", { type: "button", onclick: cancel }, "Cancel the active turn"), " ", closeButton)),
    promptStatus, cancelStatus, closeStatus,
    h("h2", {}, "Steer the running turn"),
    h("form", { "aria-label": "steer", onsubmit: steer }, field("Add to the running turn", steerText),
      h("p", {}, h("button", { type: "submit" }, "Steer"))),
    steerStatus,
    h("h2", {}, "Queue"), queueBox,
    h("h2", {}, "Controls"), controls,
    h("h2", {}, "Runs"), runs);
  return every(SESSION_POLL_MS, refresh);
}
