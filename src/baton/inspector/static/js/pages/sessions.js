// Sessions: the list, and one session with its prompt box (queued prompts shown with their
// position), the cancel button of its active turn, its runs, and its safe controls (BOOLEAN
// and SELECT only, sent back as exactly {controlId, value, revision}).

import { h, replaceChildren, badge, facts } from "../dom.js";
import { get, post, ROUTES } from "../api.js";
import { errorBox, field, listOf, table } from "./common.js";
import { runsTable, runStatus } from "./runs.js";

// The control types the page renders; anything else is the provider's and is never shown.
const SAFE_TYPES = new Set(["BOOLEAN", "SELECT"]);

// Run statuses during which controls are disabled.
const BUSY = new Set(["QUEUED", "RUNNING", "RECOVERY_REQUIRED"]);

export function sessionsPage(view) {
  const agent = h("input", { name: "agent", placeholder: "any", autocomplete: "off" });
  const box = h("div", { "aria-live": "polite" });
  const load = async () => {
    try {
      const sessions = listOf(await get(ROUTES.sessions(), { agent: agent.value.trim() }), "sessions", "items");
      replaceChildren(box, table([
        ["session", (s) => h("a", { href: `#/sessions/${encodeURIComponent(s.sessionId ?? s.id)}` }, h("code", {}, String(s.sessionId ?? s.id).slice(0, 12)))],
        ["state", (s) => badge(s.state ?? s.status ?? "?")],
        ["agent", (s) => String(s.agent ?? "")],
        ["cwd", (s) => h("code", {}, String(s.cwd ?? ""))],
        ["turns", (s) => String(s.turns ?? s.runs ?? "")],
        ["last run", (s) => s.lastRun ? runStatus(s.lastRun) : ""],
      ], sessions, "No sessions."));
    } catch (error) {
      replaceChildren(box, errorBox(error));
    }
  };
  const form = h("form", { class: "filters", "aria-label": "filters", onsubmit: (e) => { e.preventDefault(); load(); } },
    field("Agent", agent), h("button", { type: "submit" }, "Filter"));
  replaceChildren(view, h("h1", {}, "Sessions"), form, box);
  load();
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

export function sessionPage(view, [sessionId]) {
  const summary = h("div", {});
  const controls = h("section", { "aria-label": "session controls" });
  const runs = h("div", {});
  const promptStatus = h("div", { "aria-live": "polite", "data-testid": "prompt-status" });
  const text = h("textarea", { name: "prompt", rows: "4", "aria-label": "prompt" });
  const cancelStatus = h("div", { "aria-live": "polite" });
  const refresh = async () => {
    let session;
    try {
      session = await get(ROUTES.session(sessionId));
    } catch (error) {
      replaceChildren(summary, errorBox(error));
      return;
    }
    const sessionRuns = listOf(session, "runs");
    const busy = sessionRuns.some((r) => BUSY.has(r.status)) || BUSY.has(session.state);
    replaceChildren(summary, facts([
      ["state", badge(session.state ?? session.status ?? "?")],
      ["agent", session.agent],
      ["cwd", session.cwd ? h("code", {}, String(session.cwd)) : null],
      ["provider session", session.providerSessionId ? h("code", {}, String(session.providerSessionId)) : null],
      ["queued prompts", session.queued ?? session.queueLength],
    ]));
    replaceChildren(runs, runsTable(sessionRuns));
    await controlsInto(controls, sessionId, busy);
  };
  const submit = async (e) => {
    e.preventDefault();
    if (!text.value.trim()) return;
    try {
      const answer = await post(ROUTES.prompt(sessionId), { prompt: text.value });
      const runId = answer.runId;
      replaceChildren(promptStatus, h("p", {}, "Run ", h("a", { href: `#/runs/${encodeURIComponent(runId)}` }, h("code", {}, String(runId))),
        answer.position ? ` queued at position ${answer.position}` : " started"));
      text.value = "";
      refresh();
    } catch (error) {
      replaceChildren(promptStatus, errorBox(error));
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
      h("button", { type: "button", onclick: cancel }, "Cancel the active turn"))),
    promptStatus, cancelStatus,
    h("h2", {}, "Controls"), controls,
    h("h2", {}, "Runs"), runs);
  refresh();
}
