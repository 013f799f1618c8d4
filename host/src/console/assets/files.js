// The run form's input files: a picker whose files are sent base64 under the call's reserved
// `_files` argument (`[{name, base64}]`, which the engine writes into the run's workspace).
// The host's limits (GET /console/api/info `input_files`: count, size per file, size in all,
// request body) are checked here before a byte is read, so a file the server would refuse is
// refused at once with the limit it broke; the server checks again, as for any caller.

import { $ } from "./dom.js";

let limits = null;
let picked = []; // [{name, base64, size}]
let problem = "";

function fmtBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

export function setFileLimits(l) {
  limits = l || null;
  $("files-help").textContent = limits
    ? `up to ${limits.max_files} files, ${fmtBytes(limits.max_file_bytes)} each, ${fmtBytes(limits.max_total_bytes)} in all; a request carries at most ${fmtBytes(limits.max_request_bytes)} (files grow by a third in base64)`
    : "";
}

// What is wrong with `files` under the host's limits, or "".
function check(files) {
  if (!limits) return "";
  if (files.length > limits.max_files) return `${files.length} files; this server takes at most ${limits.max_files}`;
  let total = 0;
  for (const f of files) {
    if (f.size > limits.max_file_bytes) return `${f.name} has ${fmtBytes(f.size)}; the limit is ${fmtBytes(limits.max_file_bytes)} per file`;
    total += f.size;
  }
  if (total > limits.max_total_bytes) return `the files have ${fmtBytes(total)} in all; the limit is ${fmtBytes(limits.max_total_bytes)}`;
  const encoded = Math.ceil(total / 3) * 4;
  if (encoded > limits.max_request_bytes) return `the files make a request of at least ${fmtBytes(encoded)} in base64; this server takes ${fmtBytes(limits.max_request_bytes)}`;
  return "";
}

function base64Of(buffer) {
  const bytes = new Uint8Array(buffer);
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  return btoa(text);
}

function show() {
  const list = $("file-list");
  list.replaceChildren();
  for (const f of picked) {
    const li = document.createElement("li");
    li.textContent = `${f.name} (${fmtBytes(f.size)})`;
    list.append(li);
  }
  $("files-error").textContent = problem;
  $("files-field").classList.toggle("invalid", !!problem);
}

async function onPick() {
  const files = [...$("input-files").files];
  picked = [];
  problem = check(files);
  if (!problem) {
    try {
      picked = await Promise.all(files.map(async (f) => ({ name: f.name, size: f.size, base64: base64Of(await f.arrayBuffer()) })));
    } catch (e) {
      problem = `a file could not be read: ${e.message}`;
    }
  }
  show();
}

export function clearFiles() {
  $("input-files").value = "";
  picked = [];
  problem = "";
  show();
}

// The `_files` to send ([] when none), or undefined when the picked files cannot be sent.
export function inputFiles() {
  if (problem) {
    $("input-files").focus();
    return undefined;
  }
  return picked.map((f) => ({ name: f.name, base64: f.base64 }));
}

export function wireFiles() {
  $("input-files").addEventListener("change", () => {
    onPick();
  });
}
