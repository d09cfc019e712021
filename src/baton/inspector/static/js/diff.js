// A line diff for tool-call diffs ({path, oldText, newText}), rendered as text rows.
//
// Longest common subsequence over the lines left after trimming the common head and tail;
// the table is bounded by MAX_DIFF_CELLS so a huge rewrite costs at most that much work and
// memory, past which the change is shown as the old lines removed and the new lines added.

// Bounds the LCS table (cells = changed old lines x changed new lines): ~4 MB of Uint32.
export const MAX_DIFF_CELLS = 1_000_000;
// Bounds the lines one diff puts in the DOM; the rest is summarized in one line.
export const MAX_RENDERED_DIFF_LINES = 2_000;

function splitLines(text) {
  if (text === null || text === undefined || text === "") return [];
  const lines = String(text).split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** The diff of two texts as [op, line] pairs, op one of " ", "-", "+". */
export function lineDiff(oldText, newText) {
  const a = splitLines(oldText);
  const b = splitLines(newText);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const ops = a.slice(0, head).map((line) => [" ", line]);
  const midA = a.slice(head, a.length - tail);
  const midB = b.slice(head, b.length - tail);
  if (midA.length * midB.length > MAX_DIFF_CELLS) {
    for (const line of midA) ops.push(["-", line]);
    for (const line of midB) ops.push(["+", line]);
  } else {
    const n = midA.length;
    const m = midB.length;
    // lcs[i][j] = LCS length of midA[i:] and midB[j:], flattened.
    const lcs = new Uint32Array((n + 1) * (m + 1));
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        lcs[i * (m + 1) + j] = midA[i] === midB[j]
          ? lcs[(i + 1) * (m + 1) + j + 1] + 1
          : Math.max(lcs[(i + 1) * (m + 1) + j], lcs[i * (m + 1) + j + 1]);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n && j < m) {
      if (midA[i] === midB[j]) { ops.push([" ", midA[i]]); i++; j++; }
      else if (lcs[(i + 1) * (m + 1) + j] >= lcs[i * (m + 1) + j + 1]) { ops.push(["-", midA[i]]); i++; }
      else { ops.push(["+", midB[j]]); j++; }
    }
    for (; i < n; i++) ops.push(["-", midA[i]]);
    for (; j < m; j++) ops.push(["+", midB[j]]);
  }
  for (const line of a.slice(a.length - tail)) ops.push([" ", line]);
  return ops;
}
