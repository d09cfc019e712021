// Agents: every profile's readiness (the doctor's records, docs/profiles.md), a live check
// button, and the sign-in methods an agent advertises, shown and never executed.

import { h, replaceChildren, badge, facts } from "../dom.js";
import { get, post, ROUTES } from "../api.js";
import { errorBox, listOf, show, table } from "./common.js";

function checksList(checks) {
  return h("ul", { class: "checks", "aria-label": "checks" },
    Object.entries(checks ?? {}).map(([name, value]) => h("li", {}, `${name}: `, h("code", {}, String(value)))));
}

/** One profile's card; `onLive` runs its live check. */
export function agentCard(record, onLive) {
  const card = h("section", { class: "card", "data-testid": `agent-${record.profile}`, "aria-label": `agent ${record.profile}` });
  const status = h("p", { "aria-live": "polite", class: "live-status" });
  const button = h("button", { type: "button", onclick: () => onLive(record, card, status, button) }, `Live check ${record.profile}`);
  replaceChildren(card,
    h("h2", {}, String(record.display_name ?? record.profile), " ", badge(record.state ?? "UNKNOWN")),
    facts([
      ["profile", h("code", {}, String(record.profile))],
      ["next action", record.next_action ?? "none"],
      ["executable", record.executable ? h("code", {}, String(record.executable)) : "not found"],
      ["found through", record.source],
      ["version", record.version],
      ["launch form", record.launch_form ? h("code", {}, String(record.launch_form)) : null],
      ["environment contract", record.environment_contract],
      ["agent", record.agent ? `${record.agent.name ?? "?"} ${record.agent.version ?? ""}` : null],
      ["live check", record.live ? "ran" : "not run"],
    ]),
    h("h3", {}, "Checks"), checksList(record.checks),
    (record.diagnostics ?? []).length ? [h("h3", {}, "Diagnostics"), h("ul", {}, record.diagnostics.map((d) =>
      h("li", {}, badge(d.severity ?? "info"), " ", h("code", {}, String(d.code)), " ", String(d.message ?? ""))))] : null,
    (record.rejected ?? []).length ? [h("h3", {}, "Rejected candidates"), h("ul", {}, record.rejected.map((r) =>
      h("li", {}, h("code", {}, String(r.path)), ` (${r.source ?? "?"}): `, h("code", {}, String(r.reason)), r.detail ? ` ${r.detail}` : "")))] : null,
    (record.auth_methods ?? []).length ? [h("h3", {}, "Sign-in methods (shown, never run by Baton)"), h("ul", { class: "auth-methods" }, record.auth_methods.map((m) =>
      h("li", {}, h("code", {}, String(m.id)), ` ${m.name ?? ""}`, m.type ? ` (${m.type})` : "")))] : null,
    h("p", {}, button), status);
  return card;
}

async function runLive(record, card, status, button) {
  button.disabled = true;
  status.textContent = `Live check of ${record.profile} running…`;
  try {
    const answer = await post(ROUTES.liveCheck(record.profile));
    const fresh = answer?.readiness ?? answer?.record ?? answer;
    card.replaceWith(agentCard(fresh, runLive));
  } catch (error) {
    replaceChildren(status, errorBox(error));
    button.disabled = false;
  }
}

export function agentsPage(view) {
  show(view, "Agents", () => get(ROUTES.readiness()), (data) => {
    const records = listOf(data, "profiles");
    const summary = table([
      ["profile", (r) => h("code", {}, String(r.profile))],
      ["state", (r) => badge(r.state ?? "UNKNOWN")],
      ["next action", (r) => String(r.next_action ?? "none")],
      ["version", (r) => String(r.version ?? "")],
      ["executable", (r) => (r.executable ? h("code", {}, String(r.executable)) : "not found")],
    ], records, "No profiles.");
    return h("div", {}, summary, records.map((r) => agentCard(r, runLive)));
  });
}
