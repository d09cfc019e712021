// The agent's questions (elicitations) waiting for an answer: one card each. A form is built
// from the schema subset the service lists (string, number, integer, boolean, choices,
// multi-select; titles, descriptions, required marks); a URL is shown as text with a link the
// person must click (a new tab, no opener, no referrer): the page never opens it. Every piece
// of agent text becomes a Text node (h(), never markup). Accept sends exactly the values
// filled in; an answer the service refuses (a form answer that breaks the form: 422, the
// question stays pending) is shown and the form stays usable.

import { h, replaceChildren, badge, externalLink } from "../dom.js";
import { get, post, ROUTES } from "../api.js";
import { answerSender, errorBox, listOf, pendingCards } from "./common.js";

// How often the page asks for pending questions (ms): a question waits on a person, so a
// second is prompt enough and cheap for the service.
export const QUESTIONS_POLL_MS = 1000;

// The value of a select's "no answer" entry (an optional field left empty).
const NO_ANSWER = "";

/** The control of one form field and how to read its value (undefined: not answered). */
function fieldControl(field, inputId) {
  const name = String(field.name);
  const describedBy = field.description ? `${inputId}-description` : null;
  const common = { id: inputId, name, "data-id": name, "aria-describedby": describedBy, required: Boolean(field.required) };
  if (field.type === "boolean") {
    const control = h("select", common,
      h("option", { value: NO_ANSWER }, "— no answer —"),
      h("option", { value: "true" }, "yes"),
      h("option", { value: "false" }, "no"));
    return { control, read: () => (control.value === NO_ANSWER ? undefined : control.value === "true") };
  }
  if (field.type === "array") {
    const boxes = (field.choices ?? []).map((choice, i) => {
      const box = h("input", { type: "checkbox", id: `${inputId}-${i}`, name, value: String(choice.value), "data-id": `${name}:${choice.value}` });
      return { box, label: h("label", { for: `${inputId}-${i}` }, box, " ", String(choice.title ?? choice.value)) };
    });
    const control = h("div", { role: "group", "aria-label": String(field.title ?? name), "aria-describedby": describedBy, id: inputId },
      boxes.map((b) => b.label));
    return {
      control,
      read: () => {
        const chosen = boxes.filter((b) => b.box.checked).map((b) => b.box.value);
        return chosen.length || field.required ? chosen : undefined;
      },
    };
  }
  if (Array.isArray(field.choices) && field.choices.length) {
    const control = h("select", common,
      h("option", { value: NO_ANSWER }, "— no answer —"),
      field.choices.map((choice) => h("option", { value: String(choice.value) }, String(choice.title ?? choice.value))));
    return { control, read: () => (control.value === NO_ANSWER ? undefined : control.value) };
  }
  if (field.type === "number" || field.type === "integer") {
    const control = h("input", {
      ...common, type: "number", step: field.type === "integer" ? "1" : "any",
      min: field.minimum ?? null, max: field.maximum ?? null,
    });
    // The service checks the value again; a value the browser cannot read as a number is
    // sent as typed so the refusal names the field.
    return { control, read: () => (control.value === "" ? undefined : (Number.isNaN(Number(control.value)) ? control.value : Number(control.value))) };
  }
  const control = h("input", { ...common, type: "text", maxlength: field.maxLength ?? null, autocomplete: "off" });
  return { control, read: () => (control.value === "" ? undefined : control.value) };
}

/** The form of a form-mode question: its rows and how to read its content. */
function questionForm(question) {
  const readers = [];
  const rows = (question.fields ?? []).map((field, index) => {
    const inputId = `q-${question.id}-${index}`;
    const { control, read } = fieldControl(field, inputId);
    readers.push([String(field.name), read]);
    const label = String(field.title ?? field.name);
    return h("div", { class: "question-field" },
      h(field.type === "array" ? "span" : "label", field.type === "array" ? {} : { for: inputId }, label,
        field.required ? h("span", { class: "required", title: "required", "aria-label": "required" }, " *") : null,
        h("span", { class: "muted" }, ` (${field.type})`)),
      control,
      field.description ? h("p", { class: "muted", id: `${inputId}-description` }, String(field.description)) : null);
  });
  const content = () => {
    const found = {};
    for (const [name, read] of readers) {
      const value = read();
      if (value !== undefined) found[name] = value;
    }
    return found;
  };
  return { node: h("div", { class: "question-form" }, rows), content };
}

/** The card of one pending question; `onDone` is told when it was answered. */
export function questionCard(question, onDone = () => {}) {
  const id = question.id;
  const status = h("div", { class: "answer-status", "aria-live": "assertive" });
  const buttons = [];
  const form = question.mode === "form" ? questionForm(question) : null;
  const answer = answerSender(ROUTES.answerElicitation(id), id, status, buttons, onDone);
  let body;
  if (form) {
    body = form.node;
    buttons.push(h("button", { type: "button", "data-id": "accept", onclick: () => answer({ action: "accept", content: form.content() }, "accept") }, "Accept (send these answers)"));
  } else if (question.mode === "url") {
    const link = externalLink(question.url, "Open this link in a new tab");
    body = h("div", { class: "question-url" },
      h("p", {}, "The agent asks you to open this address yourself (the page never opens it):"),
      h("p", {}, h("code", { "data-testid": `elicitation-url-${id}` }, String(question.url ?? ""))),
      link ? h("p", {}, link) : h("p", { class: "muted" }, "This address is not an http(s) link; it is shown only."));
    buttons.push(h("button", { type: "button", "data-id": "accept", onclick: () => answer({ action: "accept" }, "done (accept)") }, "I have done it (accept)"));
  } else {
    body = h("p", { class: "muted" }, `A question in mode ${String(question.mode)}.`);
  }
  buttons.push(h("button", { type: "button", "data-id": "decline", onclick: () => answer({ action: "decline" }, "decline") }, "Decline"));
  buttons.push(h("button", { type: "button", "data-id": "cancel", onclick: () => answer({ action: "cancel" }, "cancel") }, "Dismiss (cancel)"));
  return h("section", { class: "card question-card", "data-testid": `elicitation-${id}`, "aria-label": `question of the agent ${id}` },
    h("h2", {}, "The agent asks ", badge(question.mode === "url" ? "link" : "form", "pending")),
    h("p", { class: "muted" }, `run ${question.runId ?? "?"}, provider session ${question.providerSessionId ?? "?"}, asked ${question.askedAt ?? "?"}`,
      question.runId ? [" · ", h("a", { href: `#/runs/${encodeURIComponent(question.runId)}` }, "open the run")] : null),
    h("p", { class: "question-message" }, String(question.message ?? "")),
    body,
    h("div", { class: "option-buttons", role: "group", "aria-label": "answers" }, buttons),
    status);
}

/** The pending question cards of `runId` (or of every run) into `box`, refreshed; returns the stop. */
export function questionsInto(box, runId) {
  return pendingCards(box, QUESTIONS_POLL_MS,
    async () => listOf(await get(ROUTES.elicitations(), runId ? { runId } : undefined), "elicitations"),
    questionCard,
    // A card whose question ended goes, unless it shows an answer sent (kept to be read).
    (card) => card.querySelector(".answer-status").textContent.endsWith("sent."));
}
