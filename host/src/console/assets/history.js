// The history view: recorded runs of this server (every door), filtered by skill, outcome,
// error code, model and time, newest first with paging; one run re-opened with its timeline
// replayed from its recorded answer, and re-run with the same input.

import { getJson, ApiError } from "./api.js";
import { replay, fmtCost } from "./timeline.js";
import { $, el } from "./dom.js";

function when(ts) {
  return new Date(ts * 1000).toLocaleString();
}

function query(before) {
  const p = new URLSearchParams();
  const put = (k, v) => v && p.set(k, v);
  put("skill", $("h-skill").value);
  put("outcome", $("h-outcome").value);
  put("error_code", $("h-error-code").value.trim());
  put("model", $("h-model").value.trim());
  if ($("h-since").value) put("since", String(new Date($("h-since").value).getTime() / 1000));
  if (before) put("before", String(before));
  return p.toString();
}

export function fillSkillFilter(names) {
  const select = $("h-skill");
  const keep = select.value;
  select.replaceChildren(new Option("any", ""));
  for (const n of names) select.append(new Option(n, n));
  select.value = names.includes(keep) ? keep : "";
}

let oldest = null;

export async function loadHistory(more) {
  const note = $("history-note");
  const body = $("history-table").querySelector("tbody");
  if (!more) {
    body.replaceChildren();
    oldest = null;
  }
  let runs;
  try {
    runs = (await getJson(`/console/api/runs?${query(more ? oldest : null)}`)).runs;
  } catch (e) {
    if (e instanceof ApiError && e.body && e.body.error === "no_history") {
      note.textContent = "The run history is off on this server.";
      return;
    }
    throw e;
  }
  for (const r of runs) {
    const tr = el("tr");
    tr.dataset.run = r.id;
    const link = el("a", null, when(r.started_at));
    link.href = `#/run/${r.id}`;
    const td = el("td");
    td.append(link);
    const outcome = el("td");
    outcome.append(el("span", `badge ${r.outcome === "success" ? "ok" : "bad"}`, r.outcome));
    const tokens = r.input_tokens === null && r.output_tokens === null ? "—" : `${r.input_tokens ?? "?"} / ${r.output_tokens ?? "?"}`;
    tr.append(td, el("td", null, r.skill), outcome, el("td", null, r.error_code || ""), el("td", null, r.model || ""), el("td", null, r.duration_ms === null ? "—" : `${r.duration_ms} ms`), el("td", null, tokens), el("td", null, r.cost === null ? "—" : fmtCost({ amount: r.cost, currency: r.currency })), el("td", null, r.caller));
    tr.addEventListener("click", (e) => {
      if (e.target.tagName !== "A") location.hash = `#/run/${r.id}`;
    });
    body.append(tr);
    oldest = r.id;
  }
  note.textContent = body.children.length ? `${body.children.length} run${body.children.length > 1 ? "s" : ""}` : "No runs recorded yet.";
  $("history-more").hidden = runs.length < 50;
}

// Fills the run view; resolves to the record.
export async function showRun(id) {
  const { run } = await getJson(`/console/api/runs/${encodeURIComponent(id)}`);
  $("run-title").textContent = `${run.skill} — ${run.outcome}`;
  const dl = el("dl", "meta");
  const row = (k, v) => v && dl.append(el("dt", null, k), el("dd", null, v));
  row("Run", `#${run.id} (call ${run.req_id})`);
  row("Started", when(run.started_at));
  row("Caller", run.caller);
  row("Outcome", run.outcome + (run.error_code ? ` (${run.error_code})` : ""));
  row("Error", run.error);
  row("Model", run.model);
  row("Duration", run.duration_ms === null ? null : `${run.duration_ms} ms`);
  row("Turns", run.turns && String(run.turns));
  row("Cost", run.cost === null ? null : fmtCost({ amount: run.cost, currency: run.currency }));
  row("Content", run.content_kept ? "input and answer kept" : "not kept (content capture is off)");
  $("run-meta").replaceChildren(dl);
  $("run-skill-link").href = `#/skill/${encodeURIComponent(run.skill)}`;
  $("run-input").textContent = run.arguments ? JSON.stringify(run.arguments, null, 2) : "(not kept)";
  $("rerun-button").disabled = !run.arguments;
  const replayBox = $("run-replay");
  replayBox.replaceChildren();
  if (run.response) {
    replay(replayBox, run.response);
    const data = run.response.data;
    if (data && !data.transcript) replayBox.append(el("p", "muted", "No transcript: the call did not ask for one (metadata.transcript: true); runs from this console always do."));
  } else {
    replayBox.append(el("p", "muted", "Neither the answer nor the transcript was kept: turn on [console] capture_content to keep them."));
  }
  return run;
}
