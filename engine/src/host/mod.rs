//! Host interfaces: how agent hosts and people reach the engine.
//!
//! - [`endpoint`] — one A2E message in → its answers out, with the protocol-error rules and the
//!   concurrent-call limit; shared by every transport.
//! - [`stdio`] — JSON Lines over stdin/stdout (`skillet serve --stdio`).
//! - [`http`] — `POST /a2e` (JSON or SSE), the Agent Card and `/healthz` on axum
//!   (`skillet serve --http ADDR`).
//! - [`card`] — the A2A Agent Card as served: completed with the endpoint URL, checked.
//! - [`embedded`] — mock-llm in-process, the default model when none is configured.
//! - [`cli`] — the `skillet` binary: commands, progress display, exit codes.
//!
//! Every transport is written against [`crate::service::SkillService`], never against the run
//! loop directly, so each can be tested with any service and embedded behind another host.
//! What a call *means* lives in `run`; the wire types live in `protocol`.

pub mod card;
pub mod cli;
pub mod embedded;
pub mod endpoint;
pub mod http;
pub mod stdio;

pub use endpoint::{Endpoint, Request};
