// The live timeline of one call, built from its A2E messages: a row per turn (from the run's
// `status` "turn N/M · provider/model"), the text the model streams (`artifact` turn-N), tool
// calls and their results (`log` "tool call NAME(ARGS)" / "tool result NAME: ..." / "tool
// error ..."), repair turns ("final answer rejected ..."), the progress bar, then the final
// `skill/call/resp`: outcome, validation, summary, error code, duration, usage and cost.
// Tool calls waiting for approval (`status` with `detail.approval`) are `ApprovalRow`s.
// While a tool call waits for approval, the tab's title starts with "(approval needed)".
// Below the result: the files the run produced as download links, a waterfall of the run's
// time (a bar per model turn and per tool call, `waterfall.js`; drawn live above the result
// while a run of this page goes) and the run's transcript when
// its answer carries one (`transcript.js`). A failed run's box names the turn it failed at and
// why, with a link to that turn.
// The same renderer replays a recorded run from the events kept in its answer.

import { ApprovalRow } from "./approval.js";
import { renderTranscript } from "./transcript.js";
import { renderWaterfall } from "./waterfall.js";
import { fmtMs } from "./format.js";
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
  // `live`: { reqId, approvals, captureContent } for a run of this page (approvals can be
  // decided), else none.
  constructor(container, live) {
    this.live = live;
    this.spans = []; // the waterfall's: {label, kind, start, end}
    this.files = new Map(); // produced files: name -> {mime, chunks, done}
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
    // While a run of this page goes, its waterfall so far (the finished one goes under the
    // result); redrawn every half second, its open bars growing to "now".
    this.liveWaterfall = el("div", "live-waterfall");
    container.append(title, this.state, bar, this.pre, this.turns, this.liveWaterfall, this.result);
    this.ticker = live ? setInterval(() => this.drawLive(), 500) : null;
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
      this.endModel(this.current, ts);
    }
    row.span = { label: `turn ${number}`, kind: "turn", start: ts, turn: number };
    this.spans.push(row.span);
    this.byTurn.set(number, row);
    this.current = row;
    return row;
  }

  showStats(row) {
    const parts = [];
    if (row.duration !== undefined) parts.push(fmtMs(row.duration * 1000));
    if (row.usage) parts.push(fmtTokens(row.usage));
    row.stats.textContent = parts.join(" · ");
  }

  row() {
    return this.current || this.preRow;
  }

  // The model's part of turn `row` ended at `ts` (it answered: tools run, or the next turn).
  endModel(row, ts) {
    if (row && row.span && row.span.end === undefined && ts !== undefined) row.span.end = ts;
  }

  // One A2E message of the call.
  message(msg) {
    if (msg.type === "skill/event") this.event(msg);
    else if (msg.type === "skill/call/resp") this.finish(msg);
  }

  event(ev) {
    this.lastTs = ev.ts;
    this.lastLocal = performance.now();
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
      if (!m && data.name) {
        // A file the run produced: kept whole, offered for download when the run ends.
        const file = this.files.get(data.name) || { mime: data.mime || "", chunks: [], done: false };
        file.chunks.push(data.chunk || "");
        if (data.final) file.done = true;
        this.files.set(data.name, file);
        return;
      }
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

  // The waterfall so far, open spans ending at the server's "now" (its last event's time plus
  // what this page's clock says has passed since).
  drawLive() {
    if (this.lastTs === undefined) return;
    const now = this.lastTs + (performance.now() - this.lastLocal) / 1000;
    const spans = this.spans.map((sp) => Object.assign({}, sp, { end: sp.end === undefined ? now : sp.end }));
    const drawn = renderWaterfall(spans);
    if (drawn) drawn.setAttribute("data-testid", "waterfall-live");
    this.liveWaterfall.replaceChildren(...(drawn ? [drawn] : []));
  }

  // The run ended: no more live waterfall.
  stopLive() {
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = null;
    this.liveWaterfall.replaceChildren();
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
      this.endModel(this.current, this.lastTs);
      details.span = { label: `tool ${m[1]}`, kind: "tool", start: this.lastTs };
      this.spans.push(details.span);
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
      if (details.span && details.span.end === undefined) details.span.end = this.lastTs;
      details.querySelector("summary").textContent += error ? " → error" : " → result";
      details.append(el("div", "muted", error ? "error" : "result"), el("pre", null, pretty(text)));
      return;
    }
    if (/^final answer rejected/.test(message)) {
      this.endModel(this.current, this.lastTs);
      row.li.classList.add("repaired");
      row.body.append(el("p", "repair", `repair: ${message}`));
      return;
    }
    row.body.append(el("p", `log ${level || "info"}`, message));
  }

  // The final answer.
  finish(resp) {
    this.stopLive();
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
    const transcript = r.transcript;
    if (!r.success) box.append(this.whereItFailed(r, transcript));
    const dl = el("dl", "meta");
    const row = (k, v) => dl.append(el("dt", null, k), el("dd", null, v));
    row("Validation", validity);
    if (r.error) row("Error", r.error);
    row("Duration", fmtMs(r.duration_ms));
    row("Tokens", fmtTokens(usage));
    row("Cost", fmtCost(usage && usage.cost));
    if (usage && usage.turns) row("Turns", String(usage.turns.length));
    box.append(dl);
    if (r.summary !== undefined) box.append(el("h3", null, "Summary"), el("pre", null, JSON.stringify(r.summary, null, 2)));
    if (r.data !== undefined) box.append(el("h3", null, "Data"), el("pre", "data", JSON.stringify(r.data, null, 2)));
    this.setState(r.success ? "done" : `failed (${r.error_code})`);
    this.result.replaceChildren(box);
    const files = this.producedFiles();
    if (files) this.result.append(files);
    // The turns' model time as the transcript measured it, where it has it.
    for (const t of (transcript && transcript.turns) || []) {
      const span = this.spans.find((sp) => sp.kind === "turn" && sp.turn === t.turn);
      if (span && span.start !== undefined && t.duration_ms !== undefined) span.end = span.start + t.duration_ms / 1000;
    }
    for (const span of this.spans) if (span.end === undefined) span.end = this.lastTs;
    const waterfall = renderWaterfall(this.spans);
    if (waterfall) this.result.append(waterfall);
    if (transcript) renderTranscript(this.result, transcript, this.container.id);
    if (this.live && this.live.captureContent === false) {
      const note = el("p", "muted note");
      note.setAttribute("data-testid", "not-kept");
      note.textContent = this.live.history
        ? "Not kept: this server records runs without their content ([console] capture_content = false), so the history keeps this run's outcome, model, time and tokens, but not its input, answer or transcript. Set capture_content = true under [console] in skillet.toml to keep them."
        : "Not kept: the run history is off on this server, so this run and its transcript are shown only here. Set history_db under [console] in skillet.toml (and capture_content = true) to keep them.";
      this.result.append(note);
    }
  }

  // The failed run's turn and cause, with a link to that turn.
  whereItFailed(r, transcript) {
    const turns = (transcript && transcript.turns) || [];
    const last = turns.length ? turns[turns.length - 1] : null;
    const number = last ? last.turn : this.current ? Number(this.current.li.dataset.turn) : null;
    const p = el("p", "failed-at");
    p.setAttribute("data-testid", "failed-at");
    if (!number) {
      p.textContent = `It failed before its first turn: ${r.error || r.error_code || "no reason given"}.`;
      return p;
    }
    // The turn's own reason when the transcript has one (the error below says the rest).
    if (last && last.violations && last.violations.length) {
      p.append(`It failed at turn ${number}: that turn's answer was rejected for ${last.violations.join("; ")}. `);
    } else if (last && !last.answer) {
      p.append(`It failed at turn ${number}: the model gave no answer in that turn (${r.error || r.error_code || "no reason given"}). `);
    } else {
      p.append(`It failed at turn ${number}: ${r.error || r.error_code || "no reason given"}. `);
    }
    const link = el("a", "turn-link", `Go to turn ${number}`);
    link.href = `#${this.container.id || "run"}-turn-${number}`;
    link.addEventListener("click", (e) => {
      e.preventDefault(); // the hash is the router's: this link only scrolls
      const target = this.container.querySelector(`details.tx-turn[data-turn="${number}"]`) || (this.byTurn.get(number) || {}).li;
      if (!target) return;
      if (target.tagName === "DETAILS") target.open = true;
      target.scrollIntoView({ block: "start" });
      target.setAttribute("tabindex", "-1");
      target.focus({ preventScroll: true });
    });
    p.append(link);
    return p;
  }

  // The files the run produced, as download links (null when it produced none).
  producedFiles() {
    const done = [...this.files.entries()].filter(([, f]) => f.done);
    if (!done.length) return null;
    const section = el("section", "produced-files");
    section.setAttribute("data-testid", "files");
    section.append(el("h3", null, "Files"));
    const list = el("ul");
    for (const [name, file] of done) {
      const base64 = /;base64$/.test(file.mime);
      const mime = file.mime.replace(/;base64$/, "") || "application/octet-stream";
      let blob;
      try {
        if (base64) {
          const bytes = Uint8Array.from(atob(file.chunks.join("")), (c) => c.charCodeAt(0));
          blob = new Blob([bytes], { type: mime });
        } else blob = new Blob([file.chunks.join("")], { type: mime });
      } catch (_) {
        list.append(el("li", "muted", `${name} (could not be decoded)`));
        continue;
      }
      const li = el("li");
      const a = el("a", null, name);
      a.href = URL.createObjectURL(blob);
      a.download = name.split("/").pop();
      li.append(a, el("span", "muted", ` ${mime}, ${blob.size} bytes`));
      list.append(li);
    }
    section.append(list);
    return section;
  }

  cancelled() {
    this.stopLive();
    this.endApprovals();
    this.setState("cancelled — the server stops the call and records it");
    const box = el("section", "result bad");
    box.setAttribute("data-testid", "result");
    box.append(el("h3", null, "Cancelled"), el("p", null, "You cancelled this run; its final outcome is in the history."));
    this.result.replaceChildren(box);
  }

  failed(text) {
    this.stopLive();
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
