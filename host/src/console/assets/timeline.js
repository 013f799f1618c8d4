// The live timeline of one call, built from its A2E messages: a row per turn (from the run's
// `status` "turn N/M · provider/model"), the text the model streams (`artifact` turn-N), tool
// calls and their results (`log` "tool call NAME(ARGS)" / "tool result NAME: ..." / "tool
// error ..."), repair turns ("final answer rejected ..."), the progress bar, then the final
// `skill/call/resp`: outcome, validation, summary, error code, duration, usage and cost.
// Tool calls waiting for approval (`status` with `detail.approval`) are `ApprovalRow`s.
// While a tool call waits for approval, the tab's title starts with "(approval needed)".
// Below the result, the run's transcript when its answer carries one (`transcript.js`).
// The same renderer replays a recorded run from the events kept in its answer.

import { ApprovalRow } from "./approval.js";
import { renderTranscript } from "./transcript.js";
import { el } from "./dom.js";

const APPROVAL_TITLE = "(approval needed) ";

// Keeps the tab's title prefix in step with whether some approval row still waits.
function markTitle(waiting) {
  const has = document.title.startsWith(APPROVAL_TITLE);
  if (waiting && !has) document.title = APPROVAL_TITLE + document.title;
  else if (!waiting && has) document.title = document.title.slice(APPROVAL_TITLE.length);
}

const TURN = /^turn (\d+)\/(\d+) · (.*)$/;
const TOOL_CALL = /^tool call ([^(]+)\((.*)\)$/s;
const TOOL_RESULT = /^tool result ([^:]+): (.*)$/s;
const TOOL_ERROR = /^tool error ([^:]+): (.*)$/s;

function pretty(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch (_) {
    return text;
  }
}

function fmtTokens(usage) {
  if (!usage) return "—";
  const i = usage.input_tokens;
  const o = usage.output_tokens;
  if (i === undefined && o === undefined) return "not reported";
  return `${i ?? "?"} in / ${o ?? "?"} out`;
}

export function fmtCost(cost) {
  return cost ? `${cost.amount.toFixed(6)} ${cost.currency}` : "—";
}

export class Timeline {
  // `live`: { reqId, approvals } for a run of this page (approvals can be decided), else none.
  constructor(container, live) {
    this.live = live;
    this.approvalRows = new Map();
    this.container = container;
    container.hidden = false;
    container.replaceChildren();
    const title = el("h2", null, "Timeline");
    this.state = el("p", "muted", "starting…");
    this.state.setAttribute("data-testid", "run-state");
    const bar = el("div", "progress");
    bar.setAttribute("role", "progressbar");
    bar.setAttribute("aria-valuemin", "0");
    bar.setAttribute("aria-valuemax", "100");
    this.bar = bar;
    this.fill = el("div");
    bar.append(this.fill);
    this.turns = el("ol", "turns");
    this.result = el("div");
    // What happens before the first turn (and native skills' notes) goes above the turns.
    this.pre = el("div", "pre-turn");
    this.preRow = { body: this.pre, stream: this.pre, li: this.pre };
    container.append(title, this.state, bar, this.pre, this.turns, this.result);
    this.byTurn = new Map();
    this.current = null;
    this.pendingTools = new Map();
    this.lastTs = null;
  }

  setState(text) {
    this.state.textContent = text;
  }

  turnRow(number, total, label, ts) {
    const li = el("li", "turn");
    li.dataset.turn = number;
    const header = el("header");
    header.append(el("strong", null, `Turn ${number}${total ? ` of ${total}` : ""}`), el("span", "muted", label));
    const stats = el("span", "muted stats");
    header.append(stats);
    const stream = el("div", "stream");
    const body = el("div", "body");
    li.append(header, body, stream);
    this.turns.append(li);
    const row = { li, header, stats, stream, body, ts, label };
    if (this.current && ts && this.current.ts) {
      this.current.duration = ts - this.current.ts;
      this.showStats(this.current);
    }
    this.byTurn.set(number, row);
    this.current = row;
    return row;
  }

  showStats(row) {
    const parts = [];
    if (row.duration !== undefined) parts.push(`${Math.round(row.duration * 1000)} ms`);
    if (row.usage) parts.push(fmtTokens(row.usage));
    row.stats.textContent = parts.join(" · ");
  }

  row() {
    return this.current || this.preRow;
  }

  // One A2E message of the call.
  message(msg) {
    if (msg.type === "skill/event") this.event(msg);
    else if (msg.type === "skill/call/resp") this.finish(msg);
  }

  event(ev) {
    this.lastTs = ev.ts;
    const data = ev.data || {};
    if (ev.kind === "progress") {
      this.fill.style.width = `${data.pct}%`;
      this.bar.setAttribute("aria-valuenow", String(data.pct));
      this.setState(data.message);
      return;
    }
    if (ev.kind === "status") {
      if (data.detail && data.detail.approval) {
        this.approval(data.detail);
        return;
      }
      const m = TURN.exec(data.message);
      if (m) this.turnRow(Number(m[1]), Number(m[2]), m[3], ev.ts);
      else this.row().body.append(el("p", "log", data.message));
      return;
    }
    if (ev.kind === "artifact") {
      const m = /^turn-(\d+)$/.exec(data.name);
      const row = (m && this.byTurn.get(Number(m[1]))) || this.row();
      if (data.chunk) row.stream.textContent += data.chunk;
      return;
    }
    if (ev.kind === "log") this.log(data.level, data.message);
  }

  approval(detail) {
    if (detail.approval === "requested") {
      this.approvalRows.set(detail.call_id, new ApprovalRow(this.row().body, detail, this.live));
      this.setState(`waiting for your approval: tool ${detail.tool}`);
      if (this.live) markTitle(true);
      return;
    }
    const row = this.approvalRows.get(detail.call_id);
    if (row) row.decided(detail);
    else this.row().body.append(el("p", "log", `approval ${detail.approval}: tool ${detail.tool}`));
    if (this.live) markTitle([...this.approvalRows.values()].some((r) => !r.done));
  }

  endApprovals() {
    for (const row of this.approvalRows.values()) row.ended();
    if (this.live) markTitle(false);
  }

  log(level, message) {
    const row = this.row();
    let m;
    if ((m = TOOL_CALL.exec(message))) {
      const details = el("details", "tool");
      const summary = el("summary", null, `tool call ${m[1]}`);
      const args = el("pre", null, pretty(m[2]));
      details.append(summary, el("div", "muted", "arguments"), args);
      row.body.append(details);
      const queue = this.pendingTools.get(m[1]) || [];
      queue.push(details);
      this.pendingTools.set(m[1], queue);
      return;
    }
    const result = TOOL_RESULT.exec(message);
    const error = TOOL_ERROR.exec(message);
    if (result || error) {
      const [, name, text] = result || error;
      const queue = this.pendingTools.get(name) || [];
      let details = queue.shift();
      if (!details) {
        details = el("details", "tool");
        details.append(el("summary", null, `tool ${name}`));
        row.body.append(details);
      }
      if (error) details.classList.add("error");
      details.querySelector("summary").textContent += error ? " → error" : " → result";
      details.append(el("div", "muted", error ? "error" : "result"), el("pre", null, pretty(text)));
      return;
    }
    if (/^final answer rejected/.test(message)) {
      row.li.classList.add("repaired");
      row.body.append(el("p", "repair", `repair: ${message}`));
      return;
    }
    row.body.append(el("p", `log ${level || "info"}`, message));
  }

  // The final answer.
  finish(resp) {
    this.endApprovals();
    this.fill.style.width = "100%";
    this.bar.setAttribute("aria-valuenow", "100");
    if (this.current && this.lastTs && this.current.ts && this.current.duration === undefined) {
      this.current.duration = this.lastTs - this.current.ts;
      this.showStats(this.current);
    }
    const box = el("section", "result");
    box.setAttribute("data-testid", "result");
    if (resp.error) {
      box.classList.add("bad");
      box.append(el("h3", null, `Refused: ${resp.error.code}`), el("p", null, resp.error.message));
      this.setState("refused");
      this.result.replaceChildren(box);
      return;
    }
    const r = resp.data || {};
    const usage = r.usage;
    for (const t of (usage && usage.turns) || []) {
      const row = this.byTurn.get(t.turn);
      if (row) {
        row.usage = t;
        this.showStats(row);
      }
    }
    box.classList.add(r.success ? "ok" : "bad");
    const validity = r.success ? "valid: the output matches the output schema" : r.error_code === "schema_violation" ? "invalid: the output never matched the output schema" : "no valid output";
    box.append(el("h3", null, r.success ? "Succeeded" : `Failed: ${r.error_code || "error"}`));
    const dl = el("dl", "meta");
    const row = (k, v) => dl.append(el("dt", null, k), el("dd", null, v));
    row("Validation", validity);
    if (r.error) row("Error", r.error);
    row("Duration", `${r.duration_ms} ms`);
    row("Tokens", fmtTokens(usage));
    row("Cost", fmtCost(usage && usage.cost));
    if (usage && usage.turns) row("Turns", String(usage.turns.length));
    box.append(dl);
    if (r.summary !== undefined) box.append(el("h3", null, "Summary"), el("pre", null, JSON.stringify(r.summary, null, 2)));
    if (r.data !== undefined) box.append(el("h3", null, "Data"), el("pre", "data", JSON.stringify(r.data, null, 2)));
    this.setState(r.success ? "done" : `failed (${r.error_code})`);
    this.result.replaceChildren(box);
    if (r.transcript) renderTranscript(this.result, r.transcript);
  }

  cancelled() {
    this.endApprovals();
    this.setState("cancelled — the server stops the call and records it");
    const box = el("section", "result bad");
    box.setAttribute("data-testid", "result");
    box.append(el("h3", null, "Cancelled"), el("p", null, "You cancelled this run; its final outcome is in the history."));
    this.result.replaceChildren(box);
  }

  failed(text) {
    this.endApprovals();
    this.setState("failed");
    const box = el("section", "result bad");
    box.append(el("h3", null, "The request failed"), el("p", null, text));
    this.result.replaceChildren(box);
  }
}

// Replays a recorded `skill/call/resp` (its events are in `data.events`).
export function replay(container, response) {
  const timeline = new Timeline(container);
  for (const ev of (response.data && response.data.events) || []) timeline.event(Object.assign({ type: "skill/event" }, ev));
  timeline.finish(response);
  return timeline;
}
