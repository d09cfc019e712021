// Recovery: runs whose outcome is ambiguous (RECOVERY_REQUIRED), what was recorded of each
// (`baton recover RUN --json`'s view: the text streamed before the outcome was lost, the
// permission decisions, the last journal entries), and the two safe actions: mark it failed,
// or attach to its provider session to look. The page never resubmits a prompt.

import { h, replaceChildren, facts } from "../dom.js";
import { get, post, ROUTES } from "../api.js";
import { errorBox, listOf, table } from "./common.js";
import { runsTable, runStatus, sessionCell } from "./runs.js";
import { TranscriptModel } from "../transcript.js";

function tailTable(tail) {
  return table([
    ["sequence", (e) => h("code", {}, `#${e.sequence}`)],
    ["direction", (e) => String(e.direction ?? "")],
    ["kind", (e) => String(e.kind ?? "")],
    ["method", (e) => e.method ? h("code", {}, String(e.method)) : ""],
    ["id", (e) => e.id === null || e.id === undefined ? "" : String(e.id)],
  ], tail, "No journal entries were recorded.");
}

function detail(view, runId) {
  const status = h("div", { "aria-live": "polite", "data-testid": "recovery-status" });
  const body = h("div", {});
  const markFailed = h("button", { type: "button" }, "Mark failed");
  const attach = h("button", { type: "button" }, "Attach to look");
  const load = async () => {
    let run;
    try {
      [run] = listOf(await get(ROUTES.recovery(), { runId }), "runs");
      if (!run) run = await get(ROUTES.run(runId));
    } catch (error) {
      replaceChildren(body, errorBox(error));
      return;
    }
    markFailed.disabled = attach.disabled = run.status !== "RECOVERY_REQUIRED";
    const model = new TranscriptModel();
    model.loadRecord(run);
    const text = run.streamedText ?? model.text();
    replaceChildren(body,
      facts([
        ["status", runStatus(run)],
        ["why", run.recoveryReason ?? run.diagnostic],
        ["session", sessionCell(run)],
        ["provider session", run.session?.providerSessionId ? h("code", {}, String(run.session.providerSessionId)) : null],
        ["agent", run.agent],
        ["prompt", run.promptText ? h("pre", {}, String(run.promptText)) : null],
        ["server instance", run.serverInstanceId ? h("a", { href: `#/journal/server/${encodeURIComponent(run.serverInstanceId)}` },
          `${run.serverInstanceId}${run.serverInstance?.state ? ` (${run.serverInstance.state})` : ""}`) : null],
      ]),
      h("h2", {}, "Text streamed before the outcome was lost"),
      text ? h("pre", { "data-testid": "recorded-text" }, text) : h("p", { class: "muted" }, "No text was recorded."),
      h("h2", {}, "Recorded"),
      h("p", {}, `${model.counts.tool_call} tool calls, ${model.counts.permission} permission decisions`),
      h("h2", {}, "Last journal entries"), tailTable(run.journalTail ?? []));
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
  attach.addEventListener("click", async () => {
    try {
      const answer = await post(ROUTES.attach(runId));
      replaceChildren(status, h("p", {}, "Attached to the session to look, as run ",
        h("a", { href: `#/runs/${encodeURIComponent(answer.runId)}` }, h("code", {}, String(answer.runId))),
        ". No prompt was sent; this run stays RECOVERY_REQUIRED until you settle it."));
    } catch (error) {
      replaceChildren(status, errorBox(error));
    }
  });
  replaceChildren(view, h("h1", {}, "Recover run ", h("code", {}, runId)),
    h("p", { class: "muted" }, "The outcome of this run is unknown: the agent may or may not have finished the turn. Baton never resubmits its prompt. Read what was recorded, then mark it failed, or attach to its session to look."),
    h("p", {}, markFailed, " ", attach, " ", h("a", { href: `#/journal/run/${encodeURIComponent(runId)}` }, "all of the run's journal records")),
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
