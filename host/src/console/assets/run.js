// The run panel of the skill view: the generated form (or raw JSON), the model override the
// host allows, validation in the browser (nothing is sent while a field is wrong) and again by
// the server (its violations shown at their fields), the run over POST /a2e with SSE into the
// live timeline (whose tool calls waiting for approval are decided here), cancel (closing the
// stream cancels the call), input files (`files.js`), copy as curl / JSON / MCP / A2A. Every
// run asks for its transcript (`metadata.transcript: true`), shown under the result. "Load
// example" fills the form from the skill's `examples/*.json` and its `a2a-examples`.

import { streamCall, newId, asCurl, asMcp, asA2a, approvals, ApiError } from "./api.js";
import { buildForm, validate, serverViolations, isPlain } from "./form.js";
import { Timeline } from "./timeline.js";
import { setFileLimits, inputFiles, clearFiles, wireFiles } from "./files.js";
import { $, el } from "./dom.js";

let current = null; // { skill, form }
let running = null; // AbortController
let info = {};

export function setInfo(i) {
  info = i || {};
  setFileLimits(info.input_files);
  const o = info.model_override;
  $("override").hidden = !o;
  if (!o) return;
  const providers = $("override-provider");
  providers.replaceChildren(new Option("— none —", ""));
  for (const p of o.providers) providers.append(new Option(p, p));
  const bases = $("override-base-url");
  bases.replaceChildren(new Option("default", ""));
  for (const b of o.base_urls) bases.append(new Option(b, b));
  const models = $("override-models");
  models.replaceChildren();
  for (const m of o.models) if (!/[*?[]/.test(m)) models.append(new Option(m, m));
}

function mode() {
  return document.querySelector('input[name="mode"]:checked').value;
}

// The examples offered for `skill`: its `examples/*.json` ({name, arguments}) and, for a plain
// skill or when they are JSON objects, its `a2a-examples` (request texts).
function examplesOf(skill, files) {
  const offered = (files || []).map((e) => ({ label: e.name, arguments: e.arguments }));
  const a2a = (skill.metadata && skill.metadata.a2a && skill.metadata.a2a.examples) || [];
  (Array.isArray(a2a) ? a2a : []).forEach((text, i) => {
    if (typeof text !== "string") return;
    let parsed;
    try {
      parsed = JSON.parse(text);
    } catch (_) {
      parsed = undefined;
    }
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) offered.push({ label: `a2a-examples ${i + 1}`, arguments: parsed });
    else if (isPlain(skill.input_schema)) offered.push({ label: text.length > 60 ? `${text.slice(0, 59)}…` : text, arguments: { prompt: text } });
  });
  return offered;
}

// Fills the form (or, for arguments the form cannot hold, the raw JSON) with `args`.
function loadExample(example) {
  const args = example.arguments;
  const files = Array.isArray(args._files) ? args._files : [];
  const plain = isPlain(current.skill.input_schema);
  current.form.clearErrors();
  $("form-error").textContent = "";
  $("raw-json").value = JSON.stringify(args, null, 2);
  if (files.length && !plain) {
    setMode("json"); // the form has no place for `_files`: the raw JSON carries them
  } else {
    current.form.set(args);
    setMode("form");
  }
  const names = files.map((f) => f && f.name).filter(Boolean);
  $("example-note").textContent = `Loaded ${example.label}${names.length ? ` (with its file${names.length > 1 ? "s" : ""} ${names.join(", ")})` : ""}.`;
}

function showExamples(skill, files) {
  const offered = examplesOf(skill, files);
  const box = $("examples");
  box.hidden = !offered.length;
  const list = $("example-list");
  list.replaceChildren();
  $("example-note").textContent = "";
  for (const example of offered) {
    const b = el("button", "quiet example", example.label);
    b.type = "button";
    b.dataset.example = example.label;
    b.title = JSON.stringify(example.arguments);
    b.addEventListener("click", () => loadExample(example));
    list.append(b);
  }
}

// `native`: the skill has no SKILL.md (code answers it, with no workspace for input files).
// `examples`: the skill's `examples/*.json` as the server read them.
export function prepareRun(skill, args, native, examples) {
  const schema = skill.input_schema || {};
  const form = buildForm(schema, $("form-fields"));
  current = { skill, form };
  if (args) form.set(args);
  $("raw-json").value = JSON.stringify(args || form.get(), null, 2);
  $("raw-json-error").textContent = "";
  $("form-error").textContent = "";
  $("copy-box").hidden = true;
  $("run-timeline").hidden = true;
  clearFiles();
  // Input files reach every SKILL.md skill: a call that brings files gets the workspace tools
  // to read them (docs/SKILL_FORMAT.md), whatever its input schema says. A native skill has no
  // workspace, so it gets no picker.
  $("files-field").hidden = Boolean(native);
  showExamples(skill, examples);
  const published = skill.status === "Published";
  $("run-button").disabled = !published;
  $("run-button").title = published ? "" : `a ${skill.status} skill does not run`;
  setMode("form");
}

function setMode(m) {
  document.querySelector(`input[name="mode"][value="${m}"]`).checked = true;
  $("form-fields").hidden = m !== "form";
  $("json-field").hidden = m !== "json";
}

function switchMode(to) {
  if (!current) return;
  if (to === "json") {
    $("raw-json").value = JSON.stringify(current.form.get(), null, 2);
    setMode("json");
  } else {
    const parsed = parseRaw();
    if (parsed === undefined) {
      setMode("json");
      return;
    }
    current.form.set(parsed);
    setMode("form");
  }
}

function parseRaw() {
  $("raw-json-error").textContent = "";
  try {
    const v = JSON.parse($("raw-json").value || "{}");
    if (!v || typeof v !== "object" || Array.isArray(v)) throw new Error("arguments must be a JSON object");
    return v;
  } catch (e) {
    $("raw-json-error").textContent = `not a JSON object: ${e.message}`;
    return undefined;
  }
}

function collect() {
  return mode() === "json" ? parseRaw() : current.form.get();
}

// `args` with the picked input files under `_files` (added to any the raw JSON names), or
// undefined when they cannot be sent. Checked against the schema before: `_files` is no input.
function withFiles(args) {
  const files = inputFiles();
  if (files === undefined) return undefined;
  if (!files.length) return args;
  const given = Array.isArray(args._files) ? args._files : [];
  return Object.assign({}, args, { _files: given.concat(files) });
}

function withoutFiles(args) {
  const rest = Object.assign({}, args);
  delete rest._files;
  return rest;
}

function llmOverride() {
  const o = info.model_override;
  if (!o) return undefined;
  const provider = $("override-provider").value;
  const model = $("override-model").value.trim();
  if (!provider && !model) return undefined;
  const config = {};
  if (model) config.model = model;
  if ($("override-base-url").value) config.base_url = $("override-base-url").value;
  return { provider_name: provider || (o.providers[0] || "openai"), provider_config: config };
}

function request(args) {
  const req = { type: "skill/call/req", id: newId(), name: current.skill.name, arguments: args, streaming: true, metadata: { transcript: true } };
  const o = llmOverride();
  if (o) req.llm_override = o;
  return req;
}

// Shows `errors` at their fields (form mode) or under the JSON (raw mode).
function showErrors(errors) {
  current.form.clearErrors();
  const left = mode() === "form" ? current.form.showErrors(errors) : errors.map((e) => `${e.path || "(root)"}: ${e.message}`);
  $("form-error").textContent = left.length ? left.join("; ") : errors.length ? `${errors.length} field${errors.length > 1 ? "s" : ""} to fix` : "";
}

async function run(event) {
  event.preventDefault();
  if (!current || running) return;
  const args = collect();
  if (args === undefined) return;
  const errors = validate(current.skill.input_schema || {}, withoutFiles(args));
  showErrors(errors);
  if (errors.length) return;
  const sent = withFiles(args);
  if (sent === undefined) return;
  const req = request(sent);
  const timeline = new Timeline($("run-timeline"), { reqId: req.id, approvals, captureContent: Boolean(info.capture_content), history: Boolean(info.history) });
  $("run-timeline").scrollIntoView({ block: "start" });
  running = new AbortController();
  $("run-button").disabled = true;
  $("cancel-button").hidden = false;
  try {
    await streamCall(req, (msg) => {
      timeline.message(msg);
      if (msg.type === "skill/call/resp" && msg.error && msg.error.code === "schema_violation") {
        showErrors(serverViolations(msg.error.message));
      }
    }, running.signal);
  } catch (e) {
    if (e.name === "AbortError") timeline.cancelled();
    else if (e instanceof ApiError && e.status === 401) {
      timeline.failed("authentication required: set an API key");
      document.dispatchEvent(new CustomEvent("skillet:auth"));
    } else timeline.failed(e.message);
  } finally {
    running = null;
    $("run-button").disabled = false;
    $("cancel-button").hidden = true;
  }
}

function copy(text) {
  const box = $("copy-box");
  box.hidden = false;
  box.value = text;
  box.select();
  if (navigator.clipboard && navigator.clipboard.writeText) navigator.clipboard.writeText(text).catch(() => {});
}

export function wireRun() {
  $("run-form").addEventListener("submit", run);
  $("cancel-button").addEventListener("click", () => running && running.abort());
  document.querySelectorAll('input[name="mode"]').forEach((r) => r.addEventListener("change", () => switchMode(r.value)));
  $("copy-curl").addEventListener("click", () => {
    const args = collect();
    const sent = args === undefined ? undefined : withFiles(args);
    if (sent !== undefined) copy(asCurl(request(sent)));
  });
  const copies = { "copy-json": (r) => JSON.stringify(r, null, 2), "copy-mcp": (r) => JSON.stringify(asMcp(r), null, 2), "copy-a2a": (r) => JSON.stringify(asA2a(r), null, 2) };
  for (const [id, render] of Object.entries(copies)) {
    $(id).addEventListener("click", () => {
      const args = collect();
      const sent = args === undefined ? undefined : withFiles(args);
      if (sent !== undefined) copy(render(request(sent)));
    });
  }
  wireFiles();
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && running) running.abort();
  });
}
