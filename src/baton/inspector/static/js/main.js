// The inspector's router: one page per hash route, each rendered into a fresh container in
// <main id="view">.
// Leaving a page calls the cleanup it returned (closing its live streams and timers).

import { h, replaceChildren } from "./dom.js";
import { get, ROUTES as API } from "./api.js";
import { agentsPage } from "./pages/agents.js";
import { sessionsPage, sessionPage } from "./pages/sessions.js";
import { runsPage, runPage } from "./pages/runs.js";
import { permissionsPage } from "./pages/permissions.js";
import { recoveryPage } from "./pages/recovery.js";
import { journalPage } from "./pages/journal.js";
import { batchesPage, batchPage } from "./pages/batches.js";

// [pattern, page, nav link] in match order; a page is (view, params) => cleanup | undefined.
const ROUTES = [
  [/^\/agents$/, agentsPage, "#/agents"],
  [/^\/sessions$/, sessionsPage, "#/sessions"],
  [/^\/sessions\/([^/]+)$/, sessionPage, "#/sessions"],
  [/^\/runs$/, runsPage, "#/runs"],
  [/^\/runs\/([^/]+)$/, runPage, "#/runs"],
  [/^\/permissions$/, permissionsPage, "#/permissions"],
  [/^\/recovery$/, recoveryPage, "#/recovery"],
  [/^\/recovery\/([^/]+)$/, recoveryPage, "#/recovery"],
  [/^\/journal$/, journalPage, "#/journal"],
  [/^\/journal\/(run|server)\/([^/]+)$/, journalPage, "#/journal"],
  [/^\/batches$/, batchesPage, "#/batches"],
  [/^\/batches\/([^/]+)$/, batchPage, "#/batches"],
];

let cleanup = null;

function route() {
  const view = document.getElementById("view");
  if (typeof cleanup === "function") cleanup();
  cleanup = null;
  const path = decodeURIComponent(location.hash.replace(/^#/, "")) || "/agents";
  const found = ROUTES.find(([pattern]) => pattern.test(path));
  for (const link of document.querySelectorAll("header.top nav a")) {
    if (found && link.getAttribute("href") === found[2]) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  if (!found) {
    replaceChildren(view, h("h1", {}, "Not found"), h("p", {}, "No page is called ", h("code", {}, path), "."));
    return;
  }
  const [pattern, page] = found;
  const params = path.match(pattern).slice(1);
  // Each visit renders into a fresh container: a page's late answer (a slow readiness check
  // after the user moved on) lands in a detached node instead of over the next page.
  const container = h("div", { class: "page" }, h("p", { "aria-busy": "true" }, "Loading…"));
  replaceChildren(view, container);
  cleanup = page(container, params);
  view.focus({ preventScroll: true });
}

// The service answered 401: the cookie expired or the service restarted with a new token.
window.addEventListener("baton:unauthorized", () => {
  const view = document.getElementById("view");
  if (typeof cleanup === "function") cleanup();
  cleanup = null;
  replaceChildren(view, h("h1", {}, "Signed out"),
    h("p", {}, "The service did not accept this page's session. Open the address ", h("code", {}, "baton serve"),
      " or ", h("code", {}, "baton inspect"), " printed (it carries a one-time token), or go to the ",
      h("a", { href: "/login" }, "login page"), "."));
});

// How often the navigation's count of questions waiting for a person is refreshed (ms): a
// bound on the requests one open page makes (two small GETs per tick).
export const NAV_POLL_MS = 3_000;

/** Put the number of questions waiting for a person (permission requests and elicitations)
 * next to the Permissions link; nothing when none waits or the service does not answer. */
async function refreshWaiting() {
  const link = document.querySelector('header.top nav a[href="#/permissions"]');
  if (!link) return;
  let count = 0;
  try {
    const [permissions, elicitations] = await Promise.all([get(API.permissions()), get(API.elicitations())]);
    count = (permissions?.permissions?.length ?? 0) + (elicitations?.elicitations?.length ?? 0);
  } catch {
    return; // keep the last count: a failed poll is not "nothing waits"
  }
  let counter = link.querySelector(".waiting-count");
  if (count === 0) {
    if (counter) counter.remove();
    link.removeAttribute("aria-description");
    return;
  }
  if (!counter) {
    counter = h("span", { class: "waiting-count", "data-testid": "nav-waiting" });
    link.append(" ", counter);
  }
  counter.textContent = String(count);
  link.setAttribute("aria-description", `${count} waiting for your answer`);
}

window.addEventListener("hashchange", route);
route();
refreshWaiting();
setInterval(refreshWaiting, NAV_POLL_MS);
