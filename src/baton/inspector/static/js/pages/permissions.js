// Permission requests waiting for an answer: one card each, with the correlated tool call,
// its paths or command, and the provider's exact option labels. Answering sends exactly the
// optionId of the button pressed; an answer the service refuses (the request ended) is shown.

import { h, replaceChildren, badge } from "../dom.js";
import { get, post, ROUTES } from "../api.js";
import { renderTool } from "../transcript.js";
import { answerSender, errorBox, listOf, pendingCards } from "./common.js";
import { questionsInto } from "./elicitations.js";

// How often the page asks for pending requests (ms): a request waits on a person, so a
// second is prompt enough and cheap for the service.
export const PERMISSIONS_POLL_MS = 1000;

// Option kinds the provider may remember: the memory is the agent's, never Baton's.
const REMEMBERED_KINDS = new Set(["allow_always", "reject_always"]);

/** The card of one pending request; `onDone` is told when it was answered. */
export function permissionCard(request, onDone = () => {}) {
  const id = request.id;
  const status = h("div", { class: "answer-status", "aria-live": "assertive" });
  const tool = request.toolCall ?? request.tool ?? null;
  const options = request.options ?? request.offeredOptions ?? [];
  const buttons = [];
  const answer = answerSender(ROUTES.answer(id), id, status, buttons, onDone);
  for (const option of options) {
    const remembered = REMEMBERED_KINDS.has(option.kind);
    buttons.push(h("button", {
      type: "button", "data-id": String(option.optionId),
      "aria-label": `${option.name} (${option.kind}${remembered ? ", remembered by the provider" : ""})`,
      onclick: () => answer({ optionId: option.optionId }, `“${option.name}”`),
    }, String(option.name), ` (${option.kind})`, remembered ? " ★ provider-owned" : ""));
  }
  buttons.push(h("button", { type: "button", onclick: () => answer({ cancel: true }, "cancel") }, "Cancel the request"));
  return h("section", { class: "card permission-card", "data-testid": `permission-${id}`, "aria-label": `permission request ${id}` },
    h("h2", {}, "Permission request ", badge(request.state ?? "pending", "pending")),
    h("p", { class: "muted" }, `run ${request.runId ?? "?"}, provider session ${request.providerSessionId ?? "?"}, asked ${request.askedAt ?? "?"}`,
      request.runId ? [" · ", h("a", { href: `#/runs/${encodeURIComponent(request.runId)}` }, "open the run")] : null),
    tool ? renderTool(tool) : h("p", {}, "No tool call was correlated with this request."),
    request.reason ? h("p", { class: "muted" }, "Why Baton asks: ", String(request.reason)) : null,
    options.some((o) => REMEMBERED_KINDS.has(o.kind))
      ? h("p", { class: "muted" }, "★ marks an option the provider remembers; Baton never does.") : null,
    h("div", { class: "option-buttons", role: "group", "aria-label": "options" }, buttons),
    status);
}

/** The pending cards of `runId` (or of every run) into `box`, refreshed; returns the stop. */
export function pendingInto(box, runId) {
  return pendingCards(box, PERMISSIONS_POLL_MS,
    async () => listOf(await get(ROUTES.permissions(), runId ? { runId } : undefined), "permissions"),
    (request) => permissionCard(request),
    // A card whose request ended stays until the page is left if it shows a refusal or an
    // answer; otherwise it goes.
    (card) => Boolean(card.querySelector(".answer-status").textContent),
    "No permission request is waiting.");
}

export function permissionsPage(view) {
  const box = h("div", { class: "permissions" });
  const questions = h("div", { class: "elicitations", "aria-label": "pending questions of the agents" });
  replaceChildren(view, h("h1", {}, "Permission requests"),
    h("p", { class: "muted" }, "Requests of runs under the ask policy wait here until answered or until their turn's budget ends (then they are cancelled as \"no user available\")."),
    box,
    h("h2", {}, "Questions of the agents"),
    h("p", { class: "muted" }, "Questions (elicitations) of runs under the ask policy wait here until answered, until the service's wait ends (then they are declined as \"no user available\") or until their turn is interrupted."),
    questions);
  const stopPermissions = pendingInto(box, null);
  const stopQuestions = questionsInto(questions, null);
  return () => { stopPermissions(); stopQuestions(); };
}
