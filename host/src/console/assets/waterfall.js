// A run's time as a waterfall: one row per model turn and per tool call, each a bar placed on
// the run's time axis (its left edge when it started, its width how long it took), with the
// duration written beside it. Bars are sized through the CSSOM (`style.left`/`style.width`),
// which the console's Content Security Policy allows (it forbids only inline style attributes).
//
// Not here: where the spans come from (`timeline.js` reads them off the call's events).

import { el } from "./dom.js";
import { fmtMs } from "./format.js";

// `spans`: [{ label, kind: "turn" | "tool", start, end }] in seconds on one clock. Returns the
// section, or null when there is nothing to draw.
export function renderWaterfall(spans) {
  const drawn = spans.filter((s) => s.start !== undefined && s.end !== undefined && s.end >= s.start);
  if (!drawn.length) return null;
  const t0 = Math.min(...drawn.map((s) => s.start));
  const t1 = Math.max(...drawn.map((s) => s.end));
  const total = Math.max(t1 - t0, 1e-6);
  const section = el("section", "waterfall");
  section.setAttribute("data-testid", "waterfall");
  section.append(el("h3", null, `Time (${fmtMs((t1 - t0) * 1000)} from the first turn)`));
  const list = el("ol", "wf-rows");
  for (const span of drawn) {
    const li = el("li", `wf-row wf-${span.kind}`);
    li.dataset.kind = span.kind;
    const ms = (span.end - span.start) * 1000;
    li.dataset.ms = String(Math.round(ms));
    const track = el("div", "wf-track");
    const bar = el("div", "wf-bar");
    bar.style.left = `${(((span.start - t0) / total) * 100).toFixed(2)}%`;
    bar.style.width = `${Math.max(((span.end - span.start) / total) * 100, 0.5).toFixed(2)}%`;
    bar.title = `${span.label}: ${fmtMs(ms)}`;
    track.append(bar);
    li.append(el("span", "wf-label", span.label), track, el("span", "wf-ms muted", fmtMs(ms)));
    list.append(li);
  }
  section.append(list);
  return section;
}
