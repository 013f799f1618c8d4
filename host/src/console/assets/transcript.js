// A run's transcript (`data.transcript` of its answer, recorded when the call asked with
// `metadata.transcript: true`): the system prompt once, collapsed, then per turn a collapsible
// section with what that turn sent, the model's answer (JSON pretty-printed when it parses),
// its tool calls with their arguments, the violations that made the answer be rejected, and the
// turn's time and tokens. After a rejected turn, its answer and the repaired one (the next
// turn's) side by side with the violations between them. Every text is run data — hostile
// input — so it is set as text only.
//
// Not here: the live timeline built from the call's events (`timeline.js`), which this follows.

import { el } from "./dom.js";
import { fmtMs } from "./format.js";

// `text` pretty-printed when it is JSON, or a fenced ```json block holding JSON; else as is.
function prettyText(text) {
  const fenced = /^\s*```[a-zA-Z]*\s*\n([\s\S]*?)\n\s*```\s*$/.exec(text || "");
  for (const candidate of fenced ? [text, fenced[1]] : [text]) {
    try {
      const value = JSON.parse(candidate);
      if (value !== null && typeof value === "object") return JSON.stringify(value, null, 2);
    } catch (_) {
      // not JSON: shown as written
    }
  }
  return text || "";
}

function tokens(turn) {
  const i = turn.input_tokens;
  const o = turn.output_tokens;
  if (i === undefined && o === undefined) return "";
  return `${i ?? "?"} in / ${o ?? "?"} out tokens`;
}

function toolCalls(calls) {
  const list = el("ul", "tool-calls");
  for (const call of calls) {
    const li = el("li");
    li.append(el("span", "muted", "tool call "), el("strong", null, call.name), el("span", "muted", ` (${call.id})`));
    li.append(el("pre", null, JSON.stringify(call.arguments, null, 2)));
    list.append(li);
  }
  return list;
}

// One message: who it is from, its text, its tool calls.
function message(msg, label) {
  const box = el("div", `msg role-${msg.role || "user"}`);
  box.dataset.role = msg.role || "user";
  let who = label || msg.role || "user";
  if (msg.role === "tool") who = `tool result${msg.tool ? `: ${msg.tool}` : ""}${msg.call_id ? ` (${msg.call_id})` : ""}`;
  const head = el("div", "msg-head", who);
  if (msg.is_error) {
    box.classList.add("error");
    head.append(el("span", "badge bad", "error"));
  }
  if (msg.truncated) head.append(el("span", "badge warn", "cut"));
  box.append(head);
  if (msg.text) box.append(el("pre", null, msg.role === "user" ? msg.text : prettyText(msg.text)));
  if (msg.tool_calls && msg.tool_calls.length) box.append(toolCalls(msg.tool_calls));
  return box;
}

function turnSection(turn, last, idPrefix) {
  const details = el("details", "tx-turn");
  details.id = `${idPrefix}-turn-${turn.turn}`;
  details.dataset.turn = String(turn.turn);
  const rejected = turn.violations && turn.violations.length;
  if (rejected) details.classList.add("rejected");
  // The last turn (the one that answered) and every rejected one start open.
  details.open = Boolean(rejected || last);
  const summary = el("summary");
  summary.append(el("strong", null, `turn ${turn.turn}`));
  const facts = [turn.duration_ms === undefined ? "" : fmtMs(turn.duration_ms), tokens(turn)].filter(Boolean).join(" · ");
  if (facts) summary.append(el("span", "muted", ` · ${facts}`));
  if (rejected) summary.append(el("span", "badge bad", `answer rejected (${turn.violations.length} violation${turn.violations.length > 1 ? "s" : ""})`));
  else if (!turn.answer) summary.append(el("span", "badge bad", "no answer"));
  details.append(summary);
  if (turn.sent && turn.sent.length) {
    details.append(el("h4", null, "Sent"));
    for (const m of turn.sent) details.append(message(m));
  }
  if (turn.answer) {
    details.append(el("h4", null, "Answer"));
    details.append(message(turn.answer, "model"));
  }
  if (rejected) {
    const box = el("div", "violations");
    box.setAttribute("role", "note");
    box.append(el("strong", null, "Rejected as the final answer:"));
    const list = el("ul");
    for (const v of turn.violations) list.append(el("li", null, v));
    box.append(list);
    details.append(box);
  }
  return details;
}

// The text of a model answer as the comparison shows it.
function answerText(msg) {
  if (!msg) return "(no answer)";
  const calls = (msg.tool_calls || []).map((c) => `tool call ${c.name} ${JSON.stringify(c.arguments)}`);
  return [msg.text ? prettyText(msg.text) : "", ...calls].filter(Boolean).join("\n") || "(empty)";
}

// The rejected answer of `rejected`, its violations, and the answer of `repaired` (the next
// turn), side by side.
function repairComparison(rejected, repaired) {
  const box = el("div", "repair-compare");
  box.setAttribute("data-testid", "repair");
  box.setAttribute("role", "group");
  box.setAttribute("aria-label", `repair of turn ${rejected.turn}`);
  const column = (cls, title, child) => {
    const col = el("div", `rc-col ${cls}`);
    col.append(el("h4", null, title), child);
    return col;
  };
  const list = el("ul");
  for (const v of rejected.violations) list.append(el("li", null, v));
  box.append(
    column("rc-rejected", `Rejected (turn ${rejected.turn})`, el("pre", null, answerText(rejected.answer))),
    column("rc-violations", `Violation${rejected.violations.length > 1 ? "s" : ""}`, list),
    column("rc-repaired", repaired ? `Repaired (turn ${repaired.turn})` : "Not repaired", el("pre", null, repaired ? answerText(repaired.answer) : "(no further turn: the run ended)")),
  );
  return box;
}

// Renders `transcript` into a new section appended to `container`; returns the section. Turn
// sections get the ids `ID_PREFIX-turn-N`.
export function renderTranscript(container, transcript, idPrefix) {
  const section = el("section", "transcript");
  section.setAttribute("data-testid", "transcript");
  section.append(el("h3", null, "Transcript"));
  if (transcript.truncated) section.append(el("p", "muted", "Some texts were cut or left out: the transcript keeps at most 16 Ki characters a text and 1 Mi in all."));
  const system = el("details", "tx-system");
  system.append(el("summary", null, "System prompt"), el("pre", null, transcript.system || "(empty)"));
  section.append(system);
  const turns = transcript.turns || [];
  turns.forEach((t, i) => {
    section.append(turnSection(t, i === turns.length - 1, idPrefix || "tx"));
    if (t.violations && t.violations.length) section.append(repairComparison(t, turns[i + 1]));
  });
  container.append(section);
  return section;
}
