// The skill view's evals: the newest reports `skillet eval --save` stored for the skill, its
// models side by side — one column per model, one row per case (runs passed of runs made, and
// the pass rate's 95 % Wilson interval as the CLI prints it), then the totals, latency, tokens
// and cost over all of a model's runs. Each case cell opens its runs below the table: per run
// the outcome, the checks that failed, turns, repairs, time, tokens and the data; fields a
// newer report adds are shown as JSON. Earlier saves are listed under it.
// A report saved with `--baseline` shows each model's pair: its column with the skill beside one
// without the skill's instructions (`baseline`), and a line per model with both pass rates and
// the delta (`benchmarks[].run_summary`). A run's graded expectations show with their verdict
// and evidence (an ungraded one says so); pass@k and pass^k per model, flaky cases marked.
// The section stays hidden when nothing was saved or the history is off. A skill with
// `evals/evals.json` gets "Run evals": its evals on the host's model (POST
// /console/api/skills/NAME/evals, one eval at a time per server), then the new report.

import { getJson, postJson } from "./api.js";
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

const KNOWN_RUN_FIELDS = new Set(["model", "case", "repeat", "passed", "failures", "observation", "expectations"]);

// The judge's verdict on each expectation of a run, with its evidence.
function expectationsBox(expectations) {
  const box = el("div", "expectations");
  box.setAttribute("data-testid", "expectations");
  box.append(el("strong", null, "Expectations:"));
  const list = el("ul");
  for (const x of expectations) {
    const verdict = !x.graded ? "not graded" : x.passed ? "passed" : "failed";
    const li = el("li", `expectation ${x.graded ? (x.passed ? "passed" : "failed") : "ungraded"}`);
    li.append(el("span", `badge ${x.graded && x.passed ? "ok" : "bad"}`, verdict), " ", x.text || "");
    if (x.evidence) li.append(el("div", "muted evidence", x.evidence));
    list.append(li);
  }
  box.append(list);
  return box;
}

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
  if (Array.isArray(run.expectations) && run.expectations.length) box.append(expectationsBox(run.expectations));
  if (o.data !== undefined && o.data !== null) box.append(el("div", "muted", "data"), el("pre", "doc", JSON.stringify(o.data, null, 2)));
  for (const [key, value] of Object.entries(run)) {
    if (KNOWN_RUN_FIELDS.has(key)) continue;
    const more = el("details");
    more.append(el("summary", null, key), el("pre", "doc", JSON.stringify(value, null, 2)));
    box.append(more);
  }
  return box;
}

// Shows the runs of `caseName` on `model` (`label` names its column) under the table.
function openRuns(target, model, caseName, label) {
  const runs = (model.runs || []).filter((r) => r.case === caseName);
  const box = el("div", "eval-runs");
  box.setAttribute("data-testid", "eval-runs");
  box.append(el("h3", null, `${caseName} on ${label}: ${runs.length} run${runs.length === 1 ? "" : "s"}`));
  if (!runs.length) box.append(el("p", "muted", "This report kept no run of that case."));
  for (const run of runs) box.append(runBox(run));
  target.replaceChildren(box);
  box.scrollIntoView({ block: "nearest" });
}

const number = (value, unit) => (value === undefined || value === null ? "—" : `${Math.round(value)}${unit}`);

function savedAt(saved) {
  return new Date(saved.saved_at * 1000).toLocaleString();
}

const pct = (x) => (typeof x === "number" ? `${Math.round(x * 100)} %` : "—");

// The report's columns: each model, and after it the same model without the skill when the
// report has a baseline for it.
function columnsOf(report) {
  const baseline = report.baseline || [];
  const columns = [];
  for (const model of report.models || []) {
    columns.push({ model, label: model.model, baseline: false });
    const without = baseline.find((b) => b.model === model.model);
    if (without) columns.push({ model: without, label: `${model.model} without the skill`, baseline: true });
  }
  return columns;
}

// One line per model of a `--baseline` report: both pass rates and the delta, as
// `benchmark.json`'s `run_summary` has them.
function pairLines(report) {
  const list = el("ul", "eval-pairs");
  list.setAttribute("data-testid", "eval-pairs");
  (report.benchmarks || []).forEach((bench, i) => {
    const s = bench.run_summary || {};
    const rate = (config) => s[config] && s[config].pass_rate && s[config].pass_rate.mean;
    const model = (bench.metadata && bench.metadata.executor_model) || ((report.models || [])[i] || {}).model || "";
    const delta = (s.delta && s.delta.pass_rate) || "—";
    const li = el("li", "eval-pair");
    li.append(
      el("strong", null, model), ": with the skill ", el("span", "with", pct(rate("with_skill"))),
      " of checks and expectations held, without it ", el("span", "without", pct(rate("without_skill"))),
      " — delta ", el("span", `delta ${delta.startsWith("-") ? "bad" : "ok"}`, delta),
    );
    list.append(li);
  });
  return list;
}

// The side-by-side table of one saved report; a case cell opens its runs in `runsBox`.
function reportTable(saved, runsBox) {
  const columns = columnsOf(saved.report);
  const table = el("table", "evals");
  table.append(el("caption", null, `Saved ${savedAt(saved)} — ${saved.passed ? "every run passed" : "not every run passed"}`));
  const head = el("tr");
  head.append(el("th", null, "Case"));
  for (const column of columns) {
    const th = el("th", column.baseline ? "baseline" : null, column.label);
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
    tr.append(th, ...columns.map((column) => {
      const c = cell(column.model, column);
      const td = typeof c === "string" ? el("td", null, c) : c;
      if (column.baseline) td.classList.add("baseline");
      return td;
    }));
    body.append(tr);
  };
  const cases = columns.length ? (columns[0].model.cases || []).map((c) => c.case) : [];
  cases.forEach((name) =>
    row(name, (model, column) => {
      const found = (model.cases || []).find((c) => c.case === name);
      const td = rateCell(found && found.summary, () => openRuns(runsBox, model, name, column.label));
      const x = found && found.summary && found.summary.expectations;
      if (x && x.total) td.append(el("div", "muted", `expectations ${x.passed}/${x.total}`));
      if (found && found.flaky) {
        const mark = el("span", "badge bad flaky", "flaky");
        mark.title = "passed in some runs and failed in others";
        td.append(" ", mark);
      }
      return td;
    }),
  );
  row("All runs", (model) => rateCell(model.summary), "total");
  const anyExpectations = columns.some((c) => c.model.summary && c.model.summary.expectations && c.model.summary.expectations.total);
  if (anyExpectations)
    row("Expectations", (model) => {
      const x = model.summary && model.summary.expectations;
      return x && x.total ? `${x.passed}/${x.total} (${pct(x.pass_rate)})` : "—";
    });
  if (columns.some((c) => c.model.repeats && c.model.repeats.k > 1))
    row("Repeats", (model) => {
      const r = model.repeats;
      if (!r || !(r.k > 1)) return "—";
      const flaky = (r.flaky || []).length ? ` · flaky: ${r.flaky.join(", ")}` : "";
      return `pass@${r.k} ${pct(r.pass_at_k)} · pass^${r.k} ${pct(r.pass_all_k)}${flaky}`;
    });
  row("Latency (median)", (model) => (model.summary.latency_ms ? fmtMs(model.summary.latency_ms.median) : "—"));
  row("Tokens (median)", (model) => number(model.summary.tokens && model.summary.tokens.median, ""));
  row("Cost (mean)", (model) => (model.summary.cost ? `${model.summary.cost.amount.toFixed(4)} ${model.summary.cost.currency}` : "—"));
  return table;
}

// "Run evals" for skill `name`: runs them on the server, then shows the new report.
function runButton(name, canRun) {
  const bar = el("p", "eval-run-bar");
  const button = el("button", null, "Run evals");
  button.type = "button";
  button.id = "eval-run-button";
  const status = el("span", "muted");
  status.setAttribute("data-testid", "eval-run-status");
  status.setAttribute("role", "status");
  button.addEventListener("click", async () => {
    button.disabled = true;
    status.textContent = " Running the evals on the host's model…";
    try {
      await postJson(`/console/api/skills/${encodeURIComponent(name)}/evals`, {});
      await showEvals(name, canRun);
      const again = $("eval-run-status");
      if (again) again.textContent = " Saved: the newest report is shown.";
    } catch (e) {
      status.textContent = ` ${e.message}`;
      button.disabled = false;
    }
  });
  status.id = "eval-run-status";
  bar.append(button, status, el("span", "muted", " — on the host's model, expectations not graded (skillet eval grades them)"));
  return bar;
}

// Fills the evals section of skill `name` (hidden when there is nothing to show); with
// `canRun`, it offers "Run evals".
export async function showEvals(name, canRun) {
  const section = $("skill-evals-section");
  const box = $("skill-evals");
  let evals = [];
  try {
    evals = (await getJson(`/console/api/skills/${encodeURIComponent(name)}/evals`)).evals || [];
  } catch {
    evals = []; // the history is off: nothing saved can be shown
  }
  box.replaceChildren();
  section.hidden = evals.length === 0 && !canRun;
  if (canRun) box.append(runButton(name, canRun));
  if (!evals.length) return;
  const [newest, ...earlier] = evals;
  const wrap = el("div", "table-wrap");
  const runsBox = el("div");
  wrap.append(reportTable(newest, runsBox));
  if ((newest.report.benchmarks || []).length) box.append(pairLines(newest.report));
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
