// A run's workspace changes (docs/workspaces.md): the file list from the service's recorded
// comparison (paged), each file's kind, +/- counts and flags, the unreported ones marked, and
// one file's recorded unified diff rendered line by line as text (never as HTML).

import { h, replaceChildren, badge } from "../dom.js";
import { get, ROUTES } from "../api.js";
import { errorBox, table } from "./common.js";

// Files one page asks for (the service serves at most 500).
export const CHANGES_PAGE_ROWS = 200;
// Lines of one file's diff put in the DOM; the rest is summarized in one line.
export const MAX_RENDERED_PATCH_LINES = 2_000;

const KIND_MARKS = { added: "A", modified: "M", deleted: "D", renamed: "R", mode: "T", symlink: "L" };

/** One file's unified diff as rows, each line's kind from its first character. */
export function patchLines(text) {
  const lines = String(text ?? "").split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  const shown = lines.slice(0, MAX_RENDERED_PATCH_LINES).map((line) => {
    const kind = line.startsWith("+") && !line.startsWith("+++") ? "added"
      : line.startsWith("-") && !line.startsWith("---") ? "removed" : "context";
    return h("div", { class: "diff-line", "data-kind": kind }, line);
  });
  if (lines.length > MAX_RENDERED_PATCH_LINES) {
    shown.push(h("div", { class: "muted" }, `… ${lines.length - MAX_RENDERED_PATCH_LINES} more lines`));
  }
  return h("pre", { class: "diff-lines", "data-testid": "workspace-diff" }, shown);
}

/** Fill `box` with run `runId`'s recorded changes (nothing when it has none). */
export async function changesInto(box, runId, side = "turn") {
  const diffBox = h("div", { "aria-live": "polite" });
  const files = [];
  let page;
  try {
    let offset = 0;
    do {
      page = await get(ROUTES.runChanges(runId), { side, offset, limit: CHANGES_PAGE_ROWS });
      files.push(...page.files);
      offset = page.nextOffset;
    } while (offset !== null && offset !== undefined);
  } catch (error) {
    if (error?.status === 404) { replaceChildren(box); return; }
    replaceChildren(box, errorBox(error));
    return;
  }
  const counts = page.counts ?? {};
  const open = async (file) => {
    try {
      const one = await get(ROUTES.runFileDiff(runId), { path: file.path, side });
      replaceChildren(diffBox, h("h3", {}, h("code", {}, String(file.path))),
        one.diffTruncated ? h("p", { class: "muted" }, "this diff was cut at its bound") : null,
        patchLines(one.diff));
    } catch (error) {
      replaceChildren(diffBox, errorBox(error));
    }
  };
  const other = side === "turn" ? "base" : "turn";
  replaceChildren(box,
    h("h2", {}, "Workspace changes"),
    h("p", { "data-testid": "workspace-counts" },
      `${counts.files ?? files.length} ${(counts.files ?? files.length) === 1 ? "file" : "files"} changed (+${counts.linesAdded ?? 0} -${counts.linesRemoved ?? 0}), `,
      counts.unreported ? badge(`${counts.unreported} unreported`, "unreported") : "all reported",
      side === "base" ? " · since the base" : " · this turn",
      page.truncated?.length ? ` · bounds reached: ${page.truncated.join(", ")}` : "",
      page.provisional ? " · provisional (the outcome is ambiguous)" : "", " ",
      h("button", { type: "button", onclick: () => changesInto(box, runId, other) },
        other === "base" ? "Show since the base" : "Show this turn")),
    table([
      ["kind", (f) => KIND_MARKS[f.kind] ?? "?"],
      ["file", (f) => h("button", { type: "button", class: "link", onclick: () => open(f) },
        f.oldPath ? `${f.oldPath} → ${f.path}` : String(f.path))],
      ["+/-", (f) => `+${f.added ?? 0} -${f.removed ?? 0}`],
      ["", (f) => [f.unreported ? badge("unreported", "unreported") : null,
        f.binary ? " binary" : null, f.diffTruncated ? " diff cut" : null, f.notHashed ? " not hashed" : null]],
    ], files, "No file changed."),
    diffBox);
}
