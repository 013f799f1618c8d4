//! The A2A 1.0 JSON-RPC, HTTP+JSON and gRPC bindings: A2A clients (the `a2a-sdk`, agent
//! frameworks) run skills as A2A tasks over `POST /a2a`, the REST routes under `/a2a/rest` or
//! the gRPC service `lf.a2a.v1.A2AService` on `skillet serve --http`. One more adapter over the
//! [`super::core::HostCore`], next to A2E and MCP: admission, cancellation, drain and one
//! answer per call are the core's.
//!
//! - `wire` — the A2A data objects (ProtoJSON shape) and method params;
//! - `jsonrpc` — JSON-RPC 2.0 envelopes and the A2A error codes;
//! - `parts` — a message's required id and its parts (data, text, files) sorted;
//! - `input` — which skill a message selects and its arguments;
//! - `list_tasks` — `ListTasks`: filters, pages, `historyLength`;
//! - `version` — the `A2A-Version` check and which methods stream;
//! - `continuation` — multi-turn tasks: a tool call's approval asked in `INPUT_REQUIRED`,
//!   answered by a message with the `taskId`;
//! - `store` — the bounded in-memory task store and its live subscriptions;
//! - `persist` — with `[server] state_db`, the store's tasks written through to SQLite and
//!   read back at start-up;
//! - `write_through` — one table of that database written by its own thread, change by change
//!   (the MCP Tasks' and the push configs');
//! - `checkpoints` — the checkpoints of A2A task runs in the same database;
//! - `resume` — what a restart does with the tasks it found running;
//! - `projection` — a skill run's events and outcome as task updates;
//! - `repeats` — which task a recent message started, so a message sent again runs nothing;
//! - `refusals` — refusals that never say whether a skill or task exists for someone else;
//! - `methods` — the A2A methods on top of the core and the store;
//! - `push` — push notifications: the config methods, the webhook allowlist, delivery;
//! - `http` — the axum route, the `A2A-Version` check, JSON or SSE answers;
//! - `rest` — the HTTP+JSON binding: its routes mapped onto the same methods;
//! - `grpc` — the gRPC binding: `a2a.proto`'s messages mapped onto the same methods;
//! - `card` — the Agent Card with the three interfaces and the capabilities.

pub(crate) mod card;
pub(crate) mod checkpoints;
pub(crate) mod continuation;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub(crate) mod grpc;
pub(crate) mod http;
pub(crate) mod input;
pub(crate) mod jsonrpc;
pub(crate) mod list_tasks;
pub(crate) mod methods;
pub(crate) mod parts;
pub(crate) mod persist;
pub(crate) mod projection;
pub(crate) mod push;
pub(crate) mod refusals;
mod reopen;
pub(crate) mod repeats;
pub(crate) mod rest;
pub(crate) mod resume;
pub(crate) mod store;
pub(crate) mod version;
pub(crate) mod wire;
pub(crate) mod write_through;

use std::sync::Arc;

use axum::Router;

pub use card::{A2aCardService, A2aProvider};
pub use checkpoints::SqliteCheckpoints;
pub use http::{JSONRPC_PATH, router as jsonrpc_router};
pub use methods::A2aAdapter;
pub use persist::{Interrupted, StateDb, StateDbError};
pub use push::{PushAllow, PushAllowError, PushOptions};
pub use reopen::durable_store;
pub use store::{StoreLimits, TaskStore};

use super::core::HostCore;

/// The binding's routes over `core`, keeping tasks within `limits`; request bodies over
/// `max_body_bytes` are refused.
pub fn router(core: HostCore, limits: StoreLimits, max_body_bytes: usize) -> Router {
    let adapter = A2aAdapter::new(core, Arc::new(TaskStore::new(limits)));
    http::router(adapter, max_body_bytes)
}
