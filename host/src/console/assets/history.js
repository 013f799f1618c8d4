// The history view: recorded runs of this server (every door, each row naming its own),
// filtered by skill, door, outcome, error code, model and time (the filters live in the URL: `#/history?skill=…&outcome=…`, so
// a filtered view can be reloaded and shared), newest first with paging, with each run's turns
// and repairs. The view is live: while it is shown (and the tab visible) it asks for the
// newest runs every few seconds and puts new ones on top — polling the list route, not a
// stream, so it needs no open connection a server shutdown would wait for, and works under
// `[auth]` as every other read does. One run re-opened with its timeline replayed from its
// recorded answer, and re-run with the same input.

import { getJson, ApiError } from "./api.js";
import { replay, fmtCost } from "./timeline.js";
import { fmtMs } from "./format.js";
import { $, el } from "./dom.js";

// How often the shown history asks for new runs.
const POLL_MS = 2000;

// The filter fields, as named in the URL and in the list route's query.
const FILTERS = { skill: "h-skill", outcome: "h-outcome", error_code: "h-error-code", model: "h-model", door: "h-door", since: "h-since" };

// How a door is named on the page (as stored: console, a2e, mcp, a2a, nats).
const DOOR_NAMES = { console: "console", a2e: "A2E", mcp: "MCP", a2a: "A2A", nats: "NATS" };
const doorName = (door) => (door ? DOOR_NAMES[door] || door : "—");

function when(ts) {
  return new Date(ts * 1000).toLocaleString();
}

// The filters as the URL's query (`since` as the page's local date-time input writes it).
export function filterHash() {
  const p = new URLSearchParams();
  for (const [name, id] of Object.entries(FILTERS)) {
    const v = $(id).value.trim();
    if (v) p.set(name, v);
  }
  const q = p.toString();
  return q ? `#/history?${q}` : "#/history";
}

// Sets the filter fields from the URL's query `params` (a URLSearchParams).
export function setFilters(params) {
  for (const [name, id] of Object.entries(FILTERS)) {
    const v = params.get(name) || "";
    const input = $(id);
    if (input.tagName === "SELECT" && v && ![...input.options].some((o) => o.value === v)) input.append(new Option(v, v));
    input.value = v;
  }
}

function query(before) {
  const p = new URLSearchParams();
  const put = (k, v) => v && p.set(k, v);
  put("skill", $("h-skill").value);
  put("outcome", $("h-outcome").value);
  put("error_code", $("h-error-code").value.trim());
  put("model", $("h-model").value.trim());
  put("door", $("h-door").value);
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
let newest = null;
let poller = null;

function rowOf(r) {
  const tr = el("tr");
  tr.dataset.run = r.id;
  const link = el("a", null, when(r.started_at));
  link.href = `#/run/${r.id}`;
  const td = el("td");
  td.append(link);
  const outcome = el("td");
  outcome.append(el("span", `badge ${r.outcome === "success" ? "ok" : "bad"}`, r.outcome));
  const tokens = r.input_tokens === null && r.output_tokens === null ? "—" : `${r.input_tokens ?? "?"} / ${r.output_tokens ?? "?"}`;
  const count = (n) => (n === null || n === undefined ? "—" : String(n));
  const repairs = el("td", r.repairs ? "repairs" : null, count(r.repairs));
  const door = el("td", "door", doorName(r.door));
  door.dataset.door = r.door || "";
  tr.append(td, el("td", null, r.skill), outcome, el("td", null, r.error_code || ""), el("td", null, r.model || ""), el("td", null, r.duration_ms === null ? "—" : fmtMs(r.duration_ms)), el("td", null, count(r.turns)), repairs, el("td", null, tokens), el("td", null, r.cost === null ? "—" : fmtCost({ amount: r.cost, currency: r.currency })), el("td", null, r.caller), door);
  tr.addEventListener("click", (e) => {
    if (e.target.tagName !== "A") location.hash = `#/run/${r.id}`;
  });
  return tr;
}

function countNote() {
  const body = $("history-table").querySelector("tbody");
  const n = body.children.length;
  $("history-note").textContent = n ? `${n} run${n > 1 ? "s" : ""} · new runs appear here as they finish` : "No runs recorded yet: new runs appear here as they finish.";
}

// Puts the runs newer than the newest shown on top (while the history view is shown).
async function poll() {
  if ($("view-history").hidden) {
    stopLive();
    return;
  }
  if (document.hidden || newest === undefined) return;
  let runs;
  try {
    runs = (await getJson(`/console/api/runs?${query(null)}`)).runs;
  } catch (_) {
    return; // the next tick tries again; the filters' own errors show on submit
  }
  const body = $("history-table").querySelector("tbody");
  const fresh = runs.filter((r) => newest === null || r.id > newest);
  for (const r of fresh.reverse()) {
    const tr = rowOf(r);
    tr.classList.add("new-run");
    body.prepend(tr);
    newest = r.id;
    if (oldest === null) oldest = r.id;
  }
  if (fresh.length) countNote();
}

function startLive() {
  if (!poller) poller = setInterval(poll, POLL_MS);
}

function stopLive() {
  if (poller) clearInterval(poller);
  poller = null;
}

export async function loadHistory(more) {
  const note = $("history-note");
  const body = $("history-table").querySelector("tbody");
  if (!more) {
    body.replaceChildren();
    oldest = null;
    newest = undefined; // no poll merges rows while the first page loads
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
  if (!more) newest = null;
  for (const r of runs) {
    body.append(rowOf(r));
    oldest = r.id;
    if (!more && (newest === null || r.id > newest)) newest = r.id;
  }
  countNote();
  $("history-more").hidden = runs.length < 50;
  startLive();
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
  row("Door", doorName(run.door));
  row("Outcome", run.outcome + (run.error_code ? ` (${run.error_code})` : ""));
  row("Error", run.error);
  row("Model", run.model);
  row("Duration", run.duration_ms === null ? null : fmtMs(run.duration_ms));
  row("Turns", run.turns && String(run.turns));
  row("Repairs", run.repairs === null || run.repairs === undefined ? null : String(run.repairs));
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
