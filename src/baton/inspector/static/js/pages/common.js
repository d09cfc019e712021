// What the pages share: loading a resource into a view, errors, tables and polling.

import { h, replaceChildren } from "../dom.js";

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
