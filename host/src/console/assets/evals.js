// The skill view's evals: the newest reports `skillet eval --save` stored for the skill, its
// models side by side — one column per model, one row per case (runs passed of runs made, and
// the pass rate's 95 % Wilson interval as the CLI prints it), then the totals, latency, tokens
// and cost over all of a model's runs. Each case cell opens its runs below the table: per run
// the outcome, the checks that failed, turns, repairs, time, tokens and the data; fields a
// newer report adds (judge grades, …) are shown as JSON. Earlier saves are listed under it.
// The section stays hidden when nothing was saved or the history is off.

import { getJson } from "./api.js";
import { fmtMs } from "./format.js";
import { $, el } from "./dom.js";

// "2/3 (67 %)" for an aggregate, "—" for no runs.
function passRate(summary) {
  if (!summary || !summary.runs) return "—";
  return `${summary.passed}/${summary.runs} (${Math.round(summary.pass_rate * 100)} %)`;
}

// The pass rate's 95 % Wilson interval as `skillet eval` prints it: "100% (21–100%)".
function wilson(summary) {
  const ci = summary && summary.pass_rate_ci95;
  if (!Array.isArray(ci) || ci.length !== 2) return "";
  const pct = (x) => Math.round(x * 100);
  return `95 % CI ${pct(ci[0])}–${pct(ci[1])} %`;
}

// A pass-rate cell: the rate, its interval under it, and (with `open`) a button that opens the
// cell's runs.
function rateCell(summary, open) {
  const td = el("td");
  const rate = passRate(summary);
  if (open && summary && summary.runs) {
    const b = el("button", "cell-link", rate);
    b.type = "button";
    b.addEventListener("click", open);
    td.append(b);
  } else td.append(rate);
  const ci = wilson(summary);
  if (ci) td.append(el("div", "muted ci", ci));
  if (summary && summary.runs && summary.passed < summary.runs) td.classList.add("failing");
  return td;
}

const KNOWN_RUN_FIELDS = new Set(["model", "case", "repeat", "passed", "failures", "observation"]);

function outcomeText(o) {
  if (!o || !o.status) return "unknown";
  if (o.status === "succeeded") return "succeeded";
  return `${o.status}: ${o.code || ""}${o.message ? ` — ${o.message}` : ""}`;
}

// One run of a case: what it showed and the checks that failed.
function runBox(run) {
  const box = el("section", `eval-run ${run.passed ? "passed" : "failed"}`);
  box.setAttribute("data-testid", "eval-run");
  box.append(el("h4", null, `Run ${run.repeat ?? ""} — ${run.passed ? "passed" : "failed"}`));
  const o = run.observation || {};
  const dl = el("dl", "meta");
  const row = (k, v) => v !== undefined && v !== null && v !== "" && dl.append(el("dt", null, k), el("dd", null, v));
  row("Outcome", outcomeText(o.outcome));
  row("Turns", o.turns === undefined || o.turns === null ? undefined : String(o.turns));
  row("Repairs", o.repairs === undefined ? undefined : String(o.repairs));
  row("Time", o.latency_ms === undefined ? undefined : fmtMs(o.latency_ms));
  row("Tokens", o.tokens === undefined || o.tokens === null ? undefined : String(o.tokens));
  row("Tool calls", (o.tool_calls || []).join(", "));
  row("Files", (o.files || []).map((f) => f.name).join(", "));
  box.append(dl);
  if (run.failures && run.failures.length) {
    const failed = el("div", "violations");
    failed.setAttribute("data-testid", "failed-checks");
    failed.append(el("strong", null, "Checks that failed:"));
    const list = el("ul");
    for (const f of run.failures) list.append(el("li", null, `${f.kind || f.code}: ${f.message}`));
    failed.append(list);
    box.append(failed);
  }
  if (o.data !== undefined && o.data !== null) box.append(el("div", "muted", "data"), el("pre", "doc", JSON.stringify(o.data, null, 2)));
  for (const [key, value] of Object.entries(run)) {
    if (KNOWN_RUN_FIELDS.has(key)) continue;
    const more = el("details");
    more.append(el("summary", null, key), el("pre", "doc", JSON.stringify(value, null, 2)));
    box.append(more);
  }
  return box;
}

// Shows the runs of `caseName` on `model` under the table.
function openRuns(target, model, caseName) {
  const runs = (model.runs || []).filter((r) => r.case === caseName);
  const box = el("div", "eval-runs");
  box.setAttribute("data-testid", "eval-runs");
  box.append(el("h3", null, `${caseName} on ${model.model}: ${runs.length} run${runs.length === 1 ? "" : "s"}`));
  if (!runs.length) box.append(el("p", "muted", "This report kept no run of that case."));
  for (const run of runs) box.append(runBox(run));
  target.replaceChildren(box);
  box.scrollIntoView({ block: "nearest" });
}

const number = (value, unit) => (value === undefined || value === null ? "—" : `${Math.round(value)}${unit}`);

function savedAt(saved) {
  return new Date(saved.saved_at * 1000).toLocaleString();
}

// The side-by-side table of one saved report; a case cell opens its runs in `runsBox`.
function reportTable(saved, runsBox) {
  const models = saved.report.models || [];
  const table = el("table", "evals");
  table.append(el("caption", null, `Saved ${savedAt(saved)} — ${saved.passed ? "every run passed" : "not every run passed"}`));
  const head = el("tr");
  head.append(el("th", null, "Case"));
  for (const model of models) {
    const th = el("th", null, model.model);
    th.scope = "col";
    head.append(th);
  }
  const thead = el("thead");
  thead.append(head);
  const body = el("tbody");
  table.append(thead, body);
  const row = (label, cell, className) => {
    const tr = el("tr", className);
    const th = el("th", null, label);
    th.scope = "row";
    tr.append(th, ...models.map((model) => {
      const c = cell(model);
      return typeof c === "string" ? el("td", null, c) : c;
    }));
    body.append(tr);
  };
  const cases = models.length ? (models[0].cases || []).map((c) => c.case) : [];
  cases.forEach((name) =>
    row(name, (model) => {
      const found = (model.cases || []).find((c) => c.case === name);
      return rateCell(found && found.summary, () => openRuns(runsBox, model, name));
    }),
  );
  row("All runs", (model) => rateCell(model.summary), "total");
  row("Latency (median)", (model) => (model.summary.latency_ms ? fmtMs(model.summary.latency_ms.median) : "—"));
  row("Tokens (median)", (model) => number(model.summary.tokens && model.summary.tokens.median, ""));
  row("Cost (mean)", (model) => (model.summary.cost ? `${model.summary.cost.amount.toFixed(4)} ${model.summary.cost.currency}` : "—"));
  return table;
}

// Fills the evals section of skill `name` (hidden when there is nothing to show).
export async function showEvals(name) {
  const section = $("skill-evals-section");
  const box = $("skill-evals");
  let evals = [];
  try {
    evals = (await getJson(`/console/api/skills/${encodeURIComponent(name)}/evals`)).evals || [];
  } catch {
    evals = []; // the history is off: nothing saved can be shown
  }
  box.replaceChildren();
  section.hidden = evals.length === 0;
  if (!evals.length) return;
  const [newest, ...earlier] = evals;
  const wrap = el("div", "table-wrap");
  const runsBox = el("div");
  wrap.append(reportTable(newest, runsBox));
  box.append(wrap, runsBox);
  if (earlier.length) {
    const list = el("ul", "earlier-evals");
    for (const saved of earlier) {
      const models = (saved.report.models || []).map((m) => `${m.model} ${passRate(m.summary)}`);
      list.append(el("li", null, `${savedAt(saved)}: ${models.join(", ")}`));
    }
    box.append(el("h3", null, "Earlier"), list);
  }
}
