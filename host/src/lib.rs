//! # skillet-host
//!
//! Host interfaces: how agent hosts and people reach the engine.
//!
//! - [`core`] — the protocol-neutral host core: admission (access rules, concurrency limit, in-flight ids),
//!   cancellation, shutdown/drain, event fan-out, one answer per call. Every adapter runs calls
//!   through it.
//! - [`endpoint`] — the A2E adapter: one A2E message in → its answers out, with the
//!   protocol-error rules; shared by the A2E transports.
//! - [`auth`] — identities (API keys, JWT bearer tokens), what each may run, per-identity
//!   limits and the audit trail; the HTTP layer answering 401.
//! - [`listener`] — the HTTP accept loop: connection cap, header-read and idle timeouts, the
//!   TLS handshake.
//! - [`forwarded`] — `[server] trusted_proxies`: the client's address and origin from
//!   `X-Forwarded-*`, believed only from those peers.
//! - [`origin_guard`] — the `Host`/`Origin` rule in front of every HTTP route (DNS rebinding,
//!   other sites' pages).
//! - [`tls`] — `[server.tls]`: the certificate and key (PEM), rustls, ALPN, reload on SIGHUP.
//! - [`stdio`] — JSON Lines over stdin/stdout (`skillet serve --stdio`).
//! - [`http`] — `POST /a2e` (JSON or SSE), the Agent Card and `/healthz` on axum
//!   (`skillet serve --http ADDR`).
//! - [`a2a`] — the A2A 1.0 JSON-RPC binding (`POST /a2a`, JSON or SSE) with its task store.
//! - [`nats`] — NATS JetStream workers and their client (`skillet serve --nats`, `skillet call --nats`).
//! - [`console`] — the web console at `/` of `serve --http`: the page, its JSON routes and the
//!   run history in SQLite, fed by [`record::CallRecorder`].
//! - [`record`] — what the core tells a recorder about every answered call.
//! - [`approval_desk`] — where a call whose door cannot ask gets an approver elsewhere in the
//!   host (the console's page).
//! - [`skill_changes`] — the feed of skills changed while serving (hot reload), for the doors.
//! - [`card`] — the A2A Agent Card as served: completed with the endpoint URL, checked.
//! - [`metrics_route`] — `GET /metrics` (the registry itself is the engine's).
//! - [`mcp`] — the MCP adapter: skills as MCP tools over stdio (`serve --mcp`) and streamable
//!   HTTP (`/mcp` on `serve --http`).
//!
//! Every adapter maps its protocol onto [`core::HostCore`], which runs calls on a
//! [`skillet_engine::service::SkillService`] — never the run loop directly — so each can be tested with
//! any service and embedded behind another host. A new protocol (A2A JSON-RPC, a queue worker)
//! is one more adapter: decode → `CallScope::admit` → `HostCore::spawn_call` → encode the answer.
//! What a call *means* lives in the engine's `run`; the wire types live in `skillet-protocol`.
//!
//! Not here: the `skillet` binary, its command line and its `skillet.toml` (the `skillet` crate,
//! `cli/`), which builds each adapter's options from the file. No adapter reads the file's
//! types; each takes its own options (`mcp::limits::McpLimits`, `nats::NatsOptions`,
//! `a2a::card::A2aProvider`, ...) with its defaults beside it.

#![warn(missing_docs)]
#![warn(unreachable_pub)]

pub mod a2a;
mod approval_desk;
pub mod auth;
mod card;
pub mod console;
mod core;
mod endpoint;
mod forwarded;
pub mod http;
mod listener;
pub mod mcp;
mod metrics_route;
pub mod nats;
pub mod origin_guard;
mod record;
mod skill_changes;
pub mod stdio;
mod tls;

pub use core::{CallScope, DEFAULT_MAX_CONCURRENT_CALLS, HostCore, Refusal};
pub use endpoint::{Endpoint, Request};
pub use forwarded::TrustedProxies;
pub use listener::ConnectionLimits;
pub use skill_changes::SkillChanges;
pub use tls::{TlsError, TlsFiles, TlsServer};

/// Default largest A2E message, in bytes, on every A2E transport (`[server] max_message_bytes`).
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 1024 * 1024;
