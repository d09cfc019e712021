// Drives the inspector's transcript with a synthetic stream of run events (docs/events.md),
// fed in batches the way an SSE stream delivers them, and measures how long the main thread
// was blocked meanwhile.
import { TranscriptModel, TranscriptView } from "/inspector/js/transcript.js";

const view = new TranscriptView(document.getElementById("view"), new TranscriptModel());
const longTasks = [];
new PerformanceObserver((list) => { for (const e of list.getEntries()) longTasks.push(e.duration); })
  .observe({ type: "longtask", buffered: true });

// A run of `n` events: mostly text deltas, with thoughts, tool calls (updated, some with a
// diff), plans, usage, permissions and notices mixed in; `hostile` puts markup in every text.
function synthetic(n, hostile) {
  const bad = hostile ? "<img src=x onerror=\"window.__xss=1\"><script>window.__xss=2</script>" : "";
  const events = [];
  let tool = 0;
  for (let i = 0; events.length < n; i++) {
    const k = i % 50;
    if (k === 10) events.push({ type: "thought", runId: "r", text: `thinking ${i}${bad}`, coalescedEvents: 1 });
    else if (k === 20) {
      tool++;
      events.push({ type: "tool_call", runId: "r", toolCallId: `t${tool}`, kind: "edit", title: `edit ${tool}${bad}`, status: "pending", paths: [`src/f${tool}.py${bad}`] });
      events.push({ type: "tool_call", runId: "r", toolCallId: `t${tool}`, kind: "edit", title: `edit ${tool}${bad}`, status: "completed", paths: [`src/f${tool}.py`],
        diff: { files: 1, added: 2, removed: 1, changes: [{ path: `src/f${tool}.py`, oldText: `a\nb${bad}\nc\n`, newText: `a\nB${bad}\nc\nd\ne\n` }] } });
    } else if (k === 30) events.push({ type: "plan", runId: "r", entries: [{ content: `step ${i}${bad}`, status: "in_progress", priority: "high" }] });
    else if (k === 35) events.push({ type: "usage", runId: "r", used: i, size: 200000, cost: { amount: i / 1e5, currency: "USD" } });
    else if (k === 40) events.push({ type: "permission", runId: "r", toolCallId: `t${tool}`, options: [{ optionId: "allow", name: `Allow${bad}`, kind: "allow_once" }], outcome: "selected", optionId: "allow", chosenBy: "user" });
    else if (k === 45) events.push({ type: "warning", runId: "r", code: "NOTICE", message: `notice ${i}${bad}` });
    else events.push({ type: "text", runId: "r", text: `w${i}${bad} `, coalescedEvents: 1 });
  }
  return events.slice(0, n);
}

function expectedText(events) {
  return events.filter((e) => e.type === "text").map((e) => e.text).join("");
}

// Feed `events` in batches of `batch`, one batch per macrotask, like messages off a socket.
function stream(events, batch) {
  return new Promise((resolve) => {
    let at = 0;
    const step = () => {
      view.push(events.slice(at, at + batch));
      at += batch;
      if (at < events.length) setTimeout(step, 0);
      else requestAnimationFrame(() => requestAnimationFrame(resolve));
    };
    step();
  });
}

window.harness = {
  view,
  synthetic,
  expectedText,
  async run(n, batch, hostile = false) {
    const events = synthetic(n, hostile);
    events.push({ type: "result", runId: "r", status: "COMPLETED", stopReason: "end_turn", skippedFrames: 2, violations: 1, toolCalls: 0, permissions: 0, durationMs: 1234 });
    longTasks.length = 0;
    const started = performance.now();
    await stream(events, batch);
    const elapsed = performance.now() - started;
    return {
      events: events.length,
      elapsedMs: elapsed,
      longestTaskMs: longTasks.length ? Math.max(...longTasks) : 0,
      longTasks: longTasks.length,
      rowsInModel: view.model.rows.length,
      rowsInDom: document.querySelectorAll("ol.transcript > li").length,
      textMatches: view.model.text() === expectedText(events),
    };
  },
};
document.body.dataset.ready = "1";
