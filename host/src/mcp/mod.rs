//! Skillet as an **MCP server**: every `Published` skill is an MCP tool; `tools/call` runs it
//! through the protocol-neutral [`crate::core::HostCore`], like an A2E call.
//!
//! - `tools` — which skills are tools and their `inputSchema`/`outputSchema`;
//! - `prompts` — every tool's skill as a prompt (`prompts/list`, `prompts/get`);
//! - `completion` — `completion/complete` for prompt arguments and the skill-file template;
//! - `resources` — skill files as `skill://NAME/PATH` resources (`resources/*`);
//! - `skills_ext` — the skills extension (SEP-2640): `skills/list`, `skills/get`;
//! - `approval` — tool-call approval asked of the client by elicitation (`elicitation/create`);
//! - `input_required` — on 2026-07-28, that question as an input-required result (MRTR) whose
//!   retry resumes the run;
//! - `answer` — a call's answer as a `tools/call` result or JSON-RPC error;
//! - `notify` — live events as `notifications/progress` and `notifications/message`;
//! - `notice` — one such notification, as rmcp's type (HTTP) or the stdio line written by hand;
//! - `handler` — the rmcp `ServerHandler` of one session;
//! - `list_changed` — `notifications/{tools,prompts,resources}/list_changed` when the
//!   offered tools, prompts or files change, and `resources/updated` for subscribed URIs of
//!   reloaded skills;
//! - `revision` — which MCP revision a request speaks; the methods 2026-07-28 removed;
//! - `listen` — `subscriptions/listen` (2026-07-28): a request's stream of the changes it asked for;
//! - `subscriptions` — `resources/subscribe` / `unsubscribe`: one session's subscribed URIs;
//! - `tasks` — the Tasks extension's store (SEP-2663): bounded, owner-scoped, in memory or
//!   durable with `[server] state_db`;
//! - `tasks_persist` — the store's rows in the state database and their writer thread;
//! - `tasks_run` — a `tools/call` started as a task, its progress and outcome kept there;
//! - `serve` — stdio (`serve --mcp`) and streamable HTTP (`/mcp` on `serve --http`);
//! - `line_transport` — stdio's transport for rmcp's service: lines in, lines out;
//! - `call_line` — a `tools/call` line read in one typed pass (the rest: rmcp's codec);
//! - `coalesce` — stdio's output, where messages flushed together go out in one write;
//! - `limits` — the caps on `/mcp`'s sessions and standalone streams;
//! - `read_budget` — the bytes of skill files `resources/read` answers at once;
//! - `session_owner` — each `/mcp` session bound to the identity that opened it;
//! - `pre_init` — stdio's filter of messages sent before `initialize`;
//! - `eof_drain` — at the end of stdin, the requests already read are answered first;
//! - `oversize` — stdio lines over `max_message_bytes` are answered (-32600), not dropped.
//!
//! Not here: admission, cancellation and drain (the core), the run loop (`run`).

pub(crate) mod answer;
pub(crate) mod approval;
pub(crate) mod body_check;
pub(crate) mod call_line;
pub(crate) mod coalesce;
pub(crate) mod completion;
pub(crate) mod eof_drain;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub(crate) mod handler;
pub(crate) mod input_required;
pub(crate) mod limits;
pub(crate) mod line_transport;
pub(crate) mod list_changed;
pub(crate) mod listen;
pub(crate) mod notice;
pub(crate) mod notify;
pub(crate) mod oversize;
pub(crate) mod pre_init;
pub(crate) mod prompts;
pub(crate) mod read_budget;
pub(crate) mod resources;
pub(crate) mod revision;
pub(crate) mod serve;
pub(crate) mod session_owner;
pub(crate) mod skills_ext;
pub(crate) mod subscriptions;
pub(crate) mod tasks;
pub(crate) mod tasks_persist;
pub(crate) mod tasks_run;
pub(crate) mod tools;

pub use handler::McpHandler;
pub use limits::{
    DEFAULT_MAX_SESSIONS, DEFAULT_MAX_STREAMS, DEFAULT_MAX_STREAMS_PER_SESSION, McpLimits,
};
pub use serve::{McpHttpOptions, http_router, http_router_with_tasks, serve_stream};
pub use tasks::{McpTasks, TasksReadBack};
