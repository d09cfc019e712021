// The transcript of a run: a model that folds run events (docs/events.md) into rows, and a
// paged view that renders only the rows of one page.
//
// A live run can produce tens of thousands of events. The model is plain data (consecutive text
// deltas join one row, a tool call's updates change its one row in place), and the view puts at
// most PAGE_ROWS rows in the DOM, re-rendering only the rows that changed, once per animation
// frame however many events arrived in it. So the cost of an event is O(1) and the page stays
// responsive at 10,000+ events (tests/browser/test_transcript.py).

import { h, replaceChildren, badge, duration } from "./dom.js";
import { lineDiff, MAX_RENDERED_DIFF_LINES } from "./diff.js";

// Bounds the rows in the DOM at once: the page renders one page of rows.
export const PAGE_ROWS = 100;
// Bounds one text row: longer agent text continues in a new row, so re-rendering a growing
// row never copies more than this many characters per frame.
export const MAX_ROW_TEXT_CHARS = 64 * 1024;

// Event types that become a one-line notice row, with how to say them.
const NOTICES = {
  run_started: (e) => `run started: agent ${e.agent ?? "?"}, cwd ${e.cwd ?? "?"}, policy ${e.policy ?? "?"}`,
  session: (e) => `session ${e.sessionId ?? "?"} (provider ${e.providerSessionId ?? "?"})` +
    (e.attachedBy ? `, attached by ${e.attachedBy}, ${e.replayedUpdates ?? 0} updates replayed` : ""),
  controls: (e) => `controls at revision ${e.revision ?? "?"}: ${(e.controls ?? []).length} shown, ${e.omitted ?? 0} omitted`,
  mode: (e) => `mode: ${e.modeId ?? "?"}`,
  config: (e) => `config: ${(e.configOptions ?? []).map((o) => `${o.id}=${o.currentValue}`).join(", ")}`,
  session_info: (e) => `session title: ${e.title ?? ""}`,
  commands: (e) => `commands: ${(e.commands ?? []).join(", ")}`,
  warning: (e) => `${e.code ?? "WARNING"}: ${e.message ?? ""}`,
  notice: (e) => `${e.code ? `${e.code}: ` : ""}${e.message ?? ""}`,
  dropped: (e) => `the live stream fell behind and was dropped by the service; resuming after the last event seen (${e.reason ?? ""})`,
  permission_request: (e) => `permission requested for ${e.toolCall?.title ?? e.toolCallId ?? "a tool call"}: waiting for an answer`,
  permission_closed: (e) => `permission request ${e.id ?? ""} closed`,
  elicitation_request: (e) => `the agent asks (${e.mode ?? "?"}): ${e.message ?? ""}: waiting for an answer`,
  elicitation_closed: (e) => `question ${e.id ?? ""} closed`,
  elicitation: (e) => `question ${e.request?.mode ?? ""} answered ${e.action ?? "?"} by ${e.chosenBy ?? "?"} (${e.reasonCode ?? ""})`,
};

// Run statuses whose turn is over: a stream of such a run ends after its record.
export const ENDED_STATUSES = new Set(["COMPLETED", "FAILED", "INTERRUPTED", "RECOVERY_REQUIRED", "LOST", "CANCELLED"]);

/** Folds run events into rows. Rows are plain objects; `version` bumps on every change. */
export class TranscriptModel {
  constructor() {
    this.reset();
  }

  /** Forget every row (a replay from the store starts over). */
  reset() {
    this.rows = [];
    this.events = 0;
    this.usage = null;
    this.result = null;
    this.counts = { text: 0, thought: 0, tool_call: 0, permission: 0, plan: 0, notice: 0 };
    this.toolRows = new Map();
    this.planRow = null;
    this.changed = new Set();
  }

  _add(row) {
    row.index = this.rows.length;
    row.version = 0;
    this.rows.push(row);
    this.changed.add(row.index);
    return row;
  }

  _touch(row) {
    row.version++;
    this.changed.add(row.index);
  }

  /** Fold one event in. Unknown types become a notice naming the type. */
  push(event) {
    this.events++;
    const type = event.type;
    if (type === "text" || type === "thought" || type === "user_text") {
      const text = typeof event.text === "string" ? event.text : "";
      const last = this.rows[this.rows.length - 1];
      if (last && last.kind === type && last.text.length + text.length <= MAX_ROW_TEXT_CHARS) {
        last.text += text;
        last.deltas += event.coalescedEvents ?? 1;
        this._touch(last);
      } else {
        this._add({ kind: type, text, deltas: event.coalescedEvents ?? 1 });
      }
      this.counts[type === "user_text" ? "text" : type]++;
    } else if (type === "tool_call") {
      const id = event.toolCallId ?? `anonymous-${this.events}`;
      const existing = this.toolRows.get(id);
      if (existing) {
        existing.tool = { ...existing.tool, ...event };
        existing.updates++;
        this._touch(existing);
      } else {
        this.toolRows.set(id, this._add({ kind: "tool_call", tool: { ...event }, updates: 1 }));
        this.counts.tool_call++;
      }
    } else if (type === "plan") {
      if (this.planRow) {
        this.planRow.entries = event.entries ?? [];
        this.planRow.updates++;
        this._touch(this.planRow);
      } else {
        this.planRow = this._add({ kind: "plan", entries: event.entries ?? [], updates: 1 });
      }
      this.counts.plan++;
    } else if (type === "permission") {
      this._add({ kind: "permission", permission: event, tool: this.toolRows.get(event.toolCallId)?.tool ?? null });
      this.counts.permission++;
    } else if (type === "usage") {
      this.usage = { used: event.used, size: event.size, cost: event.cost ?? null };
    } else if (type === "item") {
      // A part was materialized to the store: bookkeeping, not transcript.
    } else if (type === "result") {
      this.result = event;
      this._add({ kind: "result", result: event });
    } else if (type === "replay") {
      this.loadRecord(event.run ?? {});
    } else {
      const say = NOTICES[type];
      this._add({ kind: "notice", type: String(type), text: say ? say(event) : `${type}` });
      this.counts.notice++;
    }
  }

  /**
   * Start over from the store's record of a run (`baton show --json`; the stream's `replay`
   * event): its items, its permission decisions, and its outcome when the turn is over.
   */
  loadRecord(run) {
    this.reset();
    const items = Array.isArray(run.items) ? [...run.items] : [];
    items.sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0));
    for (const item of items) {
      const content = item.content && typeof item.content === "object" ? item.content : { text: String(item.content ?? "") };
      this.push({ ...content, type: item.kind, coalescedEvents: item.coalescedEvents });
    }
    for (const i of Array.isArray(run.interactions) ? run.interactions : []) {
      const options = (i.offeredOptions ?? []).filter((o) => o.offered !== false);
      this.push({
        type: "permission", toolCallId: i.toolCall?.toolCallId, options, optionId: i.choice,
        outcome: i.choice ? "selected" : String(i.state ?? "").toLowerCase(), chosenBy: i.chosenBy, reason: i.reason,
      });
    }
    if (ENDED_STATUSES.has(run.status)) {
      this.push({
        type: "result", status: run.status, stopReason: run.stopReason, errorCode: run.errorCode, message: run.diagnostic,
        skippedFrames: run.skippedFrames, violations: run.violations,
        durationMs: typeof run.durationSeconds === "number" ? run.durationSeconds * 1000 : undefined,
        toolCalls: this.counts.tool_call, permissions: this.counts.permission, fromStore: true,
      });
    }
  }

  /** The indexes of the rows changed since the last call (and forget them). */
  takeChanged() {
    const changed = this.changed;
    this.changed = new Set();
    return changed;
  }

  /** The final text of the reply: every text row joined, in order. */
  text() {
    return this.rows.filter((r) => r.kind === "text").map((r) => r.text).join("");
  }
}

function costText(cost) {
  if (!cost || typeof cost !== "object") return "";
  const amount = typeof cost.amount === "number" ? cost.amount.toFixed(4) : String(cost.amount ?? "?");
  return `${amount} ${cost.currency ?? ""}`.trim();
}

/** The usage line: tokens used of the context size, and the cost when the agent reports one. */
export function usageLine(usage) {
  if (!usage) return "no usage reported";
  const parts = [`${usage.used ?? "?"} of ${usage.size ?? "?"} tokens`];
  if (usage.cost) parts.push(`cost ${costText(usage.cost)}`);
  return parts.join(", ");
}

function renderDiff(diff) {
  if (!diff || typeof diff !== "object") return null;
  const summary = `${diff.files ?? 0} file(s), +${diff.added ?? 0} -${diff.removed ?? 0}`;
  const changes = Array.isArray(diff.changes) ? diff.changes : [];
  const blocks = changes.map((change) => {
    const ops = lineDiff(change.oldText, change.newText);
    const shown = ops.slice(0, MAX_RENDERED_DIFF_LINES);
    return h("figure", { class: "diff" },
      h("figcaption", {}, String(change.path ?? "(no path)"), change.truncated ? " (cut)" : ""),
      h("pre", { class: "diff-lines" }, shown.map(([op, line]) =>
        h("span", { class: "diff-line", "data-kind": op === "+" ? "added" : op === "-" ? "removed" : "same" }, `${op} ${line}\n`))),
      ops.length > shown.length ? h("p", { class: "muted" }, `${ops.length - shown.length} more lines not shown`) : null);
  });
  return h("div", { class: "diff-summary" }, h("p", {}, "diff: ", summary), blocks);
}

/**
 * A tool call in the run-event view's shape (`paths`, `diff.changes`), from either that view
 * or the agent's own ACP shape (`locations`, `content` diff items) that permission requests
 * carry.
 */
export function toolView(tool) {
  if (!tool || typeof tool !== "object") return {};
  const view = { ...tool };
  if (!Array.isArray(view.paths)) {
    view.paths = (Array.isArray(tool.locations) ? tool.locations : []).map((l) => l?.path).filter((p) => typeof p === "string");
  }
  if (!view.diff && Array.isArray(tool.content)) {
    const changes = tool.content.filter((c) => c && c.type === "diff")
      .map((c) => ({ path: c.path, oldText: c.oldText ?? null, newText: c.newText ?? null, truncated: false }));
    if (changes.length) {
      let added = 0;
      let removed = 0;
      for (const c of changes) for (const [op] of lineDiff(c.oldText, c.newText)) { if (op === "+") added++; else if (op === "-") removed++; }
      view.diff = { files: changes.length, added, removed, changes };
    }
  }
  if (!view.command && typeof tool.rawInput?.command === "string") view.command = tool.rawInput.command;
  return view;
}

/** The DOM of one tool call (also used by the permission cards). */
export function renderTool(raw) {
  const tool = toolView(raw);
  const paths = Array.isArray(tool.paths) ? tool.paths : [];
  return h("div", { class: "tool" },
    h("p", { class: "tool-head" },
      badge(tool.status ?? "pending"), " ",
      h("span", { class: "tool-kind" }, String(tool.kind ?? "other")), " ",
      h("span", { class: "tool-title" }, String(tool.title ?? "(untitled)"))),
    paths.length ? h("ul", { class: "paths", "aria-label": "locations" }, paths.map((p) => h("li", {}, h("code", {}, String(p))))) : null,
    tool.command ? h("pre", { class: "command", "aria-label": "command" }, String(tool.command)) : null,
    renderDiff(tool.diff));
}

function renderPermission(p, tool) {
  const chosen = (p.options ?? []).find((o) => o.optionId === p.optionId);
  return h("div", { class: "permission-decision" },
    h("p", {}, badge(p.outcome ?? "?"), " ",
      chosen ? `${chosen.name} (${chosen.kind}, optionId ${chosen.optionId})` : p.optionId ? `optionId ${p.optionId}` : "no option",
      ` chosen by ${p.chosenBy ?? "?"}`),
    p.reasonCode || p.reason ? h("p", { class: "muted" }, `${p.reasonCode ?? ""} ${p.reason ?? ""}`.trim()) : null,
    tool ? h("p", { class: "muted" }, `for tool call ${p.toolCallId}: ${tool.title ?? ""}`) : null);
}

function renderResult(r) {
  return h("div", { class: "result" },
    h("p", {}, badge(r.status ?? "?"), " ", r.stopReason ? `stop reason ${r.stopReason}` : "",
      r.durationMs !== undefined ? `, ${duration(r.durationMs)}` : ""),
    r.errorCode ? h("p", {}, h("code", {}, String(r.errorCode)), " ", String(r.message ?? "")) : null,
    h("p", { class: "muted" },
      `tool calls ${r.toolCalls ?? 0}, permissions ${r.permissions ?? 0}, skipped frames ${r.skippedFrames ?? 0}, violations ${r.violations ?? 0}`,
      r.bound ? `, budget elapsed: ${r.bound}` : ""),
    r.nextStep ? h("p", {}, "next: ", String(r.nextStep)) : null,
    r.fromStore ? h("p", { class: "muted" }, "(as recorded in the store)") : null);
}

/** The DOM of one row. */
export function renderRow(row) {
  const head = (label) => h("span", { class: "row-label" }, label);
  let body;
  switch (row.kind) {
    case "text":
      body = [head("agent"), h("div", { class: "text" }, row.text)];
      break;
    case "user_text":
      body = [head("user"), h("div", { class: "text" }, row.text)];
      break;
    case "thought":
      body = [h("details", {}, h("summary", {}, `thought (${row.text.length} characters)`), h("div", { class: "text thought" }, row.text))];
      break;
    case "tool_call":
      body = [head(`tool call${row.updates > 1 ? ` (${row.updates} updates)` : ""}`), renderTool(row.tool)];
      break;
    case "plan":
      body = [head("plan"), h("ol", { class: "plan" }, row.entries.map((e) =>
        h("li", {}, badge(e.status ?? "pending"), " ", String(e.content ?? ""), e.priority ? ` (${e.priority})` : "")))];
      break;
    case "permission":
      body = [head("permission"), renderPermission(row.permission, row.tool)];
      break;
    case "result":
      body = [head("result"), renderResult(row.result)];
      break;
    default:
      body = [head(String(row.type ?? "notice").replaceAll("_", " ")), h("span", { class: "notice" }, row.text)];
  }
  return h("li", { class: "row", "data-kind": row.kind, "data-id": String(row.index) }, body);
}

/**
 * The paged view of a model. `follow` keeps the last page shown as rows arrive; paging back
 * stops following until "Latest" is pressed. Renders at most once per animation frame.
 */
export class TranscriptView {
  constructor(container, model) {
    this.model = model;
    this.page = 0;
    this.follow = true;
    this.scheduled = false;
    this.rendered = new Map();
    this.status = h("p", { class: "transcript-status", "aria-live": "polite" });
    this.usage = h("p", { class: "usage", "data-testid": "usage" });
    this.list = h("ol", { class: "transcript", "aria-label": "transcript" });
    this.pageLabel = h("span", { class: "page-label" });
    const button = (label, onclick) => h("button", { type: "button", onclick }, label);
    this.pager = h("nav", { class: "pager", "aria-label": "transcript pages" },
      button("First", () => this.goTo(0)),
      button("Older", () => this.goTo(this.page - 1)),
      this.pageLabel,
      button("Newer", () => this.goTo(this.page + 1)),
      button("Latest", () => { this.follow = true; this.goTo(this.lastPage()); }));
    replaceChildren(container, this.usage, this.status, this.pager, this.list);
    this.rebuild();
  }

  lastPage() {
    return Math.max(0, Math.ceil(this.model.rows.length / PAGE_ROWS) - 1);
  }

  /** Show page `n` (clamped); pages other than the last stop following. */
  goTo(n) {
    this.page = Math.min(Math.max(0, n), this.lastPage());
    this.follow = this.page === this.lastPage();
    this.model.takeChanged();
    this.rebuild();
  }

  /** Show the model from scratch (after a replay reset it), following its end. */
  reload() {
    this.follow = true;
    this.page = this.lastPage();
    this.model.takeChanged();
    this.rebuild();
  }

  /** Fold events in and schedule one render. */
  push(events) {
    let replayed = false;
    for (const event of events) {
      this.model.push(event);
      if (event.type === "replay") replayed = true;
    }
    if (replayed) this.reload();
    else this.schedule();
  }

  schedule() {
    if (this.scheduled) return;
    this.scheduled = true;
    requestAnimationFrame(() => {
      this.scheduled = false;
      this.update();
    });
  }

  rebuild() {
    this.rendered.clear();
    const start = this.page * PAGE_ROWS;
    const rows = this.model.rows.slice(start, start + PAGE_ROWS);
    replaceChildren(this.list, rows.map((row) => this._render(row)));
    this._chrome();
  }

  _render(row) {
    const node = renderRow(row);
    this.rendered.set(row.index, { node, version: row.version });
    return node;
  }

  update() {
    const changed = this.model.takeChanged();
    if (this.follow && this.page !== this.lastPage()) {
      this.page = this.lastPage();
      this.rebuild();
      return;
    }
    const start = this.page * PAGE_ROWS;
    const end = start + PAGE_ROWS;
    for (const index of [...changed].sort((a, b) => a - b)) {
      if (index < start || index >= end) continue;
      const row = this.model.rows[index];
      const shown = this.rendered.get(index);
      if (shown) {
        if (shown.version === row.version) continue;
        const wasOpen = shown.node.querySelector("details")?.open ?? false;
        const node = this._render(row);
        if (wasOpen) node.querySelector("details").open = true;
        shown.node.replaceWith(node);
      } else {
        this.list.appendChild(this._render(row));
      }
    }
    this._chrome();
  }

  _chrome() {
    const m = this.model;
    this.pageLabel.textContent = `page ${this.page + 1} of ${this.lastPage() + 1}`;
    this.status.textContent = `${m.events} events, ${m.rows.length} rows: ${m.counts.text} text, ${m.counts.thought} thought, ` +
      `${m.counts.tool_call} tool calls, ${m.counts.permission} permissions, ${m.counts.notice} notices` +
      (m.result ? `; finished ${m.result.status}` : "");
    this.usage.textContent = `usage: ${usageLine(m.usage)}`;
  }
}
