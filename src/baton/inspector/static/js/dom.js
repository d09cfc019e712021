// The one way the inspector builds DOM: elements and text nodes, never an HTML string.
//
// Agent text (messages, thoughts, tool titles, paths, diffs, option labels) is untrusted. It
// only ever becomes a Text node or an attribute value set through setAttribute on a short list
// of inert attributes, so `<script>` or `<img onerror>` in it stays text. The page's
// Content-Security-Policy also turns on Trusted Types: an HTML sink would throw.

// Attributes h() sets; anything else (event handlers, style, src...) is refused loudly.
const INERT_ATTRIBUTES = new Set([
  "class", "id", "role", "title", "type", "name", "value", "for", "href", "colspan",
  "aria-label", "aria-live", "aria-expanded", "aria-controls", "aria-current", "aria-describedby",
  "aria-pressed", "aria-busy", "data-kind", "data-id", "data-state", "data-testid", "tabindex",
  "placeholder", "autocomplete", "min", "max", "step", "maxlength", "rows", "open", "scope",
  "data-revision",
]);

// A link may only point inside the page (hash routes) or at the service's own paths.
const SAFE_HREF = /^(#|\/(?!\/))/;

/**
 * Make an element. `attrs` values: strings for inert attributes, booleans for flags
 * (`disabled`, `checked`, `selected`, `open`, `hidden`), functions for `on<event>` listeners.
 * Children: nodes, strings (made Text nodes), arrays, null/undefined/false (skipped).
 */
export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === "function") {
      if (!key.startsWith("on")) throw new Error(`listener on a non-event key ${key}`);
      node.addEventListener(key.slice(2).toLowerCase(), value);
    } else if (key === "disabled" || key === "checked" || key === "selected" || key === "hidden" || key === "required") {
      node[key] = Boolean(value);
    } else if (INERT_ATTRIBUTES.has(key)) {
      const text = String(value);
      if (key === "href" && !SAFE_HREF.test(text)) throw new Error("link outside the page");
      node.setAttribute(key, text);
    } else {
      throw new Error(`attribute ${key} is not on the inert list`);
    }
  }
  append(node, children);
  return node;
}

// The only schemes an agent-supplied link may have: a web page a person opens on purpose.
const EXTERNAL_SCHEMES = new Set(["http:", "https:"]);

/**
 * A link to an agent-supplied web address (an elicitation's URL), or null when it is not an
 * http(s) URL. The page never follows it by itself: the person clicks it, and it opens in a new
 * tab with no opener and no referrer. The address is an attribute value, never markup.
 */
export function externalLink(url, label) {
  let parsed;
  try { parsed = new URL(String(url)); } catch { return null; }
  if (!EXTERNAL_SCHEMES.has(parsed.protocol)) return null;
  const node = document.createElement("a");
  node.setAttribute("href", parsed.href);
  node.setAttribute("target", "_blank");
  node.setAttribute("rel", "noopener noreferrer");
  node.setAttribute("referrerpolicy", "no-referrer");
  node.setAttribute("class", "external-link");
  node.textContent = String(label);
  return node;
}

/** Append children (see h) to `node`. */
export function append(node, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(node, child);
    else if (child instanceof Node) node.appendChild(child);
    else node.appendChild(document.createTextNode(String(child)));
  }
  return node;
}

/** Replace every child of `node` with `children`. */
export function replaceChildren(node, ...children) {
  node.replaceChildren();
  return append(node, children);
}

/** A definition list from [label, value] pairs; values are text or nodes. */
export function facts(pairs) {
  return h("dl", { class: "facts" }, pairs.filter((p) => p[1] !== undefined && p[1] !== null && p[1] !== "")
    .map(([label, value]) => [h("dt", {}, label), h("dd", {}, value)]));
}

/** A status badge: the word itself is shown, so it is readable without colour. */
export function badge(text, kind = String(text).toLowerCase()) {
  return h("span", { class: "badge", "data-kind": kind }, String(text));
}

/** Seconds or milliseconds, shown the way people read them. */
export function duration(ms) {
  if (typeof ms !== "number" || !Number.isFinite(ms)) return "";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 120) return `${s.toFixed(1)} s`;
  return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
}

/** A compact JSON rendering of a value, as text (never parsed as markup). */
export function json(value) {
  return h("pre", { class: "json" }, JSON.stringify(value, null, 2));
}
