//! # skillet-host
//!
//! Host interfaces: how agent hosts and people reach the engine. Every door maps its protocol
//! onto one protocol-neutral [`HostCore`] — admission (access rules, concurrency limit,
//! in-flight ids), cancellation, shutdown/drain, event fan-out, one answer per call — which runs
//! calls on a `skillet_core::service::SkillService`, never the run loop directly, so each door
//! can be tested with any service and embedded behind another host. A new protocol is one more
//! door: decode → [`CallScope`] admits → `HostCore::spawn_call` → encode the answer.
//!
//! The surface (what `cli/`, the one consumer, and `fuzz/` name):
//! - at the root: the core ([`HostCore`], [`CallScope`], [`Refusal`],
//!   [`DEFAULT_MAX_CONCURRENT_CALLS`]), the A2E adapter the A2E transports share ([`Endpoint`],
//!   [`Request`]), the HTTP edge's parts ([`ConnectionLimits`], [`TrustedProxies`] for
//!   `[server] trusted_proxies`, [`TlsFiles`] / [`TlsServer`] / [`TlsError`] for `[server.tls]`),
//!   the feed of skills changed while serving ([`SkillChanges`]) and
//!   [`DEFAULT_MAX_MESSAGE_BYTES`];
//! - one namespace per door, each with private submodules and a curated `pub use`:
//!   [`stdio`] (JSON Lines, `serve --stdio`), [`http`] (`POST /a2e`, the card, `/healthz`;
//!   `serve --http`), [`a2a`] (A2A 1.0 JSON-RPC and HTTP+JSON with its task store), [`mcp`]
//!   (MCP over stdio and streamable HTTP), [`nats`] (JetStream workers and their client),
//!   [`console`] (the web console, its JSON routes and run history), [`auth`] (API keys, JWT,
//!   grants, per-identity limits) and [`origin_guard`] (the `Host`/`Origin` rule in front of
//!   every HTTP route).
//!
//! Everything else — the accept loop, `X-Forwarded-*`, TLS reload, the call recorder, the
//! approval desk, `/metrics`, the served Agent Card — is private to the crate
//! (`#![warn(unreachable_pub)]` keeps it so). The fuzz targets' entry points (`a2a::fuzzing`,
//! `mcp::fuzzing`) exist only with the `fuzzing` feature, which only `fuzz/` turns on.
//!
//! Not here: the `skillet` binary, its command line and its `skillet.toml` (the `skillet`
//! crate, `cli/`), which builds each door's options from the file; no door reads the file's
//! types. What a call *means* lives in the engine's `run`; the wire types live in
//! `skillet-protocol`.
//!
//! The surface in use: a trusted-proxy list and a site rule parsed as `skillet.toml` gives them.
//!
//! ```
//! use skillet_host::TrustedProxies;
//! use skillet_host::origin_guard::AllowedSites;
//!
//! assert!(TrustedProxies::parse(&["10.0.0.0/8", "::1"]).is_ok());
//! assert!(TrustedProxies::parse(&["not-an-address"]).is_err());
//!
//! let sites = AllowedSites::parse(&["skillet.example"], &["https://app.example"]);
//! assert!(sites.is_ok());
//! let bad = AllowedSites::parse(&["skillet.example"], &["app.example"]).unwrap_err();
//! assert_eq!(bad.setting, "allowed_origins"); // the error names the setting to fix
//! ```

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
mod private_file;
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
