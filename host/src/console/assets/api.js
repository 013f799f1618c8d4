// The console's only door to the server: /console/api/... (JSON) and POST /a2e (SSE).
// The API key (when the server requires one) lives in sessionStorage for this tab only.
// Requests that change state carry the page's same-origin token (its <meta
// name="skillet-console-token">, new with each server process) in X-Skillet-Console-Token.

const KEY = "skillet.console.key";

export class ApiError extends Error {
  constructor(status, body) {
    super((body && body.message) || `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

export function apiKey() {
  return sessionStorage.getItem(KEY) || "";
}

export function setApiKey(key) {
  if (key) sessionStorage.setItem(KEY, key);
  else sessionStorage.removeItem(KEY);
}

function headers(extra) {
  const h = Object.assign({}, extra);
  const key = apiKey();
  if (key) h["Authorization"] = `Bearer ${key}`;
  return h;
}

// Resolves to the decoded JSON of GET `path`, or rejects with an ApiError.
export async function getJson(path) {
  const response = await fetch(path, { headers: headers({ Accept: "application/json" }) });
  let body = null;
  try {
    body = await response.json();
  } catch (_) {
    body = null;
  }
  if (!response.ok) throw new ApiError(response.status, body);
  return body;
}

function consoleToken() {
  const meta = document.querySelector('meta[name="skillet-console-token"]');
  return meta ? meta.content : "";
}

// POSTs `body` as JSON to `path`; resolves to the decoded answer, or rejects with an ApiError.
export async function postJson(path, body) {
  const response = await fetch(path, {
    method: "POST",
    headers: headers({
      "Content-Type": "application/json",
      Accept: "application/json",
      "X-Skillet-Console-Token": consoleToken(),
    }),
    body: JSON.stringify(body),
  });
  let answer = null;
  try {
    answer = await response.json();
  } catch (_) {
    answer = null;
  }
  if (!response.ok) throw new ApiError(response.status, answer);
  return answer;
}

// The caller's tool calls waiting for approval, and a decision on one of them.
export const approvals = {
  list: async () => (await getJson("/console/api/approvals")).approvals,
  decide: (id, decision, reason) =>
    postJson(`/console/api/approvals/${encodeURIComponent(id)}`, reason ? { decision, reason } : { decision }),
};

export function newId() {
  if (globalThis.crypto && crypto.randomUUID) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

// Posts one A2E `skill/call/req` to /a2e and calls `onMessage` with each SSE message (the
// call's `skill/event`s, then its `skill/call/resp`). Aborting `signal` closes the stream,
// which cancels the call on the server (it still answers into the history). The
// `X-Skillet-Console` header makes the run's tool-call approvals wait for this page.
export async function streamCall(request, onMessage, signal) {
  const response = await fetch("/a2e", {
    method: "POST",
    headers: headers({ "Content-Type": "application/json", Accept: "text/event-stream", "X-Skillet-Console": "1" }),
    body: JSON.stringify(request),
    signal,
  });
  if (response.status === 401) throw new ApiError(401, { message: "authentication required" });
  if (!response.body) throw new ApiError(response.status, { message: "no response body" });
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const data = frame
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).replace(/^ /, ""))
        .join("\n");
      if (data) onMessage(JSON.parse(data));
    }
  }
}

// The same request as a curl command line (the key is left as $SKILLET_KEY).
export function asCurl(request) {
  const auth = apiKey() ? ` -H 'Authorization: Bearer '"$SKILLET_KEY"` : "";
  const body = JSON.stringify(request).replace(/'/g, `'\\''`);
  return `curl -N -X POST '${location.origin}/a2e' -H 'Content-Type: application/json' -H 'Accept: text/event-stream'${auth} --data '${body}'`;
}

// The same input as an MCP `tools/call` request (JSON-RPC; POST it to /mcp in a session, or
// send it over `skillet serve --mcp`'s stdin). Input files stay under `_files`.
export function asMcp(request) {
  return { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: request.name, arguments: request.arguments } };
}

// The same input as an A2A 1.0 `SendMessage` request (POST it to /a2a with `A2A-Version: 1.0`):
// the arguments as a data part, each input file as a `raw` part, the skill in `skillId`.
export function asA2a(request) {
  const args = Object.assign({}, request.arguments);
  const files = Array.isArray(args._files) ? args._files : [];
  delete args._files;
  const parts = [{ data: args }];
  for (const f of files) {
    if (f.base64 !== undefined) parts.push({ raw: f.base64, filename: f.name });
    else parts.push({ text: f.text, filename: f.name });
  }
  return {
    jsonrpc: "2.0",
    id: 1,
    method: "SendMessage",
    params: { message: { messageId: newId(), role: "ROLE_USER", metadata: { skillId: request.name }, parts } },
  };
}
