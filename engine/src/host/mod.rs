//! Host interfaces: how agent hosts and people reach the engine.
//!
//! - [`core`] — the protocol-neutral host core: admission (concurrency limit, in-flight ids),
//!   cancellation, shutdown/drain, event fan-out, one answer per call. Every adapter runs calls
//!   through it.
//! - [`endpoint`] — the A2E adapter: one A2E message in → its answers out, with the
//!   protocol-error rules; shared by the A2E transports.
//! - [`listener`] — the HTTP accept loop: connection cap, header-read and idle timeouts.
//! - [`stdio`] — JSON Lines over stdin/stdout (`skillet serve --stdio`).
//! - [`http`] — `POST /a2e` (JSON or SSE), the Agent Card and `/healthz` on axum
//!   (`skillet serve --http ADDR`).
//! - [`nats`] — NATS JetStream workers and their client (`skillet serve --nats`, `skillet call --nats`).
//! - [`card`] — the A2A Agent Card as served: completed with the endpoint URL, checked.
//! - [`embedded`] — mock-llm in-process, the default model when none is configured.
//! - [`cli`] — the `skillet` binary: commands, progress display, exit codes.
//!
//! Every transport is written against [`crate::service::SkillService`], never against the run
//! loop directly, so each can be tested with any service and embedded behind another host.
//! What a call *means* lives in `run`; the wire types live in `protocol`.

pub mod card;
pub mod cli;
pub mod core;
pub mod embedded;
pub mod endpoint;
pub mod http;
pub mod listener;
pub mod nats;
pub mod stdio;

pub use core::{CallScope, HostCore, Refusal};
pub use endpoint::{Endpoint, Request};
