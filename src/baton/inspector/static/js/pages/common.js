// What the pages share: loading a resource into a view, errors, tables and polling.

import { h, replaceChildren, badge } from "../dom.js";
import { post } from "../api.js";

/** A box that shows an error with its stable code and whose fault it is. */
export function errorBox(error) {
  const code = error?.code ?? "ERROR";
  return h("div", { class: "error", role: "alert" },
    h("strong", {}, code), ": ", String(error?.message ?? error),
    error?.fault ? h("span", { class: "muted" }, ` (fault: ${error.fault})`) : null);
}

/**
 * Render `title` and the result of `load()` into `view` with `render(data)`; an error is shown
 * in its place. Returns the promise of the render.
 */
export async function show(view, title, load, render) {
  try {
    const data = await load();
    replaceChildren(view, h("h1", {}, title), render(data));
  } catch (error) {
    replaceChildren(view, h("h1", {}, title), errorBox(error));
  }
}

/** A table from column [heading, cell(row)] pairs; an empty list says `empty`. */
export function table(columns, rows, empty) {
  if (!rows.length) return h("p", { class: "muted" }, empty);
  return h("table", {},
    h("thead", {}, h("tr", {}, columns.map(([heading]) => h("th", { scope: "col" }, heading)))),
    h("tbody", {}, rows.map((row) => h("tr", {}, columns.map(([, cell]) => h("td", {}, cell(row)))))));
}

/** The list inside an API answer: the answer itself, or its first array-valued key. */
export function listOf(data, ...keys) {
  if (Array.isArray(data)) return data;
  for (const key of keys) if (Array.isArray(data?.[key])) return data[key];
  return [];
}

/**
 * Call `tick` now and every `ms`; returns the function that stops it, whose `now()` runs a
 * tick at once (after the one in flight, never two at a time).
 */
export function every(ms, tick) {
  let stopped = false;
  let timer = null;
  let running = false;
  let again = false;
  const loop = async () => {
    if (stopped) return;
    if (running) { again = true; return; }
    running = true;
    clearTimeout(timer);
    try { await tick(); } finally {
      running = false;
      if (!stopped) {
        if (again) { again = false; loop(); } else timer = setTimeout(loop, ms);
      }
    }
  };
  loop();
  const stop = () => { stopped = true; clearTimeout(timer); };
  stop.now = loop;
  return stop;
}

/** A labelled form field; `control` is the input/select node. */
export function field(label, control) {
  return h("label", {}, label, control);
}

/**
 * Keep one card per pending item of `load()` in `box`, asked again every `ms`: a new item gets
 * `card(item)` (items are told apart by their `id`); a card whose item is no longer pending
 * goes, unless `keepEnded(card)` says it shows something to read (an answer sent, a refusal).
 * `none`, when given, is the line shown while no card is left. Returns the stop of `every`.
 */
export function pendingCards(box, ms, load, card, keepEnded, none) {
  const cards = new Map();
  return every(ms, async () => {
    let items;
    try {
      items = await load();
    } catch (error) {
      replaceChildren(box, errorBox(error));
      cards.clear();
      return;
    }
    const live = new Set(items.map((item) => String(item.id)));
    for (const [id, shown] of cards) {
      if (!live.has(id) && !keepEnded(shown)) { shown.remove(); cards.delete(id); }
    }
    for (const item of items) {
      const id = String(item.id);
      if (!cards.has(id)) { const shown = card(item); cards.set(id, shown); box.appendChild(shown); }
    }
    if (none === undefined) return;
    box.querySelector(".none")?.remove();
    if (!cards.size) box.appendChild(h("p", { class: "muted none" }, none));
  });
}

/**
 * The answer button handler of a pending card: `(body, label)` posts `body` to `route`, shows
 * "Sending LABEL…" then "LABEL sent." (and tells `onDone(id)`) or the service's refusal in
 * `status`; the card's `buttons` are disabled while it is in flight. Once the answer was
 * accepted the card is answered: its PENDING badge becomes ANSWERED and its buttons stay
 * disabled (a second answer could only be refused). After a refusal they are usable again (the
 * refusal is the thing to read, or a form to correct).
 */
export function answerSender(route, id, status, buttons, onDone) {
  return async (body, label) => {
    for (const b of buttons) b.disabled = true;
    status.textContent = `Sending ${label}…`;
    let answered = false;
    try {
      await post(route, body);
      answered = true;
      replaceChildren(status, h("p", {}, badge("answered", "selected"), ` ${label} sent.`));
      markAnswered(status.closest(".card"));
      onDone(id);
    } catch (error) {
      replaceChildren(status, h("p", {}, "The service refused this answer:"), errorBox(error));
    } finally {
      if (!answered) for (const b of buttons) b.disabled = false;
    }
  };
}

/** Show `card` (a pending question's) as answered: its heading's badge says so and none of
 * its controls can send again. */
export function markAnswered(card) {
  if (!card) return;
  const shown = card.querySelector("h2 .badge");
  if (shown) shown.replaceWith(badge("answered", "selected"));
  card.dataset.state = "answered";
  for (const control of card.querySelectorAll("button, input, select, textarea")) control.disabled = true;
}
