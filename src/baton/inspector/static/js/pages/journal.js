// Journal: the redacted records of a run or a server instance, a page at a time. Each record's
// SHA-256 (of its redacted raw text, docs/journal.md) is checked again in the page, so the
// verification status shown is this page's own reading, not only the service's word.

import { h, replaceChildren, badge } from "../dom.js";
import { get, ROUTES } from "../api.js";
import { errorBox, field, listOf } from "./common.js";

// Records one page asks for (the service clamps to its own bound, 500).
export const JOURNAL_PAGE_RECORDS = 100;

/** Hex SHA-256 of `text` as UTF-8 (the page is a secure context on loopback). */
export async function sha256Hex(text) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Whether each record's sha256 matches its raw text: [ok, total]. */
export async function verifyRecords(records) {
  let ok = 0;
  for (const r of records) if (typeof r.raw === "string" && (await sha256Hex(r.raw)) === r.sha256) ok++;
  return [ok, records.length];
}

/** One record as a list item: sequence, direction, time, method, then its raw text. */
export function recordItem(r) {
  const method = r.metadata?.method ? ` ${r.metadata.method}` : "";
  return h("li", { class: "journal-record", "data-id": String(r.sequence) },
    h("p", {}, h("code", {}, `#${r.sequence}`), ` ${r.direction ?? ""}${method} ${r.metadata?.kind ?? ""} · ${r.recordedAt ?? ""} · `,
      h("code", { class: "muted", title: "SHA-256 of the redacted raw text" }, String(r.sha256 ?? "").slice(0, 16))),
    h("pre", { class: "json" }, typeof r.raw === "string" ? r.raw : JSON.stringify(r.raw)));
}

export function journalPage(view, [kind, id]) {
  const which = h("select", { name: "kind" }, h("option", { value: "run", selected: kind !== "server" }, "run"),
    h("option", { value: "server", selected: kind === "server" }, "server instance"));
  const input = h("input", { name: "target", value: id ?? "", autocomplete: "off", placeholder: "run id (or a unique prefix) or server instance id" });
  const box = h("div", { "aria-live": "polite" });
  const load = async (after) => {
    const target = input.value.trim();
    if (!target) { replaceChildren(box, h("p", { class: "muted" }, "Name a run or a server instance.")); return; }
    try {
      const route = which.value === "server" ? ROUTES.serverJournal(target) : ROUTES.runJournal(target);
      const data = await get(route, { after, limit: JOURNAL_PAGE_RECORDS });
      const records = listOf(data, "records");
      const [ok, total] = await verifyRecords(records);
      replaceChildren(box,
        h("p", {}, "server instance ", data.serverInstanceId
          ? h("a", { href: `#/journal/server/${encodeURIComponent(data.serverInstanceId)}` }, String(data.serverInstanceId)) : "?",
          data.runId ? `, run ${data.runId}` : "",
          after ? `, records after #${after}` : ", from the first record"),
        h("p", { "data-testid": "journal-verification" }, "verification: ", badge(ok === total ? "ok" : "fail"),
          ` ${ok} of ${total} records on this page match their SHA-256`),
        records.length ? h("ol", { class: "journal" }, records.map(recordItem)) : h("p", { class: "muted" }, "No records."),
        h("p", {}, after ? h("button", { type: "button", onclick: () => load(0) }, "First page") : null, " ",
          data.next !== null && data.next !== undefined ? h("button", { type: "button", onclick: () => load(data.next) }, "Next page") : null));
    } catch (error) {
      replaceChildren(box, errorBox(error));
    }
  };
  const form = h("form", { class: "filters", "aria-label": "journal", onsubmit: (e) => { e.preventDefault(); load(0); } },
    field("Of a", which), field("Id", input), h("button", { type: "submit" }, "Show"));
  replaceChildren(view, h("h1", {}, "Journal"), form, box);
  if (id) load(0);
}
