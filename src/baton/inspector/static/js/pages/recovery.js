// Recovery: runs whose outcome is ambiguous (RECOVERY_REQUIRED), what was recorded of each,
// its last journal entries, and the safe action: mark it failed. The page never resubmits a
// prompt (docs/inspector.md, "Recovery").

import { h, replaceChildren, facts } from "../dom.js";
import { get, post, ROUTES } from "../api.js";
import { errorBox, listOf } from "./common.js";
import { runsTable, runStatus } from "./runs.js";
import { recordItem } from "./journal.js";
import { TranscriptModel } from "../transcript.js";

// Journal records shown as "the last entries" of a run: the tail of its records from its
// prompt on.
export const RECOVERY_TAIL_RECORDS = 20;
// Records read to find that tail (the service's page bound).
const TAIL_SCAN_RECORDS = 500;

async function journalTail(run) {
  const from = Math.max(0, Number(run.promptRef?.sequence ?? 1) - 1);
  const data = await get(ROUTES.journal(run.id), { after: from, limit: TAIL_SCAN_RECORDS });
  return listOf(data, "records").slice(-RECOVERY_TAIL_RECORDS);
}

function detail(view, runId) {
  const status = h("div", { "aria-live": "polite", "data-testid": "recovery-status" });
  const body = h("div", {});
  const markFailed = h("button", { type: "button" }, "Mark failed");
  const load = async () => {
    let run;
    try {
      run = await get(ROUTES.run(runId));
    } catch (error) {
      replaceChildren(body, errorBox(error));
      return;
    }
    markFailed.disabled = run.status !== "RECOVERY_REQUIRED";
    const model = new TranscriptModel();
    model.loadRecord(run);
    let tail;
    try {
      tail = h("ol", { class: "journal" }, (await journalTail(run)).map(recordItem));
    } catch (error) {
      tail = errorBox(error);
    }
    replaceChildren(body,
      facts([
        ["status", runStatus(run)],
        ["why", run.recoveryReason ?? run.diagnostic],
        ["session", run.sessionId ? h("a", { href: `#/sessions/${encodeURIComponent(run.sessionId)}` }, String(run.sessionId)) : null],
        ["agent", run.agent],
        ["prompt", run.promptText ? h("pre", {}, String(run.promptText)) : null],
        ["server instance", run.serverInstance?.state ? `${run.serverInstanceId} (${run.serverInstance.state})` : run.serverInstanceId],
      ]),
      h("h2", {}, "Text recorded before the outcome was lost"),
      model.text() ? h("pre", { "data-testid": "recorded-text" }, model.text()) : h("p", { class: "muted" }, "No text was recorded."),
      h("h2", {}, "Permission decisions recorded"),
      h("p", {}, `${model.counts.permission} decisions, ${model.counts.tool_call} tool calls`),
      h("h2", {}, `Last journal entries (up to ${RECOVERY_TAIL_RECORDS})`), tail);
  };
  markFailed.addEventListener("click", async () => {
    try {
      await post(ROUTES.markFailed(runId));
      status.textContent = "Marked failed (recorded as MARKED_FAILED_BY_USER).";
      load();
    } catch (error) {
      replaceChildren(status, errorBox(error));
    }
  });
  replaceChildren(view, h("h1", {}, "Recover run ", h("code", {}, runId)),
    h("p", { class: "muted" }, "The outcome of this run is unknown: the agent may or may not have finished the turn. Baton never resubmits its prompt. Read what was recorded, then mark it failed, or open its session to look."),
    h("p", {}, markFailed, " ", h("a", { href: `#/journal/run/${encodeURIComponent(runId)}` }, "all of the run's journal records")),
    status, body);
  load();
}

export function recoveryPage(view, [runId]) {
  if (runId) { detail(view, runId); return; }
  const box = h("div", {});
  replaceChildren(view, h("h1", {}, "Recovery"),
    h("p", { class: "muted" }, "Runs whose outcome is ambiguous. Open one to see what was recorded."), box);
  get(ROUTES.recovery()).then((data) => replaceChildren(box, runsTable(listOf(data, "runs"))),
    (error) => replaceChildren(box, errorBox(error)));
}
