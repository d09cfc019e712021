// Batches (docs/batches.md): the list, and one batch as its matrix: a row per task, a column
// per agent, each cell (one per repeat) coloured by its state with its cost and wall time and a
// link to its run; choosing one task shows its agents' changes side by side (the compare view).

import { h, replaceChildren, badge, duration } from "../dom.js";
import { get, ROUTES } from "../api.js";
import { errorBox, listOf, table, every } from "./common.js";
import { changesInto } from "./changes.js";

// How often a running batch's page is refreshed (ms): one GET per tick.
export const BATCH_POLL_MS = 2_000;

function countsText(counts) {
  return Object.entries(counts ?? {}).map(([state, n]) => `${n} ${state.toLowerCase()}`).join(", ");
}

function costText(value, currency) {
  if (typeof value !== "number") return value === "unknown" ? "cost unknown" : "";
  return currency === "USD" ? `$${value.toFixed(4)}` : `${value.toFixed(4)} ${currency ?? ""}`;
}

function totalCost(cost) {
  const parts = Object.entries(cost ?? {}).map(([currency, amount]) => costText(amount, currency));
  return parts.length ? parts.join(", ") : "unknown";
}

/** The list of batches, newest first. */
export function batchesPage(view) {
  const load = async () => {
    try {
      const data = await get(ROUTES.batches(), { limit: 100 });
      replaceChildren(view, h("h1", {}, "Batches"),
        table([
          ["batch", (b) => h("a", { href: `#/batches/${encodeURIComponent(b.batchId)}` }, h("code", {}, String(b.batchId)))],
          ["name", (b) => String(b.name ?? "")],
          ["state", (b) => badge(String(b.state))],
          ["cells", (b) => String(b.cells)],
          ["counts", (b) => countsText(b.counts)],
          ["cost", (b) => totalCost(b.cost)],
          ["created", (b) => String(b.createdAt ?? "")],
        ], listOf(data, "batches"), "No batch yet: `baton batch run FILE`."));
    } catch (error) {
      replaceChildren(view, h("h1", {}, "Batches"), errorBox(error));
    }
  };
  return every(BATCH_POLL_MS, load);
}

function cellBox(row) {
  const state = String(row.state ?? "?");
  const wall = typeof row.wallMs === "number" ? duration(row.wallMs) : "";
  const label = row.runId
    ? h("a", { href: `#/runs/${encodeURIComponent(row.runId)}` }, h("code", {}, `#${row.repeat}`))
    : h("code", {}, `#${row.repeat}`);
  return h("div", { class: "batch-cell", "data-state": state.toLowerCase(), "data-testid": "batch-cell",
    title: [state, row.stopReason, row.reason, row.errorCode].filter(Boolean).join(" · ") },
  label, " ", badge(state), h("div", { class: "muted" }, [wall, costText(row.cost, row.currency)].filter(Boolean).join(" · ")));
}

/** One batch as its matrix, with the compare view of a chosen task. */
export function batchPage(view, [batchId]) {
  const compare = h("div", { "data-testid": "batch-compare" });
  let chosen = null;
  const showCompare = (rows, task) => {
    chosen = task;
    const latest = rows.filter((r) => r.task === task && r.runId);
    const columns = latest.map((row) => {
      const box = h("div", {}, h("p", { class: "muted" }, "Loading…"));
      changesInto(box, row.runId);
      return h("section", { class: "compare-column" },
        h("h3", {}, `${row.agent} #${row.repeat} `, badge(String(row.state))),
        h("p", {}, `${row.stopReason ?? ""} · ${costText(row.cost, row.currency)}`),
        box);
    });
    replaceChildren(compare, h("h2", {}, `Compare: ${task}`),
      columns.length ? h("div", { class: "compare-grid" }, columns) : h("p", { class: "muted" }, "No run yet."));
  };
  let stop = null;
  const load = async () => {
    let data;
    try {
      data = await get(ROUTES.batch(batchId));
    } catch (error) {
      replaceChildren(view, h("h1", {}, "Batch"), errorBox(error));
      return;
    }
    const rows = data.rows ?? [];
    const { tasks = [], agents = [] } = data.matrix ?? {};
    const grid = h("table", { class: "batch-matrix", "data-testid": "batch-matrix" },
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "task"), agents.map((a) => h("th", { scope: "col" }, String(a))))),
      h("tbody", {}, tasks.map((task) => h("tr", {},
        h("th", { scope: "row" }, h("button", { type: "button", class: "link", onclick: () => showCompare(rows, task) }, String(task))),
        agents.map((agent) => h("td", {}, rows.filter((r) => r.task === task && r.agent === agent).map(cellBox)))))));
    replaceChildren(view,
      h("h1", {}, "Batch ", h("code", {}, String(data.batchId))),
      h("p", {}, badge(String(data.state)), " ", data.name ? String(data.name) : "",
        data.stopReason ? ` · ${data.stopReason}` : "", ` · ${countsText(data.counts)} · cost ${totalCost(data.cost)}`,
        h("span", { class: "muted" }, ` · spec ${String(data.specHash ?? "").slice(0, 19)}`)),
      grid,
      h("p", { class: "muted" }, "Choose a task to compare its agents' changes side by side."),
      compare);
    if (chosen !== null && !compare.childElementCount) showCompare(rows, chosen);
    // A batch no process is running changes no more: stop asking.
    if (data.state !== "RUNNING" && stop !== null) stop();
  };
  stop = every(BATCH_POLL_MS, load);
  return stop;
}
