// Recovery: runs whose outcome is ambiguous (RECOVERY_REQUIRED), what was recorded of each,
// its last journal entries, and the two safe actions: mark it failed, or attach to look.
// The page never resubmits a prompt.

import { h, replaceChildren, facts, json } from "../dom.js";
import { get, post, ROUTES } from "../api.js";
import { errorBox, listOf } from "./common.js";
import { runsTable } from "./runs.js";

function detail(view, runId) {
  const status = h("div", { "aria-live": "polite", "data-testid": "recovery-status" });
  const body = h("div", {});
  const load = async () => {
    try {
      const r = await get(ROUTES.recovery(), { runId });
      const record = listOf(r, "runs", "items").find((x) => (x.runId ?? x.id) === runId) ?? r;
      replaceChildren(body,
        facts([
          ["status", record.status],
          ["recoverable", record.recoverable === undefined ? null : String(record.recoverable)],
          ["session", record.session?.sessionId ?? record.sessionId],
          ["why", record.errorMessage ?? record.message],
        ]),
        record.streamedText ? [h("h2", {}, "Text recorded before the outcome was lost"), h("pre", {}, String(record.streamedText))] : null,
        h("h2", {}, "Last journal entries"),
        (record.journalTail ?? []).length
          ? h("ol", { class: "journal-tail" }, record.journalTail.map((e) => h("li", {}, json(e))))
          : h("p", { class: "muted" }, "None recorded."));
    } catch (error) {
      replaceChildren(body, errorBox(error));
    }
  };
  const act = (route, label) => async () => {
    try {
      const answer = await post(route(runId));
      replaceChildren(status, h("p", {}, `${label}: done.`), answer ? json(answer) : null);
      load();
    } catch (error) {
      replaceChildren(status, errorBox(error));
    }
  };
  replaceChildren(view, h("h1", {}, "Recover run ", h("code", {}, runId)),
    h("p", { class: "muted" }, "Baton never resubmits a prompt whose outcome is unknown: mark the run failed, or attach to its session to look."),
    h("p", {}, h("button", { type: "button", onclick: act(ROUTES.markFailed, "Marked failed") }, "Mark failed"), " ",
      h("button", { type: "button", onclick: act(ROUTES.attach, "Attached") }, "Attach to look"), " ",
      h("a", { href: `#/journal/run/${encodeURIComponent(runId)}` }, "the run's journal")),
    status, body);
  load();
}

export function recoveryPage(view, [runId]) {
  if (runId) { detail(view, runId); return; }
  const box = h("div", {});
  replaceChildren(view, h("h1", {}, "Recovery"), box);
  get(ROUTES.recovery()).then((data) => replaceChildren(box, runsTable(listOf(data, "runs", "items"))),
    (error) => replaceChildren(box, errorBox(error)));
}
