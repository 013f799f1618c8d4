// One tool call waiting for a person, as a row of the timeline: the tool, its arguments (as
// the engine shows them: redacted), how long it has waited, and — on a live run of this page —
// Approve / Deny with an optional reason. The row is drawn from the run's `status` event
// (`detail.approval: "requested"`); its id comes from GET /console/api/approvals (polled until
// the server lists it); the decision is POST /console/api/approvals/ID, and the run's next
// `status` event (`approved` / `denied`) closes the row. A replayed run shows the rows without
// buttons.

import { el } from "./dom.js";

function seconds(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

const POLL_MS = 400;

export class ApprovalRow {
  // `detail`: the requested event's detail; `live`: { reqId, approvals } on a live run.
  constructor(parent, detail, live) {
    this.callId = detail.call_id;
    this.live = live;
    this.done = false;
    const box = el("div", "approval waiting");
    box.setAttribute("data-testid", "approval");
    box.dataset.callId = detail.call_id;
    const head = el("p");
    head.append(el("strong", null, `Approval needed: tool ${detail.tool}`), document.createTextNode(" "));
    this.clock = el("span", "muted", "waiting");
    head.append(this.clock);
    const args = el("pre", null, JSON.stringify(detail.arguments, null, 2));
    this.outcome = el("p", "decision");
    this.outcome.setAttribute("role", "status");
    box.append(head, el("div", "muted", "arguments"), args);
    if (live) {
      this.actions = el("div", "actions");
      this.approve = el("button", "primary", "Approve");
      this.approve.type = "button";
      this.approve.dataset.action = "approve";
      this.reason = el("input");
      this.reason.type = "text";
      this.reason.placeholder = "reason (optional)";
      this.reason.setAttribute("aria-label", `Reason to deny ${detail.tool}`);
      this.reason.maxLength = 1000;
      this.deny = el("button", null, "Deny");
      this.deny.type = "button";
      this.deny.dataset.action = "deny";
      for (const b of [this.approve, this.deny]) b.disabled = true;
      this.actions.append(this.approve, this.reason, this.deny);
      box.append(this.actions);
      this.approve.addEventListener("click", () => this.send("approve"));
      this.deny.addEventListener("click", () => this.send("deny"));
      this.reason.addEventListener("keydown", (e) => {
        if (e.key === "Enter") {
          e.preventDefault();
          this.send("deny");
        }
      });
      this.find();
    }
    box.append(this.outcome);
    this.box = box;
    parent.append(box);
  }

  // Polls the server's list until it names this call (the run parks it right after the event).
  async find() {
    while (!this.done && !this.id) {
      try {
        const mine = await this.live.approvals.list();
        const found = mine.find((a) => a.req_id === this.live.reqId && a.call_id === this.callId);
        if (found) {
          this.id = found.id;
          this.since = performance.now() - found.waiting_ms;
          this.tick();
          this.timer = setInterval(() => this.tick(), 1000);
          for (const b of [this.approve, this.deny]) b.disabled = false;
          this.approve.focus({ preventScroll: true });
          return;
        }
      } catch (e) {
        this.outcome.textContent = `cannot list approvals: ${e.message}`;
        return;
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }

  tick() {
    if (this.since !== undefined) this.clock.textContent = `waiting ${seconds(performance.now() - this.since)}`;
  }

  async send(decision) {
    if (!this.id || this.done) return;
    for (const b of [this.approve, this.deny]) b.disabled = true;
    try {
      await this.live.approvals.decide(this.id, decision, decision === "deny" ? this.reason.value.trim() : "");
      // The run's own event may have closed the row already; it says more.
      if (!this.done) this.outcome.textContent = decision === "approve" ? "approved — the tool runs" : "denied — the model is told";
    } catch (e) {
      if (this.done) return;
      this.outcome.textContent = e.status === 404 ? "this approval no longer waits (decided, or its run stopped waiting)" : `the decision failed: ${e.message}`;
      for (const b of [this.approve, this.deny]) b.disabled = false;
    }
  }

  // The run's `approved` / `denied` event.
  decided(detail) {
    this.done = true;
    clearInterval(this.timer);
    this.box.classList.remove("waiting");
    this.box.classList.add(detail.approval);
    if (this.actions) this.actions.remove();
    const who = detail.by === "policy" ? "by the host's policy" : "by the caller";
    const why = detail.reason ? `: ${detail.reason}` : "";
    this.clock.textContent = "";
    this.outcome.textContent = `${detail.approval} ${who}${why}`;
  }

  // The run ended without a decision (cancelled, deadline).
  ended() {
    if (this.done) return;
    this.done = true;
    clearInterval(this.timer);
    if (this.actions) this.actions.remove();
    this.box.classList.remove("waiting");
    this.outcome.textContent = "the run stopped waiting";
  }
}
