// Journal: the redacted records of a run or a server instance, a page at a time, with the
// verification status the service reports.

import { h, replaceChildren, badge, json } from "../dom.js";
import { get, ROUTES } from "../api.js";
import { errorBox, field, listOf } from "./common.js";

// Records one page asks for (the service clamps to its own bound).
export const JOURNAL_PAGE_RECORDS = 100;

export function journalPage(view, [kind, id]) {
  const which = h("select", { name: "kind" }, h("option", { value: "run", selected: kind !== "server" }, "run"),
    h("option", { value: "server", selected: kind === "server" }, "server instance"));
  const input = h("input", { name: "id", value: id ?? "", autocomplete: "off" });
  const box = h("div", { "aria-live": "polite" });
  const load = async (after) => {
    const target = input.value.trim();
    if (!target) { replaceChildren(box, h("p", { class: "muted" }, "Name a run or a server instance.")); return; }
    const route = which.value === "server" ? ROUTES.serverJournal(target) : ROUTES.runJournal(target);
    try {
      const data = await get(route, { after, limit: JOURNAL_PAGE_RECORDS });
      const records = listOf(data, "records", "items");
      const next = data?.next ?? data?.nextAfter ?? (records.length ? records[records.length - 1].sequence : null);
      const verified = data?.verified ?? data?.verification?.ok;
      replaceChildren(box,
        h("p", {}, "verification: ", verified === undefined ? "not reported" : badge(verified ? "ok" : "fail")),
        records.length ? h("ol", { class: "journal" }, records.map((r) => h("li", {},
          h("p", {}, h("code", {}, `#${r.sequence}`), ` ${r.direction ?? ""} ${r.recordedAt ?? ""} `, r.sha256 ? h("code", { class: "muted" }, String(r.sha256).slice(0, 16)) : null),
          json(r.raw ?? r)))) : h("p", { class: "muted" }, "No records."),
        records.length >= JOURNAL_PAGE_RECORDS && next !== null
          ? h("button", { type: "button", onclick: () => load(next) }, "Next page") : null);
    } catch (error) {
      replaceChildren(box, errorBox(error));
    }
  };
  const form = h("form", { class: "filters", "aria-label": "journal", onsubmit: (e) => { e.preventDefault(); load(); } },
    field("Of a", which), field("Id", input), h("button", { type: "submit" }, "Show"));
  replaceChildren(view, h("h1", {}, "Journal"), form, box);
  if (id) load();
}
