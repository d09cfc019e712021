// The inspector's client of the service's /api/v1 routes (docs/api.md). The page has no
// private route and sends no raw ACP: every call here is one any other client can make.
//
// Requests carry the session cookie (same origin) and, for state-changing methods, the
// browser's own Origin header, which the service checks. Errors come back as ApiError with the
// service's stable code, message and fault.

// Bounds every request the page makes (ms) so a stuck service shows an error, not a spinner.
export const REQUEST_TIMEOUT_MS = 30_000;

const BASE = "/api/v1";
const enc = encodeURIComponent;

// Every route the page uses, in one place (docs/api.md).
export const ROUTES = {
  readiness: () => `${BASE}/readiness`,
  liveCheck: (profile) => `${BASE}/readiness/${enc(profile)}/live`,
  sessions: () => `${BASE}/sessions`,
  session: (id) => `${BASE}/sessions/${enc(id)}`,
  prompt: (id) => `${BASE}/sessions/${enc(id)}/prompt`,
  cancelSession: (id) => `${BASE}/sessions/${enc(id)}/cancel`,
  steerSession: (id) => `${BASE}/sessions/${enc(id)}/steer`,
  closeSession: (id) => `${BASE}/sessions/${enc(id)}/close`,
  controls: (id) => `${BASE}/sessions/${enc(id)}/controls`,
  runs: () => `${BASE}/runs`,
  run: (id) => `${BASE}/runs/${enc(id)}`,
  runEvents: (id) => `${BASE}/runs/${enc(id)}/events`,
  cancelRun: (id) => `${BASE}/runs/${enc(id)}/cancel`,
  permissions: () => `${BASE}/permissions`,
  answer: (id) => `${BASE}/permissions/${enc(id)}/answer`,
  elicitations: () => `${BASE}/elicitations`,
  answerElicitation: (id) => `${BASE}/elicitations/${enc(id)}/answer`,
  recovery: () => `${BASE}/recovery`,
  markFailed: (id) => `${BASE}/recovery/${enc(id)}/fail`,
  attach: (id) => `${BASE}/recovery/${enc(id)}/attach`,
  runJournal: (id) => `${BASE}/runs/${enc(id)}/journal`,
  serverJournal: (id) => `${BASE}/servers/${enc(id)}/journal`,
  workers: () => `${BASE}/workers`,
  workspaces: () => `${BASE}/workspaces`,
  runChanges: (id) => `${BASE}/runs/${enc(id)}/changes`,
  runFileDiff: (id) => `${BASE}/runs/${enc(id)}/changes/file`,
  runPatch: (id) => `${BASE}/runs/${enc(id)}/diff`,
  batches: () => `${BASE}/batches`,
  batch: (id) => `${BASE}/batches/${enc(id)}`,
};

/** A refusal or failure from the service, with its stable code. */
export class ApiError extends Error {
  constructor(status, code, message, fault, body) {
    super(`${code}: ${message}`);
    this.status = status;
    this.code = code;
    this.fault = fault;
    this.body = body;
  }
}

function query(params) {
  const entries = Object.entries(params ?? {}).filter(([, v]) => v !== undefined && v !== null && v !== "");
  return entries.length ? `?${new URLSearchParams(entries)}` : "";
}

/** Call `path` with `method` and an optional JSON `body`; the parsed JSON answer. */
export async function call(method, path, body, params) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), REQUEST_TIMEOUT_MS);
  let response;
  try {
    response = await fetch(path + query(params), {
      method,
      credentials: "same-origin",
      headers: body === undefined ? { Accept: "application/json" } : { Accept: "application/json", "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: controller.signal,
      redirect: "error",
    });
  } catch (error) {
    throw new ApiError(0, "API_UNREACHABLE", `the service did not answer (${error.name})`, "transport", null);
  } finally {
    clearTimeout(timer);
  }
  const text = await response.text();
  let parsed = null;
  try { parsed = text ? JSON.parse(text) : null; } catch { parsed = null; }
  if (!response.ok) {
    const err = parsed?.error ?? parsed ?? {};
    if (response.status === 401) window.dispatchEvent(new CustomEvent("baton:unauthorized"));
    throw new ApiError(response.status, err.code ?? `HTTP_${response.status}`, err.message ?? response.statusText, err.fault ?? null, parsed);
  }
  return parsed;
}

export const get = (path, params) => call("GET", path, undefined, params);
export const post = (path, body = {}) => call("POST", path, body);
