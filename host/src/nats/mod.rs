//! NATS JetStream workers: many `skillet serve --nats` processes share one durable work queue,
//! so calls survive a worker's death and load spreads over machines (`docs/SCALING.md`).
//!
//! - `subjects` — the wire layout: subjects, headers, which ids fit in a subject.
//! - `connect`(mod@connect) — opening a connection from `[nats]` (credentials, reconnect forever).
//! - `store` — the results bucket: one stored answer per request id.
//! - `checkpoints` — the checkpoints bucket: each running call's last checkpoint, so a
//!   redelivered call continues at the turn it reached.
//! - `fit` — an answer kept within the server's `max_payload` before it is stored.
//! - `identity` — who sent a call: its `Authorization` header, verified like HTTP's.
//! - `worker` — the worker adapter over the [`crate::HostCore`].
//! - `stop` — how a worker stops: every step bounded by the grace, server or no server.
//! - `discover` — the worker's responder on the discover subject.
//! - `client` — submit calls, stream events, get answers, discover.
//! - `error` — [`NatsError`].
//!
//! Delivery: execution is at-least-once (a call whose worker dies is run again elsewhere, from
//! its last checkpoint), the
//! stored answer is exactly-once per request id (first stored wins, every later delivery or
//! resubmission replays it), and a call delivered more than `max_deliveries` times is answered
//! `runtime_error` instead of being run again.

pub(crate) mod checkpoints;
pub(crate) mod client;
pub(crate) mod connect;
mod discover;
pub(crate) mod error;
mod fit;
pub(crate) mod identity;
pub(crate) mod options;
mod stop;
pub(crate) mod store;
pub(crate) mod subjects;
pub(crate) mod worker;

pub use options::NatsOptions;

pub use checkpoints::NatsCheckpoints;
pub use client::NatsClient;
pub use connect::{connect, redacted_url};
pub use error::NatsError;
pub use worker::NatsWorker;
