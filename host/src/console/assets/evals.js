// The skill view's evals: the newest reports `skillet eval --save` stored for the skill, its
// models side by side — one column per model, one row per case (runs passed of runs made),
// then the totals, latency, tokens and cost over all of a model's runs. Earlier saves are
// listed under it. The section stays hidden when nothing was saved or the history is off.

import { getJson } from "./api.js";
import { $, el } from "./dom.js";

// "2/3 (67 %)" for an aggregate, "—" for no runs.
function passRate(summary) {
  if (!summary || !summary.runs) return "—";
  return `${summary.passed}/${summary.runs} (${Math.round(summary.pass_rate * 100)} %)`;
}

const number = (value, unit) => (value === undefined || value === null ? "—" : `${Math.round(value)}${unit}`);

function savedAt(saved) {
  return new Date(saved.saved_at * 1000).toLocaleString();
}

// The side-by-side table of one saved report.
function reportTable(saved) {
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
    tr.append(th, ...models.map((model) => el("td", null, cell(model))));
    body.append(tr);
  };
  const cases = models.length ? models[0].cases.map((c) => c.case) : [];
  cases.forEach((name, i) => row(name, (model) => passRate(model.cases[i] && model.cases[i].summary)));
  row("All runs", (model) => passRate(model.summary), "total");
  row("Latency (median)", (model) => number(model.summary.latency_ms && model.summary.latency_ms.median, " ms"));
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
  wrap.append(reportTable(newest));
  box.append(wrap);
  if (earlier.length) {
    const list = el("ul", "earlier-evals");
    for (const saved of earlier) {
      const models = (saved.report.models || []).map((m) => `${m.model} ${passRate(m.summary)}`);
      list.append(el("li", null, `${savedAt(saved)}: ${models.join(", ")}`));
    }
    box.append(el("h3", null, "Earlier"), list);
  }
}
